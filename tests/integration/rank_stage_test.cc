// A "ranks" command stage with real processes (fixture_stage.py --mode ranks): rank 1 raises while
// rank 0 hangs ignoring SIGTERM, as a peer stuck in NCCL would. The stage must end both ranks long
// before its timeout, and its verdict must be rank 1's error, not rank 0's end. First through
// RunCommandStage with the real ProcessRunner, then end to end through a daemon and a worker.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "tests/support/harness.h"
#include "workers/command_stage.h"
#include "proc/process.h"
#include "workers/rank_group.h"

namespace gauntlet::test {
using proc::ProcessRunner;
using proc::ProcessSpec;
using proc::SystemProcessRunner;
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

pid_t ReadPid(const std::string& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

json RanksStage(const std::string& dir, int count = 2, int timeout_s = 120) {
  return {{"name", "ranks"},
          {"kind", "command"},
          {"timeout_s", timeout_s},
          {"ranks", 2},
          {"argv",
           {"python3", SourceDir() + "/tests/fixtures/suites/fixture_stage.py", "--mode", "ranks", "--seconds", "1000",
            "--dir", dir, "--count", std::to_string(count)}}};
}

class RankStageTest : public ::testing::Test {
 protected:
  RankStageTest() {
    ctx.trial = 7;
    ctx.node_name = "n1";
    ctx.workdir = dir.path();
    ctx.log = &log;
    ctx.processes = &runner;
    ctx.kill_grace = std::chrono::milliseconds(300);
  }
  std::string Log() { return log.Peek(1 << 20).second; }

  TempDir dir;
  worker::LogSink log;
  SystemProcessRunner runner;
  worker::TrialContext ctx;
};

TEST(RankEnv, TorchrunsVariablesAndOneResultFilePerRank) {
  std::map<std::string, std::string> base = {{"GAUNTLET_RESULT_FILE", "/w/run.result.json"}, {"PATH", "/bin"}};
  auto r0 = worker::RankEnv(base, 0, 2, 4242);
  EXPECT_EQ(r0["RANK"], "0");
  EXPECT_EQ(r0["LOCAL_RANK"], "0");
  EXPECT_EQ(r0["WORLD_SIZE"], "2");
  EXPECT_EQ(r0["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(r0["MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(r0["MASTER_PORT"], "4242");
  EXPECT_EQ(r0["GAUNTLET_RESULT_FILE"], "/w/run.result.json") << "rank 0's file is the stage's result";
  EXPECT_EQ(r0["PATH"], "/bin");
  auto r1 = worker::RankEnv(base, 1, 2, 4242);
  EXPECT_EQ(r1["RANK"], "1");
  EXPECT_EQ(r1["GAUNTLET_RANK"], "1");
  EXPECT_EQ(r1["GAUNTLET_RESULT_FILE"], "/w/run.result.rank1.json");
  EXPECT_EQ(worker::RankEnv({}, 1, 2, 1).count("GAUNTLET_RESULT_FILE"), 0u) << "no result file, none invented";
}

TEST_F(RankStageTest, ARankThatRaisesEndsItsHungPeerAndTheVerdictIsItsError) {
  const std::string rdir = dir.path() + "/ranks";
  worker::StageOutcome o = worker::RunCommandStage(ctx, RanksStage(rdir), {});
  EXPECT_EQ(o.verdict, Verdict::kCrashed) << o.evidence;
  EXPECT_EQ(o.signature, "crashed:RuntimeError:fixture rank <n> lost its shard@fixture_stage.py");
  EXPECT_EQ(o.evidence, "[rank1]: RuntimeError: fixture rank 1 lost its shard");
  EXPECT_EQ(o.exit_code, 1) << "the stage ends as its first failed rank did";
  const pid_t rank0 = ReadPid(rdir + "/rank0.pid");
  ASSERT_GT(rank0, 0) << Log();
  EXPECT_FALSE(ProcessAlive(rank0)) << "rank 0 outlived its stage";
  // Each rank's lines under its torchrun prefix, and the worker's line about who ended first.
  const std::string l = Log();
  EXPECT_NE(l.find("[rank0]: fixture: waiting in all_reduce"), std::string::npos) << l;
  EXPECT_NE(l.find("[rank1]: Traceback (most recent call last):"), std::string::npos) << l;
  EXPECT_NE(l.find("[rank1]: gauntlet: rank 1 ended first (exit code 1); ending the other ranks"), std::string::npos) << l;
  EXPECT_NE(l.find("(2 ranks)"), std::string::npos) << l;
}

TEST_F(RankStageTest, TheGroupEndsTheHungRankItselfNotItsDeadline) {
  // Rank 0 ignores SIGTERM and would sleep 1000 s, past the 120 s deadline: it must be ended by the
  // group (stopped, then SIGKILLed after the grace) as soon as rank 1 fails, not at the deadline.
  const std::string rdir = dir.path() + "/ranks";
  json stage = RanksStage(rdir);
  ProcessSpec spec;
  for (auto& a : stage["argv"]) spec.argv.push_back(a);
  spec.env = worker::StageEnv(ctx, stage, 0, dir.path() + "/r.json");
  spec.cwd = dir.path();
  std::string out;
  auto g = worker::RunRankGroup(runner, spec, 2, worker::FreePort(), std::chrono::steady_clock::now() + std::chrono::seconds(120),
                        [&](std::string_view s) { out += s; }, {}, std::chrono::milliseconds(300),
                        std::chrono::milliseconds(50));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->first_failed, 1) << out;
  EXPECT_EQ(g->exit.exit_code, 1);
  ASSERT_EQ(g->ranks.size(), 2u);
  EXPECT_TRUE(g->ranks[0].stopped) << out;
  EXPECT_FALSE(g->ranks[0].timed_out) << "rank 0 was left to the deadline";
  EXPECT_EQ(g->ranks[0].signal, SIGKILL) << "it ignored SIGTERM, so the grace ran out";
  EXPECT_FALSE(ProcessAlive(ReadPid(rdir + "/rank0.pid")));
}

TEST_F(RankStageTest, RanksThatAllHangAreATimeoutAndAllEnd) {
  const std::string rdir = dir.path() + "/ranks";
  worker::StageOutcome o = worker::RunCommandStage(ctx, RanksStage(rdir, /*count=*/3, /*timeout_s=*/5), {});
  EXPECT_EQ(o.verdict, Verdict::kTimeout) << o.evidence;
  EXPECT_EQ(o.signature, "timeout:ranks");
  for (int r : {0, 1}) {
    const pid_t pid = ReadPid(rdir + "/rank" + std::to_string(r) + ".pid");
    ASSERT_GT(pid, 0) << Log();
    EXPECT_FALSE(ProcessAlive(pid)) << "rank " << r << " outlived its stage";
  }
}

TEST_F(RankStageTest, ACancelEndsEveryRank) {
  const std::string rdir = dir.path() + "/ranks";
  ctx.should_stop = [&] { return fs::exists(rdir + "/rank0.pid") && fs::exists(rdir + "/rank1.pid"); };
  worker::StageOutcome o = worker::RunCommandStage(ctx, RanksStage(rdir, /*count=*/3), {});
  EXPECT_EQ(o.verdict, Verdict::kCancelled) << o.evidence;
  for (int r : {0, 1}) EXPECT_FALSE(ProcessAlive(ReadPid(rdir + "/rank" + std::to_string(r) + ".pid")));
}

TEST_F(RankStageTest, AMissingProgramIsTheNodesFaultNamingIt) {
  json stage = RanksStage(dir.path());
  stage["argv"] = {"no-such-program-anywhere"};
  worker::StageOutcome o = worker::RunCommandStage(ctx, stage, {});
  EXPECT_EQ(o.verdict, Verdict::kInfraError);
  EXPECT_EQ(o.signature, "infra_error:program_not_found:no-such-program-anywhere");
}

TEST(RankFleet, AWorkerEndsEveryRankWhenOneFailsAndTheTrialNamesIt) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "300"});
  const std::string rdir = dir.path() + "/ranks";
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-ranks"}, {"parameters", {{"dir", {rdir}}}}}, 201);
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(60));
  EXPECT_EQ(done["by_verdict"]["crashed"], 1) << done.dump();
  json trials = d.GetJson("/api/v1/trials?sweep=" + sweep["id"].dump());
  json t = d.GetJson("/api/v1/trials/" + trials["items"][0]["id"].dump());
  EXPECT_EQ(t["signature"], "crashed:RuntimeError:fixture rank <n> lost its shard@fixture_stage.py") << t.dump();
  EXPECT_EQ(t["result"]["evidence"], "[rank1]: RuntimeError: fixture rank 1 lost its shard");
  EXPECT_FALSE(ProcessAlive(ReadPid(rdir + "/rank0.pid")));
}

