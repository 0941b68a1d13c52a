// The `gauntlet` command line as people and CI jobs run it: the real binary against a real daemon
// and worker on loopback. Exit codes of `submit --wait`, every output format, one-line API errors,
// server/token resolution (flag, environment, config file), completion, --help, the example suites.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "tests/support/harness.h"

extern char** environ;

namespace gauntlet::test {
namespace {
using nlohmann::json;

// A server where nothing listens: port 1 is privileged and never bound by the tests.
const std::string kNowhere = "http://127.0.0.1:1";

struct Out {
  int code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

// Runs a program with stdout and stderr captured. The environment is the test's, minus anything
// that would leak the developer's own gauntlet settings into the test (GAUNTLET_*, HOME), plus `env`.
Out RunProgram(const TempDir& dir, std::vector<std::string> argv, std::vector<std::string> env = {},
               const std::string& stdin_text = "", std::chrono::seconds timeout = std::chrono::seconds(60)) {
  static int n = 0;
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

  static TempDir* dir_;
  static Daemon* d_;
  static Child* worker_;
};
TempDir* CliTest::dir_ = nullptr;
Daemon* CliTest::d_ = nullptr;
Child* CliTest::worker_ = nullptr;

TEST_F(CliTest, SubmitWaitExitsZeroWhenEveryTrialPassedOrWasSkipped) {
  auto f = Write("pass.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {"a", "b"}}}}});
  Out o = G({"submit", f, "--wait"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  auto lines = Lines(o.out);
  ASSERT_GE(lines.size(), 2u) << o.out;
  // Not a terminal: the submission, then one JSON line per change, the last one finished.
  json first = json::parse(lines[0]);
  EXPECT_EQ(first["trials"], 2);
  json last = json::parse(lines.back());
  EXPECT_TRUE(last["finished"].get<bool>());
  EXPECT_EQ(last["by_verdict"]["passed"], 2);
  EXPECT_EQ(last["sweep"], first["id"]);
}

TEST_F(CliTest, SubmitWaitExitsOneWhenATrialFailed) {
  // YAML input, from stdin.
  Out o = G({"submit", "-", "--wait"}, {},
            "suite: fixture-cmd\nparameters:\n  mode: [pass, fail]\n  tag: [yamlfail]\nprune: false\n");
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  json last = json::parse(Lines(o.out).back());
  EXPECT_EQ(last["by_verdict"]["crashed"], 1);
  EXPECT_EQ(last["by_verdict"]["passed"], 1);
}

TEST_F(CliTest, SubmitWaitShowsProgressAsTrialsFinish) {
  // Six one-second trials, two at a time: the follower sees the count move, in order.
  auto f = Write("slow.json", {{"suite", "fixture-cmd"},
                               {"parameters", {{"mode", {"sleep"}}, {"seconds", {"1"}}, {"tag", {"p1", "p2", "p3", "p4", "p5", "p6"}}}},
                               {"reuse", false}});
  Out o = G({"submit", f, "--wait"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  auto lines = Lines(o.out);
  ASSERT_GE(lines.size(), 3u) << o.out;
  int64_t prev = -1;
  for (size_t i = 1; i < lines.size(); ++i) {
    json j = json::parse(lines[i]);
    EXPECT_GE(j["done"].get<int64_t>(), prev) << o.out;
    prev = j["done"].get<int64_t>();
    EXPECT_EQ(j["finished"].get<bool>(), i + 1 == lines.size()) << o.out;
    EXPECT_TRUE(j.contains("eta_s"));
  }
  EXPECT_LT(json::parse(lines[1])["done"].get<int64_t>(), 6) << "the first line came after the end: " << o.out;
  EXPECT_EQ(prev, 6);
}

TEST_F(CliTest, SubmitRefusedByTheDaemonExitsTwoWithOneLineNamingTheField) {
  auto bad = Write("bad.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"teleport"}}}}});
  Out o = G({"submit", bad, "--wait"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(Lines(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.err.find("422"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("parameters.mode"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST_F(CliTest, SubmitOfAMissingFileExitsTwoNamingTheFile) {
  Out o = G({"submit", dir_->path() + "/no-such-file.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("no-such-file.json"), std::string::npos) << o.err;
}

TEST_F(CliTest, SubmitOfUnparsableYamlExitsTwoWithOneLine) {
  auto garbage = dir_->Write("garbage.yaml", "suite: [unclosed\n");
  Out o = G({"submit", garbage});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(Lines(o.err).size(), 1u) << o.err;
}

TEST_F(CliTest, SubmitOfAnUnknownSuiteExitsTwoWith404) {
  auto unknown = Write("unknown.json", {{"suite", "no-such-suite"}});
  Out o = G({"submit", unknown});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("404"), std::string::npos) << o.err;
}

TEST_F(CliTest, SubmitWithNothingListeningExitsTwoSayingSo) {
  auto unknown = Write("unknown.json", {{"suite", "no-such-suite"}});
  Out o = RunProgram(*dir_, {GauntletBin(), "submit", unknown, "--server", kNowhere});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("cannot reach " + kNowhere), std::string::npos) << o.err;
}

TEST_F(CliTest, MatrixInEveryFormat) {
  auto f = Write("mix.json", {{"suite", "fixture-cmd"},
                              {"parameters", {{"mode", {"pass", "fail", "unsupported"}}, {"tag", {"mx"}}}},
                              {"prune", false}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.out << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();

  Out t = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("✅ 1 pts"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("❌ crashed: fixture_exploded"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("⚠ unsupported: no_kernel_image"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("\033["), std::string::npos) << "colours only on a terminal";

  Out md = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--format", "markdown"});
  ASSERT_EQ(md.code, 0) << md.err;
  auto ml = Lines(md.out);
  ASSERT_GE(ml.size(), 6u) << md.out;
  EXPECT_EQ(ml[0].rfind("**fixture-cmd** · sweep " + id, 0), 0u) << md.out;
  EXPECT_EQ(ml[1], "| mode | cpu |");
  EXPECT_EQ(ml[2], "|---|---|");
  EXPECT_EQ(ml[3], "| `pass` | ✅ 1 pts |");
  EXPECT_EQ(ml[4], "| `fail` | ❌ crashed: fixture_exploded |");
  EXPECT_EQ(ml[5], "| `unsupported` | ⚠ unsupported: no_kernel_image |");

  Out csv = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  auto cl = Lines(csv.out);
  ASSERT_EQ(cl.size(), 4u) << csv.out;
  EXPECT_EQ(cl[0].substr(0, 8), "mode,cpu");

  Out js = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--cols", "hardware", "--format", "json"});
  ASSERT_EQ(js.code, 0) << js.err;
  json m = json::parse(js.out);
  EXPECT_EQ(m["cells"].size(), 3u);
  EXPECT_EQ(m["rows"], json::array({"mode"}));

  // A parameter as columns, two parameters as rows.
  Out two = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode,tag", "--cols", "count"});
  EXPECT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.out.find("mode"), std::string::npos);
  EXPECT_NE(two.out.find("tag"), std::string::npos);

  // The field at fault, in one line.
  Out bad = G({"matrix", "--suite", "fixture-cmd", "--rows", "colour"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(Lines(bad.err).size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("422 Unprocessable Entity: rows: 'colour' is not a parameter"), std::string::npos) << bad.err;
  bad = G({"matrix", "--suite", "fixture-cmd", "--format", "html"});
  EXPECT_NE(bad.code, 0);
}

TEST_F(CliTest, TrialsAndStatusInEveryFormat) {
  auto f = Write("ts.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}, {"tag", {"ts"}}}}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();

  Out j = G({"trials", "--sweep", id, "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json trials = json::parse(j.out);
  ASSERT_EQ(trials.size(), 2u);
  Out failed = G({"trials", "--sweep", id, "--verdict", "crashed", "--param", "mode=fail", "--format", "json"});
  ASSERT_EQ(json::parse(failed.out).size(), 1u) << failed.out;
  Out none = G({"trials", "--sweep", id, "--verdict", "crashed", "--param", "mode=pass", "--format", "json"});
  EXPECT_EQ(json::parse(none.out).size(), 0u) << none.out;
  Out badp = G({"trials", "--param", "mode"});
  EXPECT_EQ(badp.code, 2);
  EXPECT_NE(badp.err.find("NAME=VALUE"), std::string::npos);

  Out csv = G({"trials", "--sweep", id, "--format", "csv"});
  auto cl = Lines(csv.out);
  ASSERT_EQ(cl.size(), 3u) << csv.out;
  EXPECT_EQ(cl[0].rfind("id,sweep,suite,state,verdict", 0), 0u) << cl[0];
  Out md = G({"trials", "--sweep", id, "--format", "markdown"});
  EXPECT_EQ(Lines(md.out)[0].rfind("| TRIAL | SWEEP |", 0), 0u) << md.out;
  Out tab = G({"trials", "--sweep", id});
  EXPECT_EQ(Lines(tab.out).size(), 3u) << tab.out;

  Out st = G({"status", id, "--format", "json"});
  ASSERT_EQ(st.code, 0);
  EXPECT_TRUE(json::parse(st.out)["finished"].get<bool>());
  Out stc = G({"status", "--format", "csv"});
  auto sl = Lines(stc.out);
  ASSERT_GE(sl.size(), 2u);
  EXPECT_EQ(sl[0].rfind("id,name,suite,trials,done,running,finished,passed,", 0), 0u) << sl[0];
  Out stm = G({"status", id, "--format", "markdown"});
  EXPECT_EQ(Lines(stm.out)[1].rfind("|---|", 0), 0u) << stm.out;
  Out stt = G({"status", id});
  EXPECT_NE(stt.out.find("passed 1 crashed 1"), std::string::npos) << stt.out;
  // status --wait on a finished sweep answers at once with submit's exit code.
  Out sw = G({"status", id, "--wait"});
  EXPECT_EQ(sw.code, 1) << sw.err;
  Out missing = G({"status", "999999"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(Lines(missing.err).size(), 1u);
  EXPECT_NE(missing.err.find("404"), std::string::npos);

  // Logs of a finished trial; --follow ends since the trial is done.
  const std::string trial = trials[0]["id"].dump();
  Out lg = G({"logs", trial});
  EXPECT_EQ(lg.code, 0);
  EXPECT_NE(lg.out.find("=== stage run"), std::string::npos) << lg.out;
  Out lf = G({"logs", trial, "--follow"});
  EXPECT_EQ(lf.code, 0);
  EXPECT_EQ(lf.out, lg.out);

  Out nodes = G({"nodes", "--format", "json"});
  ASSERT_EQ(nodes.code, 0);
  EXPECT_EQ(json::parse(nodes.out)[0]["name"], "cpu-node");
  Out suites = G({"suites", "--format", "csv"});
  EXPECT_NE(suites.out.find("fixture-cmd,1,"), std::string::npos) << suites.out;
  Out one = G({"suites", "fixture-cmd"});
  EXPECT_EQ(json::parse(one.out)["name"], "fixture-cmd");
}

TEST_F(CliTest, LogsFollowPrintsUntilTheTrialEnds) {
  auto f = Write("follow.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"1.5"}}, {"tag", {"fol"}}}},
                                 {"reuse", false}});
  Out sub = G({"submit", f});
  ASSERT_EQ(sub.code, 0) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  Out t = G({"trials", "--sweep", id, "--format", "json"});
  const std::string trial = json::parse(t.out)[0]["id"].dump();
  Out lf = G({"logs", trial, "-f"});
  EXPECT_EQ(lf.code, 0) << lf.err;
  EXPECT_NE(lf.out.find("fixture: sleeping"), std::string::npos) << lf.out;
  EXPECT_NE(lf.out.find("=== stage run ended: passed"), std::string::npos) << lf.out;
}

TEST_F(CliTest, CancelASweep) {
  auto f = Write("cancel.json", {{"suite", "fixture-cmd"}, {"targets", {{{"arch", "sm_90"}}}}, {"parameters", {{"mode", {"pass"}}}}});
  Out sub = G({"submit", f});  // no node has sm_90: it waits
  ASSERT_EQ(sub.code, 0) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  Out c = G({"cancel", id});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["by_verdict"]["cancelled"], 1);
  Out w = G({"status", id, "--wait"});
  EXPECT_EQ(w.code, 1) << "cancelled is not passed";
  Out neither = G({"cancel"});
  EXPECT_EQ(neither.code, 2);
}

TEST_F(CliTest, ServerFromTheConfigFileAlone) {
  ConfigFile config("# written by cli_test\nserver = " + d_->url() + "\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--format", "json"});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, EnvironmentBeatsTheConfigFileAndTheFlagBeatsTheEnvironment) {
  ConfigFile config("server = " + kNowhere + "\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites"}, {"GAUNTLET_SERVER=" + d_->url()});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", d_->url()}, {"GAUNTLET_SERVER=" + kNowhere});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("127.0.0.1:1"), std::string::npos) << "the file's server was used: " << o.err;
}

TEST_F(CliTest, GauntletConfigNamesAnotherFileAndABareHostPortIsAccepted) {
  ConfigFile config("server = " + kNowhere + "\n");  // would fail, were it read
  const std::string other = dir_->Write("other-config", "server=\"" + d_->url().substr(7) + "\"\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites"}, {"GAUNTLET_CONFIG=" + other});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, WithoutATokenASecuredDaemonAnswers401SayingHowToGiveOne) {
  std::unique_ptr<Secured> secured;
  ASSERT_NO_FATAL_FAILURE(StartSecured(&secured));
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url()});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("401"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--token"), std::string::npos) << "the error says how to give one: " << o.err;
}

TEST_F(CliTest, TokenFromTheFlagTheEnvironmentOrTheConfigFile) {
  std::unique_ptr<Secured> secured;
  ASSERT_NO_FATAL_FAILURE(StartSecured(&secured));
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url(), "--token", secured->token});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url()}, {"GAUNTLET_TOKEN=" + secured->token});
  EXPECT_EQ(o.code, 0) << o.err;
  ConfigFile config("server = " + secured->daemon->url() + "\ntoken = " + secured->token + "\n");
  o = RunProgram(*dir_, {GauntletBin(), "suites"});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, HelpEverywhere) {
  Out top = G({"--help"});
  EXPECT_EQ(top.code, 0);
  for (const char* sub : {"serve", "worker", "submit", "status", "trials", "matrix", "logs", "cancel", "nodes", "suites",
                          "classify", "token", "completion"}) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
    Out h = G({sub, "--help"});
    EXPECT_EQ(h.code, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub << ": " << h.out;
  }
  Out m = G({"matrix", "--help"});
  EXPECT_NE(m.out.find("markdown"), std::string::npos);
}

TEST_F(CliTest, BashCompletionCompletesSubcommandsFlagsAndChoices) {
  // scripts/gauntlet-completion.bash loads what `gauntlet completion bash` generates from the
  // command tree, so the binary under test must be the `gauntlet` on PATH.
  const std::string script = SourceDir() + "/scripts/gauntlet-completion.bash";
  const std::string bin_dir = std::filesystem::path(GauntletBin()).parent_path().string();
  Out gen = G({"completion", "bash"});
  ASSERT_EQ(gen.code, 0);
  for (const char* sub : {"submit", "status", "trials", "matrix", "logs", "cancel", "nodes", "suites", "classify"})
    EXPECT_NE(gen.out.find(std::string(" ") + sub), std::string::npos) << sub;
  auto complete = [&](const std::string& words, int cword) {
    std::string cmd = "source '" + script + "' && complete -p gauntlet && COMP_WORDS=(" + words +
                      ") && COMP_CWORD=" + std::to_string(cword) + " && _gauntlet && echo \"[${COMPREPLY[*]}]\"";
    const char* path = getenv("PATH");
    return RunProgram(*dir_, {"/bin/bash", "--norc", "--noprofile", "-c", cmd},
                      {"PATH=" + bin_dir + ":" + (path ? path : "/usr/bin:/bin")});
  };
  Out o = complete("gauntlet su", 1);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("-F _gauntlet gauntlet"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("[submit suites]"), std::string::npos) << o.out;
  o = complete("gauntlet matrix --format ''", 3);
  EXPECT_NE(o.out.find("[table csv json markdown]"), std::string::npos) << o.out;
  o = complete("gauntlet submit --w", 2);
  EXPECT_NE(o.out.find("[--wait]"), std::string::npos) << o.out;
  o = complete("gauntlet trials --ver", 2);
  EXPECT_NE(o.out.find("[--verdict]"), std::string::npos) << o.out;
}

TEST_F(CliTest, ExampleSweepsValidateAgainstTheExampleSuites) {
  // The examples load (suite_test checks that too) and every sweep file in suites/examples/sweeps
  // is accepted by the daemon. Nothing runs: no node has those GPUs, and the sweeps are cancelled.
  TempDir edir;
  Daemon ex(edir.path(), SourceDir() + "/suites/examples");
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(SourceDir() + "/suites/examples/sweeps")) {
    ++n;
    Out o = RunProgram(*dir_, {GauntletBin(), "submit", e.path().string(), "--server", ex.url()});
    ASSERT_EQ(o.code, 0) << e.path() << ": " << o.err;
    json r = json::parse(Lines(o.out)[0]);
    EXPECT_GT(r["trials"].get<int64_t>(), 1) << e.path();
    EXPECT_EQ(RunProgram(*dir_, {GauntletBin(), "cancel", r["id"].dump(), "--server", ex.url()}).code, 0);
  }
  EXPECT_GE(n, 2);
  // The SGLang suite's rules name the arch refusal in a real log.
  Out c = RunProgram(*dir_, {GauntletBin(), "classify", SourceDir() + "/tests/classifier/01-sglang-trtllm-moe-sm100-only.log",
                             "--exit-code", "1", "--suite", SourceDir() + "/suites/examples/sglang-nvfp4.json"});
  ASSERT_EQ(c.code, 0) << c.err;
  json cl = json::parse(c.out);
  EXPECT_EQ(cl["verdict"], "unsupported") << c.out;
}

}  // namespace
}  // namespace gauntlet::test
