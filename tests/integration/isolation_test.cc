// Trials that cannot touch each other or their worker (docs/DECISIONS.md "A stage is not the
// worker"), each attack of issue 46 as a hostile stage would make it: real daemon and worker
// processes on loopback, the worker root and started with --trial-users on, stages that are plain
// sh scripts. Each stage tries and prints what it got; the test reads the trial logs and verdicts.
// Needs root (a worker that starts trials as other users); skipped, visibly, elsewhere.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "http/auth.h"
#include "net/http_client.h"
#include "tests/integration/cli_fixture.h"
#include "tests/integration/ctest_project.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

json ShSuite(const std::string& name, const json& parameters, const std::string& script) {
  return {{"name", name},
          {"parameters", parameters},
          {"stages", json::array({{{"name", "run"}, {"kind", "command"}, {"argv", {"sh", "-c", script}}, {"timeout_s", 120}}})}};
}

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the worker starts each trial as a user of its own";
    // Trials reach their folders through the test's, which mkdtemp made 0700.
    chmod(dir_.path().c_str(), 0711);
    shared_ = dir_.path() + "/shared";
    fs::create_directories(shared_);
    chmod(shared_.c_str(), 0777);
    std::ofstream(dir_.path() + "/tokens") << "worker sha256:" << http::Sha256Hex("fleet-token") << "\n"
                                           << "admin sha256:" << http::Sha256Hex("boss") << "\n";
    d_ = std::make_unique<Daemon>(dir_.path(), FixtureSuites(), std::vector<std::string>{"--tokens", dir_.path() + "/tokens"});
    const std::string inv = dir_.Write("node.inventory.json", "{}");
    // The token comes from the environment, where a stage could once read it (/proc/PID/environ),
    // and --pass-env names it: it must still never reach a stage.
    worker_ = std::make_unique<Child>(
        std::vector<std::string>{GauntletBin(), "worker", "--server", d_->url(), "--name", "node", "--inventory", inv,
                                 "--workdir", dir_.path() + "/work", "--preflight", "off", "--wait-s", "5",
                                 "--max-trials", "2", "--trial-users", "on", "--trial-uids", "62000-62099",
                                 "--trial-share", shared_, "--pass-env", "GAUNTLET_TOKEN"},
        dir_.path() + "/worker.log", std::vector<std::string>{"GAUNTLET_TOKEN=fleet-token"});
  }
  net::ClientResponse Call(const std::string& method, const std::string& target, const json& body = json::object()) {
    net::Client c(d_->url(), "boss");
    auto r = c.Send(method, target, body.dump());
    EXPECT_TRUE(r.ok()) << method << " " << target;
    return r.ok() ? *r : net::ClientResponse{};
  }
  // Runs `suite` over its parameters and returns its trials, done.
  json Run(const json& suite) {
    auto put = Call("PUT", "/api/v1/suites/" + suite["name"].get<std::string>(), suite);
    EXPECT_EQ(put.status, 201) << put.body;
    auto s = Call("POST", "/api/v1/sweeps", {{"suite", suite["name"]}, {"prune", false}, {"reuse", false}});
    EXPECT_EQ(s.status, 201) << s.body;
    const std::string id = json::parse(s.body)["id"].dump();
    EXPECT_TRUE(WaitFor([&] {
      json sw = json::parse(Call("GET", "/api/v1/sweeps/" + id).body, nullptr, false);
      return sw.is_object() && sw.value("finished", false);
    }, std::chrono::seconds(180))) << d_->Log() << worker_->Log();
    return json::parse(Call("GET", "/api/v1/trials?sweep=" + id).body)["items"];
  }
  std::string Log(const json& trial) { return Call("GET", "/api/v1/trials/" + trial["id"].dump() + "/log").body; }

  TempDir dir_;
  std::string shared_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

