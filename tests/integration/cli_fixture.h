// The fixture of cli_test (its tests are in several files, one suite): the real `gauntlet` binary run
// with its output captured, against one daemon and one CPU worker on loopback shared by every test.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/harness.h"

extern char** environ;

namespace gauntlet::test {
using nlohmann::json;

// A server where nothing listens: port 1 is privileged and never bound by the tests.
inline const std::string kNowhere = "http://127.0.0.1:1";

struct Out {
  int code = -1;
  std::string out, err;
};

inline std::string ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();  // CSV ends its lines with CRLF (RFC 4180)
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

// Runs a program with stdout and stderr captured. The environment is the test's, minus anything
// that would leak the developer's own gauntlet settings into the test (GAUNTLET_*, HOME), plus `env`.
inline Out RunProgram(const TempDir& dir, std::vector<std::string> argv, std::vector<std::string> env = {},
               const std::string& stdin_text = "", std::chrono::seconds timeout = std::chrono::seconds(60)) {
  static int n = 0;  // one counter for every file of the test: inline, so shared
  const std::string base = dir.path() + "/run" + std::to_string(++n);
  std::ofstream(base + ".in") << stdin_text;
  std::vector<std::string> envs;
  auto overridden = [&](const std::string& kv) {
    for (auto& e : env)
      if (kv.compare(0, e.find('=') + 1, e, 0, e.find('=') + 1) == 0) return true;
    return false;
  };
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("GAUNTLET_", 0) == 0 || kv.rfind("HOME=", 0) == 0 || kv.rfind("XDG_CONFIG_HOME=", 0) == 0 ||
        overridden(kv))
      continue;
    envs.push_back(kv);
  }
  envs.push_back("HOME=" + dir.path() + "/home");
  for (auto& e : env) envs.push_back(e);
  pid_t pid = fork();
  if (pid == 0) {
    int in = open((base + ".in").c_str(), O_RDONLY);
    int out = open((base + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open((base + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : envs) e.push_back(s.data());
    e.push_back(nullptr);
    execve(a[0], a.data(), e.data());
    _exit(127);
  }
  Out o;
  int status = 0;
  bool exited = WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ADD_FAILURE() << "timed out: " << argv[1];
  }
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = ReadFile(base + ".out");
  o.err = ReadFile(base + ".err");
  return o;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    d_ = new Daemon(dir_->path(), SourceDir() + "/tests/fixtures/suites");
    // Two trials at once, so progress is seen moving rather than jumping to the end.
    worker_ = StartWorker(dir_->path(), d_->url(), "cpu-node", json::object(), {"--max-trials", "2"}).release();
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete d_;
    delete dir_;
  }
  // `gauntlet ARGS...` with GAUNTLET_SERVER pointing at the test daemon.
  Out G(std::vector<std::string> args, std::vector<std::string> env = {}, const std::string& in = "") {
    args.insert(args.begin(), GauntletBin());
    env.push_back("GAUNTLET_SERVER=" + d_->url());
    return RunProgram(*dir_, args, env, in);
  }
  std::string Write(const std::string& name, const json& j) { return dir_->Write(name, j.dump()); }

  // ~/.config/gauntlet/config (RunProgram's HOME) with `text` while it lives. Removed after, since
  // every later run would read it: a token left in it would reach tests that expect none.
  struct ConfigFile {
    explicit ConfigFile(const std::string& text) {
      std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      std::ofstream(path) << text;
    }
    ~ConfigFile() { std::filesystem::remove(path); }
    const std::string path = dir_->path() + "/home/.config/gauntlet/config";
  };

  // A daemon that requires tokens, and a `submit` token it accepts (made by `gauntlet token`).
  struct Secured {
    TempDir dir;  // declared first: it outlives the daemon that keeps its database there
    std::string token;
    std::unique_ptr<Daemon> daemon;
  };
  // Fatal failures stay in here: callers wrap it in ASSERT_NO_FATAL_FAILURE.
  static void StartSecured(std::unique_ptr<Secured>* out) {
    auto s = std::make_unique<Secured>();
    Out tok = RunProgram(*dir_, {GauntletBin(), "token", "--role", "submit"});
    ASSERT_EQ(tok.code, 0);
    auto tl = Lines(tok.out);
    ASSERT_GE(tl.size(), 2u) << tok.out;
    s->token = tl[0].substr(tl[0].find(": ") + 2);
    const std::string line = tl[1].substr(tl[1].find(": ") + 2);
    std::ofstream(s->dir.path() + "/tokens") << line << "\n";
    s->daemon = std::make_unique<Daemon>(s->dir.path(), SourceDir() + "/tests/fixtures/suites",
                                         std::vector<std::string>{"--tokens", s->dir.path() + "/tokens"});
    *out = std::move(s);
  }

  // One daemon and worker for every test of the suite, whichever file it is in.
  inline static TempDir* dir_ = nullptr;
  inline static Daemon* d_ = nullptr;
  inline static Child* worker_ = nullptr;
};

}  // namespace gauntlet::test
