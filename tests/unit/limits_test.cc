// Issue 31, "Limits end in the right verdict": a stage's cgroup gets memory.max and pids.max from
// the suite's or the stage's "limits" (defaults from the node's RAM), and a stage the kernel
// killed for memory is `oom` naming the limit, not crashed:signal:SIGKILL. The verdict is tested
// over the process seam; the kernel's side with real processes in real cgroups where the host
// delegates the memory and pids controllers, skipped (saying so) where it does not.
#include <gtest/gtest.h>

#include <fstream>

#include "core/stage_limits.h"
#include "core/suite.h"
#include "proc/process.h"
#include "proc/stage_cgroup.h"
#include "tests/support/fake_process_runner.h"
#include "tests/support/harness.h"
#include "workers/command_stage.h"

namespace gauntlet {
namespace {
using nlohmann::json;

// memory.events as Linux 6.x writes it (Documentation/admin-guide/cgroup-v2.rst), after a kill.
TEST(CgroupEvents, MemoryEventsAreParsedByKey) {
  const auto e = proc::ParseCgroupEvents("low 0\nhigh 0\nmax 37\noom 2\noom_kill 1\noom_group_kill 0\n");
  EXPECT_EQ(e.max, 37);
  EXPECT_EQ(e.oom, 2);
  EXPECT_EQ(e.oom_kill, 1);
  // pids.events: "max N"; malformed and unknown lines are skipped, a missing file is all zero.
  EXPECT_EQ(proc::ParseCgroupEvents("max 5").max, 5);
  const auto junk = proc::ParseCgroupEvents("oom_kill\nmax -3\noom_kill 99999999999999999999999\nfoo 1\n\n");
  EXPECT_EQ(junk.max, 0);
  EXPECT_EQ(junk.oom_kill, 0);
  EXPECT_EQ(proc::ParseCgroupEvents("").oom_kill, 0);
}

json SuiteWith(json suite_limits, json stage_limits) {
  json stage = {{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}};
  if (!stage_limits.is_null()) stage["limits"] = stage_limits;
  json s = {{"name", "lim"}, {"version", 1}, {"parameters", {{"p", {"a"}}}}, {"stages", {stage}}};
  if (!suite_limits.is_null()) s["limits"] = suite_limits;
  return s;
}

TEST(StageLimits, ValidatedWithTheFieldNamed) {
  EXPECT_TRUE(ParseSuite(SuiteWith({{"memory_mb", 512}, {"pids", 256}}, json())).ok());
  EXPECT_TRUE(ParseSuite(SuiteWith(json(), {{"memory_mb", 1024}})).ok());
  const std::vector<std::pair<json, std::string>> bad = {
      {SuiteWith({{"memory_mb", 1}}, json()), "limits.memory_mb"},
      {SuiteWith({{"memory_mb", "512"}}, json()), "limits.memory_mb"},
      {SuiteWith({{"pids", 0}}, json()), "limits.pids"},
      {SuiteWith({{"pids", 1.5}}, json()), "limits.pids"},
      {SuiteWith({{"cpus", 2}}, json()), "limits.cpus"},
      {SuiteWith(json::array(), json()), "limits"},
      {SuiteWith(json(), {{"memory_mb", int64_t{1} << 40}}), "stages[0].limits.memory_mb"},
  };
  for (const auto& [suite, field] : bad) {
    auto parsed = ParseSuite(suite);
    ASSERT_FALSE(parsed.ok()) << suite.dump();
    EXPECT_EQ(parsed.status().field(), field) << parsed.status().message();
  }
}

class LimitsStageTest : public ::testing::Test {
 protected:
  LimitsStageTest() {
    ctx.workdir = dir.path();
    ctx.log = &log;
    ctx.processes = &runner;
  }
  test::TempDir dir;
  worker::LogSink log;
  test::FakeProcessRunner runner;
  worker::TrialContext ctx;
};

TEST_F(LimitsStageTest, TheStagesLimitsWinThenTheSuitesThenTheNodesDefaults) {
  runner.Add("true", test::FakeProgram{});
  ctx.suite = json{{"limits", {{"memory_mb", 2048}, {"pids", 100}}}};
  (void)worker::RunCommandStage(ctx, {{"name", "a"}, {"argv", {"true"}}, {"limits", {{"memory_mb", 512}}}}, {});
  ctx.suite = json::object();
  (void)worker::RunCommandStage(ctx, {{"name", "b"}, {"argv", {"true"}}}, {});
  const auto started = runner.started();
  ASSERT_EQ(started.size(), 2u);
  EXPECT_EQ(started[0].memory_limit_bytes, int64_t{512} << 20);
  EXPECT_EQ(started[0].pids_limit, 100);
  const proc::DefaultLimits d = proc::DefaultStageLimits();
  EXPECT_GT(d.memory_bytes, 0);
  EXPECT_EQ(started[1].memory_limit_bytes, d.memory_bytes);
  EXPECT_EQ(started[1].pids_limit, d.pids);
}

TEST_F(LimitsStageTest, AStageTheKernelKilledForMemoryIsOomNamingTheLimit) {
  test::FakeProgram p;
  p.exit_code.reset();
  p.signal = SIGKILL;
  p.oom_killed = true;
  runner.Add("eater", p);
  worker::StageOutcome o = worker::RunCommandStage(ctx, {{"name", "eat"}, {"argv", {"eater"}}, {"limits", {{"memory_mb", 64}}}}, {});
  EXPECT_EQ(o.verdict, Verdict::kOom);
  EXPECT_EQ(o.signature, "oom:memory_limit");
  EXPECT_NE(o.evidence.find("limit of 64 MiB"), std::string::npos) << o.evidence;
  // The same SIGKILL without the cgroup's oom_kill is not an oom: it was someone's kill.
  test::FakeProgram k = p;
  k.oom_killed = false;
  runner.Add("killed", k);
  worker::StageOutcome o2 = worker::RunCommandStage(ctx, {{"name", "k"}, {"argv", {"killed"}}}, {});
  EXPECT_NE(o2.verdict, Verdict::kOom);
}

// The kernel's side, on whichever hierarchy holds the controllers here (v2, or v1 on a v1 or hybrid
// host). Skips where neither gives the worker a memory and pids controller (a container without
// delegation): the message says so.
class KernelLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    auto probe = proc::StageCgroup::Create(64 << 20, 64);
    if (!probe) GTEST_SKIP() << "SKIP: no cgroup (v2 or v1) to create here; stage limits cannot be tested";
    if (probe->memory_limit() == 0 || probe->pids_limit() == 0)
      GTEST_SKIP() << "SKIP: neither cgroup v2 (delegated) nor v1 gives this worker the memory and pids controllers";
    held_by = probe->LimitsHeldBy();
  }
  proc::ExitInfoProc RunSh(const std::string& script, int64_t memory_bytes, int64_t pids) {
    proc::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    spec.cwd = dir.path();
    spec.memory_limit_bytes = memory_bytes;
    spec.pids_limit = pids;
    auto p = proc::Process::Start(spec);
    EXPECT_TRUE(p.ok()) << p.status().message();
    if (!p.ok()) return {};
    return (*p)->Run(std::chrono::steady_clock::now() + std::chrono::seconds(60), [&](std::string_view s) { out.append(s); },
                     {}, std::chrono::milliseconds(200), std::chrono::milliseconds(20));
  }
  test::TempDir dir;
  std::string out;
  std::string held_by;  // "cgroup v2" or "cgroup v1": which hierarchy the tests ran on
};

TEST_F(KernelLimits, AMemoryEaterIsOomKilledAtMemoryMax) {
  // 1 GiB through a pipe into a shell variable, under a 64 MiB limit.
  const auto e = RunSh("x=$(head -c 1073741824 /dev/zero | tr '\\0' a); echo survived", 64 << 20, 64);
  EXPECT_TRUE(e.oom_killed) << held_by << ": " << out;
  EXPECT_EQ(e.memory_limit_bytes, 64 << 20);
  EXPECT_EQ(out.find("survived"), std::string::npos);
}

TEST_F(KernelLimits, AForkBombMeetsPidsMax) {
  const auto e = RunSh("i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo forked", 1 << 30, 32);
  EXPECT_TRUE(e.pids_limited) << held_by << ": " << out;
  EXPECT_EQ(e.pids_limit, 32);
}

}  // namespace
}  // namespace gauntlet