// The worker's environment, its credential file and folder, and the worker itself are out of reach.
TEST_F(Isolation, AStageCannotReadSignalOrStopItsWorker) {
  // The worker's pid as the host knows it: in the stage's own PID namespace no such process shows.
  const std::string script = "w=" + std::to_string(worker_->pid()) + R"SH(
echo "uid=$(id -u)"
echo "user=$USER"
echo "pid=$$"
echo "procs=$(ls /proc | grep -c '^[0-9]')"
cat /proc/$w/environ >/dev/null 2>&1 && { echo ENVIRON-READ; tr '\0' '\n' < /proc/$w/environ; } || echo environ-denied
cat "$GAUNTLET_WORKDIR/../node-credential.json" 2>/dev/null && echo CREDENTIAL-READ || echo credential-denied
ls "$GAUNTLET_WORKDIR/.." >/dev/null 2>&1 && echo LISTED || echo list-denied
kill -STOP $w 2>/dev/null && echo STOPPED || echo stop-denied
kill -0 $w 2>/dev/null && echo SIGNALLED || echo signal-denied
env | grep -q GAUNTLET_TOKEN && echo TOKEN-IN-ENV || echo token-absent
stat -c 'workdir %a %u' "$GAUNTLET_WORKDIR"
)SH";
  json trials = Run(ShSuite("snoop", {{"n", {"1"}}}, script));
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0]["verdict"], "passed") << trials.dump();
  const std::string log = Log(trials[0]);
  // The log opens with the script itself: only whole lines of output count.
  for (const char* denied : {"environ-denied", "credential-denied", "list-denied", "stop-denied", "signal-denied", "token-absent"})
    EXPECT_NE(log.find("\n" + std::string(denied) + "\n"), std::string::npos) << denied << " missing:\n" << log;
  for (const char* got : {"ENVIRON-READ", "CREDENTIAL-READ", "LISTED", "STOPPED", "SIGNALLED", "TOKEN-IN-ENV"})
    EXPECT_EQ(log.find("\n" + std::string(got) + "\n"), std::string::npos) << got << ":\n" << log;
  EXPECT_EQ(log.find("fleet-token"), std::string::npos) << log;
  EXPECT_EQ(log.find("node_token"), std::string::npos) << log;
  EXPECT_NE(log.find("\nuid=620"), std::string::npos) << "not a trial user:\n" << log;
  // A user name for what asks for one (Python's getpass), though the id has no account.
  EXPECT_NE(log.find("\nuser=gauntlet-trial-620"), std::string::npos) << log;
  EXPECT_NE(log.find("\nworkdir 700 620"), std::string::npos) << log;
  // Its own PID namespace: the shell is the init's first child, and /proc holds the stage alone.
  EXPECT_NE(log.find("\npid=2\n"), std::string::npos) << log;
  const size_t procs = log.find("\nprocs=");
  ASSERT_NE(procs, std::string::npos) << log;
  EXPECT_LE(std::stoi(log.substr(procs + 7)), 6) << log;
  // The worker was not stopped: it takes and finishes another trial.
  json again = Run(ShSuite("after", {{"n", {"1"}}}, "echo still here"));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0]["verdict"], "passed");
  // Every stage's report says how it ran, and the node's record how its trials run.
  json trial = json::parse(Call("GET", "/api/v1/trials/" + trials[0]["id"].dump()).body);
  EXPECT_NE(trial.dump().find("\"isolation\":\"trial user 620"), std::string::npos) << trial.dump();
  EXPECT_NE(trial.dump().find("own mount and PID namespaces"), std::string::npos) << trial.dump();
  EXPECT_NE(Call("GET", "/api/v1/nodes").body.find("trial users (uids 62000-62099); own mount and PID namespaces"),
            std::string::npos);
}

