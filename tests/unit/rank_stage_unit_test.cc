// Rank stages over scripted processes (tests/support/fake_process_runner.h): each rank's
// environment, its lines under their "[rankN]: " prefix whatever the chunking, the first failure
// ending the other ranks, and which rank's exit and result file the stage reports. The same with
// real processes: tests/integration/rank_stage_test.cc.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/fake_process_runner.h"
#include "tests/support/harness.h"
#include "workers/command_stage.h"

namespace gauntlet {
using proc::ProcessSpec;
namespace {
using nlohmann::json;

class RankStageUnitTest : public ::testing::Test {
 protected:
  RankStageUnitTest() {
    ctx.trial = 9;
    ctx.node_name = "n1";
    ctx.workdir = dir.path();
    ctx.log = &log;
    ctx.processes = &runner;
    ctx.gpus = {0, 1};
  }
  worker::StageOutcome Run(json ranks = 2) {
    return worker::RunCommandStage(ctx, {{"name", "dist"}, {"argv", {"prog"}}, {"ranks", ranks}, {"timeout_s", 30}}, {});
  }
  std::string Log() { return log.Peek(1 << 20).second; }
  static int RankOf(const ProcessSpec& s) { return std::stoi(s.env.at("RANK")); }

  test::TempDir dir;
  worker::LogSink log;
  test::FakeProcessRunner runner;
  worker::TrialContext ctx;
};

TEST_F(RankStageUnitTest, TheFirstFailedRankEndsTheOthersAndDecides) {
  test::FakeProgram p;
  p.adapt = [](const ProcessSpec& s, test::FakeProgram& me) {
    if (RankOf(s) == 1) {
      // A traceback cut mid-line across reads, with no newline at the very end.
      me.output = {"Traceback (most recent call last):\n  File \"/w/tp.py\", li", "ne 3, in f\nRuntimeError: sha",
                   "rd lost"};
      me.exit_code = 1;
    } else {
      me.output = {"waiting in all_reduce\n", "half a line"};
      me.until_stopped = true;  // a peer stuck in NCCL
    }
  };
  runner.Add("prog", p);
  worker::StageOutcome o = Run();
  EXPECT_EQ(o.verdict, Verdict::kCrashed);
  EXPECT_EQ(o.signature, "crashed:RuntimeError:shard lost@tp.py");
  EXPECT_EQ(o.evidence, "[rank1]: RuntimeError: shard lost");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.timed_out(), 0) << "rank 0 was ended by the group, not left to its deadline";
  EXPECT_EQ(runner.live(), 0);
  const std::string l = Log();
  EXPECT_NE(l.find("[rank1]:   File \"/w/tp.py\", line 3, in f\n"), std::string::npos) << l;
  EXPECT_NE(l.find("[rank0]: waiting in all_reduce\n"), std::string::npos) << l;
  EXPECT_NE(l.find("[rank0]: half a line\n"), std::string::npos) << "a last partial line is kept: " << l;
  EXPECT_NE(l.find("[rank1]: gauntlet: rank 1 ended first (exit code 1); ending the other ranks\n"), std::string::npos);
}

TEST_F(RankStageUnitTest, EachRankGetsTorchrunsEnvironment) {
  runner.Add("prog", test::FakeProgram{});
  ctx.gpus = {2, 3, 5};
  worker::StageOutcome o = Run("gpus");
  EXPECT_EQ(o.verdict, Verdict::kPassed) << o.evidence;
  auto started = runner.started();
  ASSERT_EQ(started.size(), 3u) << "\"gpus\" is one rank per GPU of the trial";
  for (size_t k = 0; k < started.size(); ++k) {
    const auto& env = started[k].env;
    EXPECT_EQ(env.at("RANK"), std::to_string(k));
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(k));
    EXPECT_EQ(env.at("WORLD_SIZE"), "3");
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), started[0].env.at("MASTER_PORT")) << "one rendezvous for all ranks";
    EXPECT_EQ(env.at("MASTER_PORT"), env.at("GAUNTLET_PORT"));
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3,5") << "every rank sees the trial's GPUs";
  }
  EXPECT_NE(started[1].env.at("GAUNTLET_RESULT_FILE"), started[0].env.at("GAUNTLET_RESULT_FILE"));
}

TEST_F(RankStageUnitTest, OnlyRankZerosResultFileIsTheStagesResult) {
  test::FakeProgram p;
  p.on_start = [](const ProcessSpec& s) {
    const bool zero = RankOf(s) == 0;
    std::ofstream(s.env.at("GAUNTLET_RESULT_FILE"))
        << json{{"verdict", zero ? "passed" : "wrong_output"}, {"metrics", {{"busbw_gbps", zero ? 321.5 : 1.0}}}}.dump();
  };
  runner.Add("prog", p);
  worker::StageOutcome o = Run();
  EXPECT_EQ(o.verdict, Verdict::kPassed);
  EXPECT_EQ(o.metrics["busbw_gbps"]["value"], 321.5);
}

TEST_F(RankStageUnitTest, ASilentDeathBySignalIsThatRanksCrash) {
  test::FakeProgram p;
  p.adapt = [](const ProcessSpec& s, test::FakeProgram& me) {
    if (RankOf(s) == 1) {
      me.exit_code.reset();
      me.signal = 11;
    } else {
      me.output = {"all_reduce: 256 MiB\n"};
      me.until_stopped = true;
    }
  };
  runner.Add("prog", p);
  worker::StageOutcome o = Run();
  EXPECT_EQ(o.verdict, Verdict::kCrashed);
  EXPECT_EQ(o.signature, "crashed:signal:SIGSEGV");
  EXPECT_EQ(o.signal, "SIGSEGV");
  EXPECT_EQ(o.evidence.rfind("[rank1]: gauntlet: rank 1 ended first (signal SIGSEGV)", 0), 0u) << o.evidence;
}

TEST_F(RankStageUnitTest, AnExitCodeAloneStillNamesTheRank) {
  test::FakeProgram p;
  p.adapt = [](const ProcessSpec& s, test::FakeProgram& me) {
    if (RankOf(s) == 0) {
      me.exit_code = 3;
    } else {
      me.until_stopped = true;
    }
  };
  runner.Add("prog", p);
  worker::StageOutcome o = Run();
  EXPECT_EQ(o.signature, "crashed:exit_code:3");
  EXPECT_NE(o.evidence.find("rank 0 ended first"), std::string::npos) << o.evidence;
}

TEST_F(RankStageUnitTest, RanksThatAllExitZeroPassAndNoneIsStopped) {
  runner.Add("prog", test::FakeProgram{});
  worker::StageOutcome o = Run(4);
  EXPECT_EQ(o.verdict, Verdict::kPassed);
  EXPECT_EQ(runner.started().size(), 4u);
  EXPECT_EQ(runner.stopped(), 0);
  EXPECT_EQ(Log().find("ended first"), std::string::npos);
}

TEST_F(RankStageUnitTest, AMissingProgramStartsNoRank) {
  worker::StageOutcome o = Run();
  EXPECT_EQ(o.verdict, Verdict::kInfraError);
  EXPECT_EQ(o.signature, "infra_error:program_not_found:prog");
  EXPECT_EQ(runner.live(), 0);
}

}  // namespace
}  // namespace gauntlet
