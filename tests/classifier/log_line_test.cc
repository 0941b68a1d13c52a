// Prefix parsing: which rank wrote a line, at which level, and the message.
#include <gtest/gtest.h>

#include "classifier/log_line.h"
#include "classifier/traceback.h"

using namespace gauntlet;
using namespace gauntlet::classifier;

TEST(LogLine, Torchrun) {
  auto l = ParseLogLine("[rank3]:   File \"/x/y.py\", line 3, in f");
  EXPECT_EQ(l.rank, "rank3");
  EXPECT_EQ(l.message, "  File \"/x/y.py\", line 3, in f");
  auto g = ParseLogLine("[rank0]:[E0601 13:10:01.000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught");
  EXPECT_EQ(g.rank, "rank0");
  EXPECT_EQ(g.level, LogLevel::kError);
  EXPECT_EQ(g.message, "[Rank 0] Watchdog caught");
}

TEST(LogLine, SglangAndVllm) {
  auto s = ParseLogLine("[2025-06-01 12:00:00 TP2] Scheduler hit an exception: Traceback (most recent call last):");
  EXPECT_EQ(s.rank, "tp2");
  EXPECT_EQ(s.message, "Scheduler hit an exception: Traceback (most recent call last):");
  EXPECT_EQ(ParseLogLine("[2025-06-01 12:00:00 DP1 TP3 EP3] x").rank, "dp1-tp3-ep3");
  EXPECT_EQ(ParseLogLine("[2024-11-02 08:00:00] [TP 0] x").rank, "tp0");
  auto v = ParseLogLine("(EngineCore_DP0 pid=4711) ERROR 06-01 12:00:00 [core.py:586]   File \"a.py\", line 1");
  EXPECT_EQ(v.rank, "enginecore_dp0");
  EXPECT_EQ(v.level, LogLevel::kError);
  EXPECT_EQ(v.message, "  File \"a.py\", line 1");
  EXPECT_EQ(ParseLogLine("(VllmWorker rank=2 pid=99) INFO 06-01 12:00:00 [w.py:1] hi").rank, "rank2");
  EXPECT_EQ(ParseLogLine("WARNING 06-01 12:00:00 [x.py:9] careful").level, LogLevel::kWarning);
}

TEST(LogLine, NcclAndPlain) {
  auto n = ParseLogLine("node1:2211:2390 [3] NCCL WARN Cuda failure 'out of memory'");
  EXPECT_EQ(n.rank, "gpu3");
  EXPECT_EQ(n.message, "NCCL WARN Cuda failure 'out of memory'");
  auto p = ParseLogLine("RuntimeError: boom");
  EXPECT_EQ(p.rank, "");
  EXPECT_EQ(p.message, "RuntimeError: boom");
  EXPECT_EQ(ParseLogLine("WARNING:root:careful").level, LogLevel::kWarning);
}

TEST(Traceback, ExceptionLineShapes) {
  auto e = ParseExceptionLine("torch.OutOfMemoryError: CUDA out of memory.");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "OutOfMemoryError");
  EXPECT_EQ(e->message, "CUDA out of memory.");
  EXPECT_TRUE(ParseExceptionLine("KeyboardInterrupt"));
  EXPECT_TRUE(ParseExceptionLine("triton.runtime.errors.OutOfResources: out of resource: shared memory"));
  EXPECT_FALSE(ParseExceptionLine("INFO 06-01 something"));
  EXPECT_FALSE(ParseExceptionLine("Loading safetensors: 100%"));
  EXPECT_FALSE(ParseExceptionLine("  File \"x.py\""));
}

TEST(Traceback, TracksInnermostFrame) {
  TracebackTracker t;
  EXPECT_EQ(t.Observe("Traceback (most recent call last):"), TracebackTracker::Role::kOpener);
  EXPECT_EQ(t.Observe("  File \"/a/outer.py\", line 1, in main"), TracebackTracker::Role::kFrame);
  EXPECT_EQ(t.Observe("    run()"), TracebackTracker::Role::kBody);
  EXPECT_EQ(t.Observe("  File \"/a/inner.py\", line 9, in run"), TracebackTracker::Role::kFrame);
  EXPECT_EQ(t.Observe("    ^^^^^"), TracebackTracker::Role::kBody);
  EXPECT_EQ(t.Observe("ValueError: bad"), TracebackTracker::Role::kException);
  EXPECT_EQ(t.innermost_file(), "inner.py");
  EXPECT_TRUE(t.open()) << "the next line may still continue a multi-line message";
  EXPECT_EQ(t.Observe("all done"), TracebackTracker::Role::kNone);
  EXPECT_FALSE(t.open());
}

TEST(LogLine, LevelsThatMakeRefusalsAdvisory) {
  EXPECT_EQ(ParseLogLine("node1:17:17 [0] NCCL INFO NVLS multicast support is not available on dev 0").level,
            LogLevel::kInfo);
  auto g = ParseLogLine("W1201 04:15:45.718000 90001 torch/distributed/elastic/multiprocessing/api.py:900] Sending SIGTERM");
  EXPECT_EQ(g.level, LogLevel::kWarning);
  EXPECT_EQ(g.message, "Sending SIGTERM");
  EXPECT_EQ(ParseLogLine("E1201 04:15:46.102000 90001 api.py:874] failed (exitcode: 1)").level, LogLevel::kError);
}