// Its own view: a private /tmp per trial (shared by the trial's stages and ranks, never by another
// trial, and gone with the trial), its own processes in /proc, and the folders kept under /tmp
// (--trial-share) still there.
TEST_F(Isolation, ATrialSeesItsOwnTmpAndProcessesOnly) {
  // Names of this run alone, so a host /tmp that holds one proves a leak, not an earlier run.
  const std::string mine = "mine" + std::to_string(getpid()) + "-";
  const std::string script = "M=" + mine + R"SH(
D=")SH" + shared_ + R"SH("
echo "$GAUNTLET_PARAM_ROLE" > /tmp/$M$GAUNTLET_PARAM_ROLE
touch "$D/ready-$GAUNTLET_PARAM_ROLE"
i=0; while [ $(ls "$D" | grep -c '^ready-') -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
echo "tmp: $(ls /tmp | grep "^$M" | tr '\n' ' ')"
echo "procs=$(ls /proc | grep -c '^[0-9]')"
touch "$D/done-$GAUNTLET_PARAM_ROLE"
i=0; while [ $(ls "$D" | grep -c '^done-') -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
)SH";
  json suite = ShSuite("views", {{"role", {"a", "b"}}}, script);
  // A second stage, with two ranks: each sees the first stage's file, and the other rank's.
  suite["stages"].push_back({{"name", "ranks"}, {"kind", "command"}, {"ranks", 2}, {"timeout_s", 120},
                             {"argv", {"sh", "-c", "cat /tmp/" + mine + "$GAUNTLET_PARAM_ROLE && touch /tmp/rank-$RANK && "
                                                   "i=0; while [ ! -e /tmp/rank-0 ] || [ ! -e /tmp/rank-1 ]; do "
                                                   "[ $i -gt 1200 ] && exit 3; sleep 0.1; i=$((i+1)); done; echo both-ranks"}}});
  json trials = Run(suite);
  ASSERT_EQ(trials.size(), 2u);
  for (const json& t : trials) {
    const std::string role = t["config"]["role"], log = Log(t);
    EXPECT_EQ(t["verdict"], "passed") << t.dump() << log;
    EXPECT_NE(log.find("\ntmp: " + mine + role + " \n"), std::string::npos) << log;
    // Both trials are alive here (each waits for the other), yet each sees only its own few.
    const size_t procs = log.find("\nprocs=");
    ASSERT_NE(procs, std::string::npos) << log;
    EXPECT_LE(std::stoi(log.substr(procs + 7)), 6) << log;
    EXPECT_NE(log.find("[rank0]: " + role), std::string::npos) << log;
    EXPECT_NE(log.find("[rank1]: both-ranks"), std::string::npos) << log;
    // Not in the host's /tmp, and gone with the trial.
    EXPECT_FALSE(fs::exists("/tmp/" + mine + role));
  }
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir_.path() + "/work", ec))
    EXPECT_NE(e.path().filename().string().rfind("view-", 0), 0u) << e.path() << " was left behind";
}

