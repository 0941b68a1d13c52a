// A trial's run against a daemon in memory and scripted processes (tests/support/): stages in
// order with the first failure settling the trial, the heartbeat's cancel and a lost lease stopping
// the running stage, the report retried until the daemon takes it, and the log arriving whole and
// in order however often the daemon is away.
#include "workers/trial_runner.h"
#include "workers/lease_keeper.h"

#include <gtest/gtest.h>

#include <fstream>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <filesystem>

#include "tests/support/trial_rig.h"
#include "tests/support/small_tmpfs.h"

namespace gauntlet {
namespace {
using nlohmann::json;

class TrialRunnerTest : public ::testing::Test, protected test::TrialRig {
 protected:
  // A grant as the daemon sends it, for a CPU trial of a suite with these stages.
  static json Grant(int64_t trial, const std::vector<json>& stages, json extra_suite = json::object()) {
    return TrialRig::Grant(trial, stages, {{"backend", "cutlass"}}, json::array(), extra_suite);
  }
  // A command stage; 10 s bounds a stage that nothing stops, so a broken stop fails the test as a
  // timeout instead of hanging it.
  static json Command(const std::string& name, const std::string& program) {
    return {{"name", name}, {"kind", "command"}, {"argv", {program}}, {"timeout_s", 10}};
  }
  // The heartbeat answer, once the scripted stage process runs: until then, plain ok.
  std::function<worker::HeartbeatAnswer()> OnceRunning(worker::LinkStatus status, bool cancel) {
    return [this, status, cancel] {
      worker::HeartbeatAnswer a;
      a.status = worker::LinkStatus::kOk;
      if (runner.live() > 0) {
        a.status = status;
        a.cancel = cancel;
      }
      return a;
    };
  }
  static test::FakeProgram Forever() {
    test::FakeProgram p;
    p.output = {"serving\n"};
    p.until_stopped = true;
    return p;
  }
};

TEST_F(TrialRunnerTest, APassingTrialIsReportedWithEveryStageAndMetric) {
  test::FakeProgram a;
  a.output = {"{\"metrics\": {\"gflops\": 10}}\n"};
  test::FakeProgram b;
  b.output = {"{\"metrics\": {\"ms\": {\"value\": 3, \"unit\": \"ms\"}}}\n"};
  runner.Add("a", a);
  runner.Add("b", b);

  worker::RunTrial(env, Grant(1, {Command("first", "a"), Command("second", "b")}));

  const json r = daemon.report("L1");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["verdict"], "passed");
  EXPECT_EQ(r["failing_stage"], "");
  ASSERT_EQ(r["stages"].size(), 2u);
  EXPECT_EQ(r["stages"][0]["name"], "first");
  EXPECT_EQ(r["stages"][1]["name"], "second");
  EXPECT_EQ(r["metrics"]["gflops"]["value"], 10);
  EXPECT_EQ(r["metrics"]["ms"]["unit"], "ms");
  EXPECT_EQ(runner.started()[0].env.at("GAUNTLET_PARAM_BACKEND"), "cutlass");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/trial-1-a1")) << "a reported trial leaves no work folder";
}

TEST_F(TrialRunnerTest, TheFirstFailureEndsTheTrialAndNamesItsStage) {
  test::FakeProgram bad;
  bad.output = {"RuntimeError: CUDA error: no kernel image is available for execution on the device\n"};
  bad.exit_code = 1;
  runner.Add("bad", bad);
  runner.Add("never", {});

  worker::RunTrial(env, Grant(2, {Command("kernels", "bad"), Command("e2e", "never")}));

  const json r = daemon.report("L2");
  EXPECT_EQ(r["verdict"], "unsupported");
  EXPECT_EQ(r["failing_stage"], "kernels");
  EXPECT_EQ(r["exit_code"], 1);
  EXPECT_EQ(r["stages"].size(), 1u);
  EXPECT_EQ(runner.started().size(), 1u) << "a stage after a failure never starts";
}

TEST_F(TrialRunnerTest, AHeartbeatAnswerWithCancelStopsTheRunningStage) {
  runner.Add("serve", Forever());
  daemon.heartbeat = OnceRunning(worker::LinkStatus::kOk, true);

  worker::RunTrial(env, Grant(3, {Command("soak", "serve")}));

  const json r = daemon.report("L3");
  EXPECT_EQ(r["verdict"], "cancelled");
  EXPECT_EQ(r["signature"], "cancelled:stopped");
  EXPECT_EQ(r["failing_stage"], "soak");
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(TrialRunnerTest, ALostLeaseStopsTheTrialWithoutAReport) {
  runner.Add("serve", Forever());
  daemon.heartbeat = OnceRunning(worker::LinkStatus::kLost, false);

  worker::RunTrial(env, Grant(4, {Command("soak", "serve"), Command("after", "serve")}));

  EXPECT_TRUE(daemon.report_calls().empty()) << "the daemon gave the trial to someone else";
  EXPECT_EQ(runner.started().size(), 1u);
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(TrialRunnerTest, AReportTheDaemonCannotTakeYetIsRetriedUntilTaken) {
  runner.Add("ok", {});
  daemon.reports_unavailable = 3;

  worker::RunTrial(env, Grant(5, {Command("only", "ok")}));

  const auto calls = daemon.report_calls();
  ASSERT_EQ(calls.size(), 4u);
  for (auto& c : calls) EXPECT_EQ(c, calls.back()) << "every retry sends the same report";
  EXPECT_EQ(daemon.report("L5")["verdict"], "passed");
}

TEST_F(TrialRunnerTest, TheLogReachesTheDaemonInOrderAndComplete) {
  // Over 1 MiB in many writes, so it travels in several chunks, and the daemon is away for some of
  // them: retries must neither lose, repeat nor reorder a byte.
  test::FakeProgram talk;
  std::string expected;
  for (int i = 0; i < 4000; ++i) {
    std::string line = "line " + std::to_string(i) + " " + std::string(300, static_cast<char>('a' + i % 26)) + "\n";
    talk.output.push_back(line);
    expected += line;
  }
  runner.Add("talk", talk);
  daemon.logs_unavailable = 2;

  worker::RunTrial(env, Grant(6, {Command("chatty", "talk")}));

  const std::string log = daemon.log("L6");
  EXPECT_EQ(daemon.gaps(), 0);
  EXPECT_EQ(daemon.mismatches(), 0);
  EXPECT_EQ(log.rfind("=== stage chatty: talk\n", 0), 0u) << log.substr(0, 100);
  const size_t at = log.find(expected);
  ASSERT_NE(at, std::string::npos) << "the program's output, whole and in order";
  EXPECT_EQ(at, std::string("=== stage chatty: talk\n").size());
  EXPECT_NE(log.find("=== stage chatty ended: passed", at + expected.size()), std::string::npos);
  const std::string end = "=== trial 6: passed\n";
  ASSERT_GE(log.size(), end.size());
  EXPECT_EQ(log.substr(log.size() - end.size()), end) << "the last line is logged before the report";
  EXPECT_EQ(daemon.report("L6")["verdict"], "passed");
}

TEST_F(TrialRunnerTest, AStopByTheWorkersShutdownIsAnInfraErrorNotACancel) {
  runner.Add("serve", Forever());
  daemon.heartbeat = [this] {
    if (runner.live() > 0) abort_all = true;  // the worker's second SIGTERM, while the stage runs
    worker::HeartbeatAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  };

  worker::RunTrial(env, Grant(7, {Command("soak", "serve")}));

  const json r = daemon.report("L7");
  EXPECT_EQ(r["verdict"], "infra_error");
  EXPECT_EQ(r["signature"], "infra_error:worker_shutdown");
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(TrialRunnerTest, TheFingerprintRunsOncePerSuiteAndTravelsWithEveryReport) {
  test::FakeProgram fp;
  fp.output = {"{\"framework\": \"sglang 0.5\", \"cuda\": \"13.0\"}\n"};
  runner.Add("versions", fp);
  runner.Add("ok", {});
  const json with_fp = {{"fingerprint", {{"argv", {"versions"}}}}};

  worker::RunTrial(env, Grant(8, {Command("only", "ok")}, with_fp));
  worker::RunTrial(env, Grant(9, {Command("only", "ok")}, with_fp));

  int fingerprint_runs = 0;
  for (auto& s : runner.started()) fingerprint_runs += s.argv[0] == "versions";
  EXPECT_EQ(fingerprint_runs, 1);
  EXPECT_EQ(daemon.report("L8")["fingerprint"]["framework"], "sglang 0.5");
  EXPECT_EQ(daemon.report("L9")["fingerprint"], daemon.report("L8")["fingerprint"]);
}

// The node's software changed under a running worker (a package upgraded in place): the next trial
// takes the fingerprint again, so its result is filed under the new version, not the old one.
TEST_F(TrialRunnerTest, AChangeInTheNodesSoftwareTakesTheFingerprintAgain) {
  std::string stamp = "torch-2.10";
  worker::FingerprintCache cache([&stamp](const worker::TrialContext&, const json&) { return stamp; });
  env.fingerprints = &cache;
  test::FakeProgram v1;
  v1.output = {"{\"framework\": \"torch 2.10\"}\n"};
  runner.Add("versions", v1);
  runner.Add("ok", {});
  const json with_fp = {{"fingerprint", {{"argv", {"versions"}}}}};
  worker::RunTrial(env, Grant(21, {Command("only", "ok")}, with_fp));
  worker::RunTrial(env, Grant(22, {Command("only", "ok")}, with_fp));  // same software: kept
  test::FakeProgram v2;
  v2.output = {"{\"framework\": \"torch 2.11\"}\n"};
  runner.Add("versions", v2);
  stamp = "torch-2.11";
  worker::RunTrial(env, Grant(23, {Command("only", "ok")}, with_fp));
  int fingerprint_runs = 0;
  for (auto& st : runner.started()) fingerprint_runs += st.argv[0] == "versions";
  EXPECT_EQ(fingerprint_runs, 2);
  EXPECT_EQ(daemon.report("L22")["fingerprint"]["framework"], "torch 2.10");
  EXPECT_EQ(daemon.report("L23")["fingerprint"]["framework"], "torch 2.11");
}

// The stamp reads the package folders of the interpreter the command names, so installing a
// package into them changes it.
TEST(SoftwareStamp, InstallingAPackageChangesIt) {
  test::TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir.path() + "/venv/bin");
  fs::create_directories(dir.path() + "/venv/lib/python3.11/site-packages");
  const std::string py = dir.path() + "/venv/bin/python3";
  std::ofstream(py) << "#!/bin/sh\n";
  fs::permissions(py, fs::perms::owner_all);
  worker::TrialContext ctx;
  const json cmd = {{"argv", {py, "-c", "print(1)"}}};
  const std::string before = worker::SoftwareStamp(ctx, cmd);
  EXPECT_NE(before.find("site-packages"), std::string::npos) << before;
  // A new dist-info folder, as pip writes one; file systems keep mtimes at least to the second
  // here, so set the folder's time explicitly instead of waiting.
  fs::create_directories(dir.path() + "/venv/lib/python3.11/site-packages/torch-2.11.dist-info");
  fs::last_write_time(dir.path() + "/venv/lib/python3.11/site-packages",
                      fs::last_write_time(dir.path() + "/venv/lib/python3.11/site-packages") + std::chrono::seconds(5));
  EXPECT_NE(worker::SoftwareStamp(ctx, cmd), before);
  // An interpreter named by its version reads its own folders only (no walk of lib/).
  fs::create_directories(dir.path() + "/venv2/bin");
  fs::create_directories(dir.path() + "/venv2/lib/python3.12/site-packages");
  const std::string py312 = dir.path() + "/venv2/bin/python3.12";
  std::ofstream(py312) << "#!/bin/sh\n";
  fs::permissions(py312, fs::perms::owner_all);
  const std::string named = worker::SoftwareStamp(ctx, json{{"argv", {py312}}});
  EXPECT_NE(named.find("python3.12/site-packages"), std::string::npos) << named;
}

// Issue 29: a fingerprint command that failed was kept as the suite's software ({"exit_code": 1,
// ...}) and filed with every later trial. Now the trial it failed for is an infrastructure error of
// this node, no stage runs, nothing is kept, and the next trial runs the command again.
TEST_F(TrialRunnerTest, AFailedFingerprintIsAnInfraErrorAndIsNeverKept) {
  test::FakeProgram broken;
  broken.output = {"Traceback (most recent call last):\nModuleNotFoundError: No module named 'torch'\n"};
  broken.exit_code = 1;
  runner.Add("versions", broken);
  runner.Add("ok", {});
  const json with_fp = {{"fingerprint", {{"argv", {"versions"}}}}};

  worker::RunTrial(env, Grant(10, {Command("only", "ok")}, with_fp));
  const json r = daemon.report("L10");
  EXPECT_EQ(r["verdict"], "infra_error") << r.dump();
  EXPECT_EQ(r["signature"], "infra_error:fingerprint_failed");
  EXPECT_NE(r["evidence"].get<std::string>().find("exited 1"), std::string::npos) << r.dump();
  EXPECT_NE(r["evidence"].get<std::string>().find("No module named 'torch'"), std::string::npos) << r.dump();
  EXPECT_EQ(r["fingerprint"], json::object()) << "a failure's output is no software";
  for (auto& st : runner.started()) EXPECT_NE(st.argv[0], "ok") << "a stage ran without a fingerprint";

  // The command works again: the next trial runs it anew and is filed under what it printed.
  test::FakeProgram fixed;
  fixed.output = {"{\"torch\": \"2.9\"}\n"};
  runner.Add("versions", fixed);
  worker::RunTrial(env, Grant(11, {Command("only", "ok")}, with_fp));
  EXPECT_EQ(daemon.report("L11")["verdict"], "passed") << daemon.report("L11").dump();
  EXPECT_EQ(daemon.report("L11")["fingerprint"], json({{"torch", "2.9"}}));
}

}  // namespace
}  // namespace gauntlet

namespace gauntlet {
namespace {

// A daemon whose every log call finds more log waiting: the sink grows by a chunk each time one is
// shipped, as it does under a trial that logs without pause (issue 31: such a trial lost its lease
// after 16 s, the keeper's one thread shipping and never beating).
class EndlessLogDaemon : public test::FakeDaemonLink {
 public:
  worker::LogSink* sink = nullptr;
  std::atomic<bool> growing{true};
  worker::LinkAnswer AppendLog(const std::string& lease, int64_t offset, std::string_view data) override {
    worker::LinkAnswer a = test::FakeDaemonLink::AppendLog(lease, offset, data);
    if (growing) sink->Append(std::string(64 * 1024, 'x') + "\n");
    return a;
  }
};

TEST(LeaseKeeper, ATrialThatLogsWithoutPauseKeepsHeartbeating) {
  EndlessLogDaemon daemon;
  worker::LogSink log;
  daemon.sink = &log;
  log.Append("first line\n");
  std::mutex mu;
  std::condition_variable cv;
  int beats = 0;
  daemon.heartbeat = [&] {
    {
      std::lock_guard lock(mu);
      ++beats;
    }
    cv.notify_all();
    worker::HeartbeatAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  };
  {
    worker::LeaseKeeper keeper(daemon, "L1", std::chrono::milliseconds(5), log, nullptr);
    std::unique_lock lock(mu);
    // Five beats while the log never stops growing. The bound only ends a broken keeper's test; a
    // keeper that ships and beats on one thread stays at one beat forever.
    const bool beat = cv.wait_for(lock, std::chrono::seconds(60), [&] { return beats >= 5 && daemon.log_calls() >= 5; });
    EXPECT_TRUE(beat) << beats << " heartbeats while " << daemon.log_calls() << " log chunks were shipped";
    lock.unlock();
    daemon.growing = false;
    keeper.Finish();
    EXPECT_FALSE(keeper.lost());
  }
  // Nothing is lost or shipped twice: the daemon has every byte the sink was given.
  EXPECT_EQ(static_cast<int64_t>(daemon.log("L1").size()), log.written());
}

// A worker whose disk is full (a real tmpfs, filled): the trial ends as this node's infra_error
// (retried elsewhere) before any stage runs, instead of a first stage failing as the config's fault.
TEST_F(TrialRunnerTest, AFullDiskUnderTheWorkdirIsInfraErrorDiskFullBeforeAnyStage) {
  test::SmallTmpfs disk(dir.path() + "/disk", 1);
  if (!disk.mounted()) GTEST_SKIP() << "SKIP: cannot mount a tmpfs to fill (" << disk.why() << ")";
  disk.Fill("filler");
  env.workdir = dir.path() + "/disk";
  runner.Add("a", {});

  worker::RunTrial(env, Grant(41, {Command("first", "a")}));

  const json r = daemon.report("L41");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["verdict"], "infra_error");
  EXPECT_EQ(r["signature"], "infra_error:disk_full");
  EXPECT_EQ(r["failing_stage"], "workdir");
  EXPECT_NE(r["evidence"].get<std::string>().find("no space left"), std::string::npos) << r["evidence"];
  EXPECT_TRUE(runner.started().empty()) << "no stage runs on a full disk";
}

// A stage that fails because it filled the disk (its own log says nothing of space) is the disk's
// fault too: infra_error:disk_full, the stage's own judgment kept in the evidence.
TEST_F(TrialRunnerTest, AStageThatFailsOnAFullDiskIsInfraErrorDiskFull) {
  test::SmallTmpfs disk(dir.path() + "/disk", 1);
  if (!disk.mounted()) GTEST_SKIP() << "SKIP: cannot mount a tmpfs to fill (" << disk.why() << ")";
  env.workdir = dir.path() + "/disk";
  test::FakeProgram filler;
  filler.output = {"writing the result\n"};
  filler.exit_code = 1;
  filler.on_start = [&](const proc::ProcessSpec&) { disk.Fill("scratch"); };
  runner.Add("fill", filler);

  worker::RunTrial(env, Grant(42, {Command("write", "fill")}));

  const json r = daemon.report("L42");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["verdict"], "infra_error");
  EXPECT_EQ(r["signature"], "infra_error:disk_full");
  EXPECT_EQ(r["failing_stage"], "write");
  EXPECT_NE(r["evidence"].get<std::string>().find("the stage was judged"), std::string::npos) << r["evidence"];
}

// A work folder that cannot be made (here a file stands where its parent folder belongs) is the
// node's trouble as well, named with the reason, and no stage starts.
TEST_F(TrialRunnerTest, AWorkFolderThatCannotBeMadeIsInfraErrorWorkdir) {
  const std::string blocker = dir.path() + "/not-a-folder";
  dir.Write("not-a-folder", "x");
  env.workdir = blocker;
  runner.Add("a", {});

  worker::RunTrial(env, Grant(43, {Command("first", "a")}));

  const json r = daemon.report("L43");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["verdict"], "infra_error");
  EXPECT_EQ(r["signature"], "infra_error:workdir");
  EXPECT_NE(r["evidence"].get<std::string>().find(blocker), std::string::npos) << r["evidence"];
  EXPECT_TRUE(runner.started().empty());
}

}  // namespace
}  // namespace gauntlet
