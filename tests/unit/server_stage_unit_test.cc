// The server stage's steps that settle before any request reaches the server, with a scripted
// server process (tests/support/fake_process_runner.h): a stop while it loads, a ready timeout with
// and without a log that explains it, a stage spec it cannot run. Time is a FakeWorkerClock, so
// a ready timeout passes without real time. The ready probe, smoke prompts
// and benchmark against a real server are tests/integration/server_stage_test.cc's.
#include "workers/server_stage.h"

#include <gtest/gtest.h>

#include "tests/support/fake_process_runner.h"
#include "tests/support/fake_worker_clock.h"
#include "tests/support/harness.h"

namespace gauntlet {
using proc::ProcessSpec;
using classifier::ClassifyText;
using classifier::Classification;
using classifier::ExitInfo;
namespace {
using nlohmann::json;

class ServerStageUnitTest : public ::testing::Test {
 protected:
  ServerStageUnitTest() {
    ctx.trial = 7;
    ctx.workdir = dir.path();
    ctx.log = &log;
    ctx.processes = &runner;
    ctx.kill_grace = std::chrono::milliseconds(10);
    ctx.clock = &clock;
    runner.clock = &clock;
  }
  // The server takes 20 ms to start: the ready deadline has passed by the time the ready loop
  // first looks, so no probe is sent.
  std::function<void(const ProcessSpec&)> SlowStart() {
    return [this](const ProcessSpec&) { clock.Advance(std::chrono::milliseconds(20)); };
  }
  std::string Log() { return log.Peek(1 << 20).second; }

  test::FakeWorkerClock clock;
  test::TempDir dir;
  worker::LogSink log;
  test::FakeProcessRunner runner;
  worker::TrialContext ctx;
};

TEST_F(ServerStageUnitTest, AStopWhileTheServerLoadsCancelsTheStageAndStopsTheServer) {
  test::FakeProgram p;
  p.output = {"Loading weights\n"};
  p.until_stopped = true;
  runner.Add("serve", p);
  ctx.should_stop = [] { return true; };

  worker::StageOutcome o = worker::RunServerStage(ctx, {{"name", "e2e"}, {"argv", {"serve", "--port={port}"}}}, {});

  EXPECT_EQ(o.verdict, Verdict::kCancelled);
  EXPECT_EQ(o.signature, "cancelled:stopped");
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0) << "the server must not outlive its stage";
  ASSERT_EQ(runner.started().size(), 1u);
  EXPECT_NE(runner.started()[0].argv[1], "--port={port}") << "the port placeholder is filled in";
  EXPECT_NE(Log().find("=== stage e2e ended: cancelled"), std::string::npos);
}

TEST_F(ServerStageUnitTest, AReadyTimeoutKeepsWhatTheLogSaysAboutTheHang) {
  const std::string out =
      "Loading weights\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.06 GiB is free.\n";
  test::FakeProgram p;
  p.output = {out};
  p.until_stopped = true;
  p.on_start = SlowStart();
  runner.Add("serve", p);

  worker::StageOutcome o =
      worker::RunServerStage(ctx, {{"name", "e2e"}, {"argv", {"serve"}}, {"ready", {{"timeout_s", 0.001}}}}, {});

  ExitInfo hung;
  hung.timed_out = true;
  const Classification expected = ClassifyText(out, hung);
  ASSERT_NE(expected.verdict, Verdict::kTimeout) << "the fixture's log must explain the hang";
  EXPECT_EQ(o.verdict, expected.verdict);
  EXPECT_EQ(o.signature, expected.signature);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(ServerStageUnitTest, AReadyTimeoutWithoutEvidenceIsServerNotReady) {
  test::FakeProgram p;
  p.until_stopped = true;
  p.on_start = SlowStart();
  runner.Add("serve", p);

  worker::StageOutcome o = worker::RunServerStage(
      ctx, {{"name", "e2e"}, {"argv", {"serve"}}, {"ready", {{"path", "/ping"}, {"timeout_s", "{ready_s}"}}}}, {});

  // "{ready_s}" is no config parameter here, so it stays text: not a number of seconds.
  EXPECT_EQ(o.verdict, Verdict::kCrashed);
  EXPECT_EQ(o.signature, "crashed:invalid_stage");
  EXPECT_TRUE(runner.started().empty()) << "a stage spec that cannot run starts nothing";

  ctx.config = {{"ready_s", "0.001"}};
  o = worker::RunServerStage(
      ctx, {{"name", "e2e"}, {"argv", {"serve"}}, {"ready", {{"path", "/ping"}, {"timeout_s", "{ready_s}"}}}}, {});

  EXPECT_EQ(o.verdict, Verdict::kTimeout);
  EXPECT_EQ(o.signature, "timeout:server_not_ready");
  EXPECT_NE(o.evidence.find("/ping 200"), std::string::npos) << o.evidence;
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(ServerStageUnitTest, AMissingServerProgramIsTheNodesInfraError) {
  worker::StageOutcome o = worker::RunServerStage(ctx, {{"name", "e2e"}, {"argv", {"no-such-server"}}}, {});

  EXPECT_EQ(o.verdict, Verdict::kInfraError);
  EXPECT_EQ(o.signature, "infra_error:program_not_found:no-such-server");
  EXPECT_NE(o.evidence.find("no-such-server"), std::string::npos);
}

// The kernel's OOM killer ends a server at its cgroup's memory.max with SIGKILL; memory.events'
// oom_kill tells that from anyone's SIGKILL, as it does for a command stage (one JudgeLimits).
TEST_F(ServerStageUnitTest, AServerTheKernelKilledForMemoryIsOomNamingTheLimit) {
  test::FakeProgram p;
  p.output = {"Loading weights\n"};
  p.exit_code.reset();
  p.signal = SIGKILL;
  p.oom_killed = true;
  runner.Add("serve", p);
  ctx.suite = json::object();

  worker::StageOutcome o = worker::RunServerStage(ctx, {{"name", "e2e"}, {"argv", {"serve"}}, {"limits", {{"memory_mb", 96}}}}, {});

  EXPECT_EQ(o.verdict, Verdict::kOom);
  EXPECT_EQ(o.signature, "oom:memory_limit");
  EXPECT_NE(o.evidence.find("limit of 96 MiB"), std::string::npos) << o.evidence;
  EXPECT_EQ(runner.live(), 0);

  // The same SIGKILL without oom_kill is someone's kill: a crash, not an oom.
  p.oom_killed = false;
  runner.Add("serve", p);
  o = worker::RunServerStage(ctx, {{"name", "e2e"}, {"argv", {"serve"}}, {"limits", {{"memory_mb", 96}}}}, {});
  EXPECT_NE(o.verdict, Verdict::kOom);
  EXPECT_EQ(o.signature.rfind("oom:", 0), std::string::npos) << o.signature;
}

}  // namespace
}  // namespace gauntlet