// Two trials at once: one tries to read the other's folder and to forge its verdict through its
// result file; the victim fails as it means to.
TEST_F(Isolation, ATrialCannotReadOrForgeItsNeighbour) {
  const std::string script = R"SH(
D=")SH" + shared_ + R"SH("
if [ "$GAUNTLET_PARAM_ROLE" = victim ]; then
  echo secret > "$GAUNTLET_WORKDIR/secret"
  echo "$GAUNTLET_WORKDIR" > "$D/path.tmp" && mv "$D/path.tmp" "$D/victim-path"
  i=0; while [ ! -e "$D/attacker-done" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
  echo "RuntimeError: the victim fails on purpose" >&2
  exit 1
fi
i=0; while [ ! -e "$D/victim-path" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
v=$(cat "$D/victim-path")
cat "$v/secret" 2>/dev/null && echo READ-SECRET || echo read-denied
echo '{"verdict": "passed", "metrics": {"tok_s": 99999}}' > "$v/run.result.json" 2>/dev/null && echo WROTE || echo write-denied
touch "$D/attacker-done"
)SH";
  json trials = Run(ShSuite("neighbours", {{"role", {"victim", "attacker"}}}, script));
  ASSERT_EQ(trials.size(), 2u);
  for (const json& t : trials) {
    const std::string log = Log(t);
    if (t["config"]["role"] == "victim") {
      EXPECT_EQ(t["verdict"], "crashed") << t.dump() << log;
    } else {
      EXPECT_EQ(t["verdict"], "passed") << t.dump() << log;
      EXPECT_NE(log.find("\nread-denied\n"), std::string::npos) << log;
      EXPECT_NE(log.find("\nwrite-denied\n"), std::string::npos) << log;
      EXPECT_EQ(log.find("\nsecret\n"), std::string::npos) << log;
    }
  }
}

// The test runners kernel projects use work inside the isolation as outside it: CTest in a build
// folder kept under the host's /tmp (--trial-share) and pytest with a JUnit report in the trial's
// folder, each judged from its own report.
TEST_F(Isolation, CtestAndPytestRunInsideATrialsView) {
  if (!HaveCtest()) GTEST_SKIP() << "cmake/ctest is not installed";
  const std::string src = shared_ + "/ctest-src", bin = shared_ + "/ctest-build";
  ASSERT_TRUE(BuildCtestProject(src, bin));
  // A build folder per trial: CTest writes its log into the one it runs in (Testing/), which a
  // folder shared by trials (each its own user) gives to the first (see the classifier's
  // infra_error:runner_cannot_write).
  ASSERT_EQ(std::system(("cp -a " + bin + " " + bin + "-2 && chmod -R a+rwX " + shared_).c_str()), 0);
  const bool pytest = std::system("/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1") == 0;
  const std::string tests = shared_ + "/test_view.py";
  std::ofstream(tests) << "def test_writes_its_tmp():\n    open('/tmp/x', 'w').write('1')\n\n"
                          "def test_broken():\n    assert 1 + 1 == 3\n";
  json suite = {{"name", "runners"},
                {"parameters", {{"runner", pytest ? json{"ctest-ok", "ctest-wrong", "pytest"} : json{"ctest-ok", "ctest-wrong"}}}},
                {"stages", json::array({{{"name", "run"}, {"kind", "command"}, {"timeout_s", 120},
                                          {"argv", {"sh", "-c",
                                                    "case $GAUNTLET_PARAM_RUNNER in "
                                                    "ctest-ok) exec ctest --test-dir " + bin + " -R '^ok$' --output-on-failure;; "
                                                    "ctest-wrong) exec ctest --test-dir " + bin + "-2 -R '^wrong$' --output-on-failure;; "
                                                    "pytest) exec /usr/bin/python3 -m pytest -p no:cacheprovider -c /dev/null -ra " +
                                                        tests + ";; esac"}}}})}};
  json trials = Run(suite);
  ASSERT_EQ(trials.size(), pytest ? 3u : 2u);
  for (const json& t : trials) {
    const std::string runner = t["config"]["runner"];
    json full = json::parse(Call("GET", "/api/v1/trials/" + t["id"].dump()).body);
    EXPECT_NE(full.dump().find("own mount and PID namespaces"), std::string::npos) << full.dump();
    if (runner == "ctest-ok") EXPECT_EQ(t["verdict"], "passed") << full.dump() << Log(t);
    if (runner != "ctest-ok") EXPECT_EQ(t["verdict"], "wrong_output") << full.dump() << Log(t);
    if (runner != "ctest-ok") EXPECT_EQ(full["basis"], "runner") << full.dump();
  }
  if (!pytest) GTEST_SKIP() << "pytest ran not: /usr/bin/python3 has no pytest (scripts/install-test-deps.sh installs it)";
}

}  // namespace
}  // namespace gauntlet::test