json RankGpus(int n) {
  json g = json::array();
  for (int i = 0; i < n; ++i)
    g.push_back({{"index", i}, {"name", "NVIDIA H200"}, {"uuid", "GPU-h200-" + std::to_string(i)},
                 {"compute_capability", "9.0"}, {"memory_mb", 143771}});
  return {{"gpus", g}};
}

std::vector<json> Records(const std::string& dir) {
  std::vector<json> out;
  for (auto& f : fs::directory_iterator(dir)) out.push_back(json::parse(std::ifstream(f.path())));
  return out;
}

// Issue 23's first point on CPU, with a declared 2-GPU inventory: a 2-GPU trial is two ranks that
// both see both GPUs, and two 1-GPU trials run at once as one rank each, on different GPUs.
TEST(RankFleet, ATwoGpuNodeGivesRanksTheirGpus) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  auto w = StartWorker(dir.path(), d.url(), "h200x2", RankGpus(2));
  const std::string both = dir.path() + "/both", one = dir.path() + "/one";
  json s2 = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-rankgpus"}, {"targets", {{{"gpus", 2}}}},
                                          {"parameters", {{"i", {"1"}}, {"dir", {both}}, {"count", {"2"}}}}},
                       201);
  EXPECT_EQ(d.WaitSweep(s2["id"])["by_verdict"]["passed"], 1);
  std::set<std::string> ranks;
  for (auto& r : Records(both)) {
    ranks.insert(r["rank"].get<std::string>());
    EXPECT_EQ(r["world"], "2");
    EXPECT_EQ(r["cvd"], "0,1") << "every rank sees the trial's two GPUs";
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"}));
  // Each 1-GPU trial waits for the other's record: both passing means they ran at the same time.
  json s1 = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-rankgpus"},
                                          {"parameters", {{"i", {"1", "2"}}, {"dir", {one}}, {"count", {"2"}}}}},
                       201);
  EXPECT_EQ(d.WaitSweep(s1["id"])["by_verdict"]["passed"], 2);
  std::set<std::string> gpus, trials;
  for (auto& r : Records(one)) {
    EXPECT_EQ(r["world"], "1");
    EXPECT_EQ(r["rank"], "0");
    gpus.insert(r["cvd"].get<std::string>());
    trials.insert(r["trial"].get<std::string>());
  }
  EXPECT_EQ(gpus, (std::set<std::string>{"0", "1"})) << "one GPU each, not the same one";
  EXPECT_EQ(trials.size(), 2u);
}

}  // namespace
}  // namespace gauntlet::test
