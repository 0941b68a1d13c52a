#include "tests/support/harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace gauntlet::test {
namespace fs = std::filesystem;
using nlohmann::json;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "gauntlet-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!getenv("GAUNTLET_KEEP_TEST_DIRS")) fs::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  fs::create_directories(fs::path(p).parent_path());
  std::ofstream(p) << content;
  return p;
}

std::string GauntletBin() {
  if (const char* b = getenv("GAUNTLET_BIN")) return b;
  return std::string(GAUNTLET_SOURCE_DIR) + "/build/bin/gauntlet";
}

std::string SourceDir() {
  if (const char* s = getenv("GAUNTLET_SOURCE_DIR")) return s;
  return GAUNTLET_SOURCE_DIR;
}

std::string FixtureSuites() { return SourceDir() + "/tests/fixtures/suites"; }

bool ProcessAlive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

nlohmann::json CountingValues(int n) {
  nlohmann::json v = nlohmann::json::array();
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  return v;
}

Child::Child(std::vector<std::string> argv, const std::string& log_path, std::vector<std::string> extra_env)
    : log_(log_path) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    setpgid(0, 0);
    for (auto& e : extra_env) putenv(e.data());
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Child::~Child() {
  if (Running()) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }
}

void Child::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

bool Child::Running() {
  if (pid_ <= 0 || status_ != -1) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

int Child::Wait(std::chrono::milliseconds timeout) {
  if (!WaitFor([&] { return !Running(); }, timeout)) return -1;
  return status_;
}

std::string Child::Log() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  auto delay = std::chrono::milliseconds(2);
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() > until) return pred();
    std::this_thread::sleep_for(delay);  // polling a condition, with a deadline
    delay = std::min(delay * 2, std::chrono::milliseconds(50));
  }
}

Daemon::Daemon(const std::string& dir, const std::string& suites_dir, std::vector<std::string> extra)
    : dir_(dir), suites_(suites_dir), extra_(std::move(extra)) {
  Start();
}

Daemon::~Daemon() {
  if (child_ && child_->Running()) Stop();
}

void Daemon::Start() {
  const std::string port_file = dir_ + "/port";
  std::error_code ec;
  fs::remove(port_file, ec);
  std::vector<std::string> argv = {GauntletBin(), "serve", "--db", db(), "--suites", suites_,
                                   "--listen", "127.0.0.1:" + std::to_string(port_), "--port-file", port_file};
  for (auto& e : extra_) argv.push_back(e);
  child_ = std::make_unique<Child>(argv, dir_ + "/daemon.log");
  ++starts_;
  bool up = WaitFor([&] { return fs::exists(port_file) || !child_->Running(); }, std::chrono::seconds(30));
  if (!up || !fs::exists(port_file)) {
    ADD_FAILURE() << "daemon did not start:\n" << child_->Log();
    return;
  }
  std::ifstream(port_file) >> port_;
}

void Daemon::Kill() {
  child_->Signal(SIGKILL);
  child_->Wait(std::chrono::seconds(10));
}

int Daemon::Stop() {
  child_->Signal(SIGTERM);
  return child_->Wait(std::chrono::seconds(30));
}

net::ClientResponse Daemon::Get(const std::string& target, const std::string& token) {
  net::Client c(url(), token);
  auto r = c.Send("GET", target, "", "application/json", request_timeout_);
  if (!r.ok()) {
    ADD_FAILURE() << "GET " << target << ": " << r.status().message();
    return {};
  }
  return *r;
}

net::ClientResponse Daemon::Post(const std::string& target, const std::string& body, const std::string& token) {
  net::Client c(url(), token);
  auto r = c.Send("POST", target, body, "application/json", request_timeout_);
  if (!r.ok()) {
    ADD_FAILURE() << "POST " << target << ": " << r.status().message();
    return {};
  }
  return *r;
}

json Daemon::GetJson(const std::string& target) {
  auto r = Get(target);
  EXPECT_EQ(r.status, 200) << target << ": " << r.body;
  return json::parse(r.body, nullptr, false);
}

json Daemon::PostJson(const std::string& target, const json& body, int expect_status) {
  auto r = Post(target, body.dump());
  EXPECT_EQ(r.status, expect_status) << target << ": " << r.body;
  return json::parse(r.body, nullptr, false);
}

json Daemon::WaitSweep(int64_t sweep, std::chrono::milliseconds timeout) {
  json last;
  // Each poll may wait for its answer as long as the whole wait may: a poll queued behind a flood of
  // reads (load_test) that gave up after the client's default 30 s would join the back of the queue
  // again, and on a loaded machine no poll would ever be answered.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool done = WaitFor(
      [&] {
        net::Client c(url(), "");
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        auto r = c.Send("GET", "/api/v1/sweeps/" + std::to_string(sweep), "", "application/json",
                        std::max(left, std::chrono::milliseconds(1000)));
        if (!r.ok() || r->status != 200) return false;
        last = json::parse(r->body);
        return last["finished"].get<bool>();
      },
      timeout);
  EXPECT_TRUE(done) << "sweep " << sweep << " did not finish: " << last.dump();
  return last;
}

std::unique_ptr<Child> StartWorker(const std::string& dir, const std::string& server, const std::string& name,
                                   const json& inventory, std::vector<std::string> extra) {
  const std::string inv = dir + "/" + name + ".inventory.json";
  std::ofstream(inv) << inventory.dump();
  std::vector<std::string> argv = {GauntletBin(), "worker", "--server", server, "--name", name, "--inventory", inv,
                                   "--workdir", dir + "/work-" + name, "--preflight", "off", "--wait-s", "5"};
  for (auto& e : extra) argv.push_back(e);
  return std::make_unique<Child>(argv, dir + "/" + name + ".log");
}

}  // namespace gauntlet::test