namespace gauntlet::test {
namespace {

// Limits everywhere, or said. On a node whose stage cgroups hold them (v2, or v1 on a v1 or hybrid
// host), a memory eater under memory_mb is oom:memory_limit; on one that cannot (here: cgroups off,
// --containment subreaper), a stage that declares limits runs and says so in its report and log,
// or, with --require-limits, is refused as the node's infra error (the trial goes back).
TEST(Limits, ALimitIsHeldOrSaidOrRefused) {
  bool eater_skipped = false;
  for (const bool cgroups : {true, false})
    for (const bool require : {false, true}) {
      if (cgroups && require) continue;  // the same as without, where the node holds them
      SCOPED_TRACE(std::string(cgroups ? "cgroups" : "--containment subreaper") + (require ? ", --require-limits" : ""));
      TempDir dir;
      Daemon d(dir.path(), FixtureSuites());
      std::vector<std::string> extra = {"--trial-users", "off"};
      if (require) extra.push_back("--require-limits");
      if (!cgroups) extra.insert(extra.end(), {"--containment", "subreaper"});
      auto w = StartWorker(dir.path(), d.url(), "node", json::object(), extra);
      // 1 GiB through a pipe into a shell variable, under a 64 MiB limit.
      const json suite = {
          {"name", "bounded"},
          {"parameters", {{"n", {"1"}}}},
          {"stages", json::array({{{"name", "run"}, {"kind", "command"},
                                   {"argv", {"sh", "-c", "echo ran; x=$(head -c 1073741824 /dev/zero | tr '\\0' a); echo survived"}},
                                   {"limits", {{"memory_mb", 64}, {"pids", 64}}}}})}};
      net::Client c(d.url(), "");
      auto put = c.Send("PUT", "/api/v1/suites/bounded", suite.dump());
      ASSERT_TRUE(put.ok());
      ASSERT_EQ(put->status, 201) << put->body;
      json s = d.PostJson("/api/v1/sweeps", {{"suite", "bounded"}, {"prune", false}, {"reuse", false}}, 201);
      const int64_t id = s["id"];
      // A refused trial is retried, as any infra error is; its first attempt is enough to read.
      json trial;
      ASSERT_TRUE(WaitFor([&] {
        json items = d.GetJson("/api/v1/trials?sweep=" + std::to_string(id))["items"];
        if (items.empty() || !items[0]["verdict"].is_string() || items[0]["verdict"].get<std::string>().empty()) return false;
        trial = d.GetJson("/api/v1/trials/" + items[0]["id"].dump());
        return true;
      }, std::chrono::seconds(120))) << d.Log() << w->Log();
      const bool enforced = d.GetJson("/api/v1/nodes").dump().find("\"limits\":\"enforced\"") != std::string::npos;
      const std::string log = d.Get("/api/v1/trials/" + trial["id"].dump() + "/log").body;
      if (cgroups && !enforced) {
        eater_skipped = true;
      } else if (enforced) {
        EXPECT_TRUE(cgroups);
        EXPECT_EQ(trial["verdict"], "oom") << trial.dump() << log;
        EXPECT_EQ(trial["signature"], "oom:memory_limit") << trial.dump();
        EXPECT_EQ(log.find("\nsurvived\n"), std::string::npos) << log;
        EXPECT_EQ(trial.dump().find("not enforced"), std::string::npos) << trial.dump();
      } else if (!require) {
        // Unbounded here: 1 GiB is a small price on a test machine, and the stage says what it lacked.
        EXPECT_EQ(trial["verdict"], "passed") << trial.dump();
        EXPECT_NE(trial.dump().find("\"limits\":\"not enforced: memory_mb 64, pids 64 ("), std::string::npos) << trial.dump();
        EXPECT_NE(log.find("gauntlet: limits not enforced: memory_mb 64, pids 64"), std::string::npos) << log;
      } else {
        EXPECT_EQ(trial["verdict"], "infra_error") << trial.dump();
        EXPECT_EQ(trial["signature"], "infra_error:limits_not_enforced") << trial.dump();
        EXPECT_EQ(log.find("\nran\n"), std::string::npos) << "the stage ran:\n" << log;
        EXPECT_NE(log.find("--require-limits: the stage declares limits (memory_mb 64, pids 64)"), std::string::npos) << log;
      }
    }
  if (eater_skipped) GTEST_SKIP() << "the memory eater did not run: this host's cgroups hold no memory and pids limits";
}

}  // namespace
}  // namespace gauntlet::test
