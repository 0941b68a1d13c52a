// Rank triage: reading what launchers say about ranks (rank_triage.h), and the classifier naming
// the rank that failed first rather than the peer that then timed out (docs/CLASSIFIER.md "Ranks").
// The corpus (75-81) holds whole realistic logs; these pin the rules one at a time.
#include <gtest/gtest.h>

#include "classifier/classifier.h"
#include "classifier/rank_triage.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {
const std::string kWatchdog0 =
    "[rank0]:[E1201 10:00:00.000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=20000) ran for 20001 milliseconds "
    "before timing out.\n";
}  // namespace

TEST(RankTriage, TorchrunPrefix) {
  EXPECT_EQ(TorchrunRankPrefix("[rank0]: hello"), 0);
  EXPECT_EQ(TorchrunRankPrefix("[rank17]:[E1201 10:00:00.000 x.cpp:1] y"), 17);
  EXPECT_EQ(TorchrunRankPrefix("[rank]: x"), -1);
  EXPECT_EQ(TorchrunRankPrefix("[rank1] x"), -1);
  EXPECT_EQ(TorchrunRankPrefix(" [rank1]: x"), -1) << "only at the start of the line";
  EXPECT_EQ(TorchrunRankPrefix("[Rank 1] Watchdog"), -1) << "NCCL's own tag is inside the message";
}

TEST(RankTriage, SpawnMessages) {
  EXPECT_EQ(SpawnFailedProcess("-- Process 1 terminated with the following error:"), 1);
  EXPECT_EQ(SpawnFailedProcess("  -- Process 12 terminated with the following error:  "), 12);
  EXPECT_EQ(SpawnFailedProcess("-- Process terminated with the following error:"), -1);
  EXPECT_EQ(SpawnFailedProcess("-- Process 1 terminated with the following errors: x"), -1);

  auto s = ParseSpawnExit("process 1 terminated with signal SIGSEGV");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->process, 1);
  EXPECT_EQ(s->signal, 11);
  EXPECT_FALSE(s->exit_code);
  auto c = ParseSpawnExit("process 0 terminated with exit code 3");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->process, 0);
  EXPECT_EQ(c->exit_code, 3);
  EXPECT_FALSE(ParseSpawnExit("process 0 terminated with signal SIGNOPE"));
  EXPECT_FALSE(ParseSpawnExit("process terminated with exit code 1"));
}

TEST(RankTriage, RootCauseBlockFields) {
  RootCauseReader r;
  EXPECT_FALSE(r.active());
  r.Start();
  for (const char* l : {"[1]:", "  time      : 2026-12-01_13:20:09", "  rank      : 1 (local_rank: 1)",
                        "  exitcode  : -11 (pid: 7711)", "  error_file: <N/A>",
                        "  traceback : Signal 11 (SIGSEGV) received by PID 7711"}) {
    r.Observe(l);
    EXPECT_TRUE(r.active()) << l;
  }
  EXPECT_EQ(r.rank(), 1);
  EXPECT_EQ(r.exitcode(), -11);
  EXPECT_EQ(r.evidence(), "traceback : Signal 11 (SIGSEGV) received by PID 7711");
  EXPECT_FALSE(r.reprinting());
  r.Observe("==============================================");
  EXPECT_FALSE(r.active());
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.rank(), 1) << "the fields survive the block's end";
}

TEST(RankTriage, RootCauseReprintsAnErrorFile) {
  RootCauseReader r;
  r.Start();
  r.Observe("  rank      : 3 (local_rank: 1)");
  r.Observe("  error_file: /logs/attempt_0/1/error.json");
  EXPECT_FALSE(r.reprinting());
  r.Observe("  traceback :");
  EXPECT_TRUE(r.reprinting()) << "the error file's traceback follows";
  EXPECT_EQ(r.rank(), 3) << "the global rank, not the local one";
  r.Observe("=====");
  EXPECT_FALSE(r.reprinting());
  RootCauseReader none;
  none.Start();
  none.Observe("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html");
  EXPECT_FALSE(none.reprinting());
}

TEST(RankTriage, ReprintedSpawnTracebackBelongsToItsRank) {
  const std::string log =
      "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
      "-- Process 3 terminated with the following error:\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py\", line 90, in _wrap\n"
      "    fn(i, *args)\n"
      "  File \"/w/prog.py\", line 9, in run\n"
      "    raise ValueError(\"bad shard\")\n"
      "ValueError: bad shard\n";
  Classification c = ClassifyText(log, ExitCode(1));
  EXPECT_EQ(c.verdict, Verdict::kCrashed);
  EXPECT_EQ(c.signature, "crashed:ValueError:bad shard@prog.py") << "not the parent's ProcessRaisedException";
  EXPECT_EQ(c.rank, "rank3");
  // Lines after the reprint are the parent's again.
  Classification later = ClassifyText(log + "RuntimeError: parent's own\n", ExitCode(1));
  EXPECT_EQ(later.rank, "rank3");
}

TEST(RankTriage, TheRankThatRaisedFirstWinsOverThePeersTimeout) {
  const std::string log = "[rank1]: Traceback (most recent call last):\n"
                          "[rank1]:   File \"/w/tp.py\", line 4, in f\n"
                          "[rank1]: RuntimeError: injected fault on rank 1\n" +
                          kWatchdog0;
  Classification c = ClassifyText(log, ExitCode(1));
  EXPECT_EQ(c.signature, "crashed:RuntimeError:injected fault on rank <n>@tp.py");
  EXPECT_EQ(c.rank, "rank1");
  EXPECT_EQ(c.evidence, "[rank1]: RuntimeError: injected fault on rank 1");
  // Even when the timeout was printed first (the peer's log flushed earlier), a raised error is a
  // cause and a watchdog timeout a consequence.
  Classification swapped = ClassifyText(kWatchdog0 +
                                            "[rank1]: Traceback (most recent call last):\n"
                                            "[rank1]:   File \"/w/tp.py\", line 4, in f\n"
                                            "[rank1]: RuntimeError: injected fault on rank 1\n",
                                        ExitCode(1));
  EXPECT_EQ(swapped.rank, "rank1");
}

TEST(RankTriage, ASilentRankIsTheHangOnlyWhenItWasSeen) {
  const std::string both_seen = "[rank0]: start\n[rank1]: start\n[rank1]: fault=hang: sleeping\n" + kWatchdog0;
  Classification c = ClassifyText(both_seen, ExitCode(1));
  EXPECT_EQ(c.verdict, Verdict::kTimeout);
  EXPECT_EQ(c.signature, "timeout:rank_hang");
  EXPECT_EQ(c.rank, "rank1");
  EXPECT_NE(c.evidence.find("rank1 never joined the collective that timed out on rank0"), std::string::npos)
      << c.evidence;
  // The same on a stage that hit its limit instead of exiting.
  ExitInfo to;
  to.timed_out = true;
  EXPECT_EQ(ClassifyText(both_seen, to).signature, "timeout:rank_hang");
  // Only rank 0 ever wrote: nothing says another rank existed, so it stays the watchdog's.
  Classification alone = ClassifyText("[rank0]: start\n" + kWatchdog0, ExitCode(1));
  EXPECT_EQ(alone.signature, "timeout:nccl_watchdog");
  EXPECT_EQ(alone.rank, "rank0");
  // Both timed out: an NCCL-level hang, not one rank's.
  const std::string watchdog1 =
      "[rank1]:[E1201 10:00:00.000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE) ran for 20001 milliseconds before timing out.\n";
  EXPECT_EQ(ClassifyText(both_seen + watchdog1, ExitCode(1)).signature, "timeout:nccl_watchdog");
  // A rank that raised is a cause, never inferred away as a hang.
  Classification raised = ClassifyText(both_seen +
                                             "[rank1]: Traceback (most recent call last):\n"
                                             "[rank1]:   File \"/w/tp.py\", line 4, in f\n"
                                             "[rank1]: RuntimeError: boom\n",
                                         ExitCode(1));
  EXPECT_EQ(raised.verdict, Verdict::kCrashed);
  EXPECT_EQ(raised.rank, "rank1");
}

TEST(RankTriage, SpawnExitCodesOnlyNameARankThatSaidNothingElse) {
  const std::string parent =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/torch/multiprocessing/spawn.py\", line 196, in join\n"
      "    raise ProcessExitedException(\n"
      "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 7\n";
  Classification c = ClassifyText("[rank0]: ok\n[rank1]: ok\n" + parent, ExitCode(1));
  EXPECT_EQ(c.signature, "crashed:exit_code:7");
  EXPECT_EQ(c.rank, "rank1");
  // Rank 0's watchdog abort then its SIGABRT: the abort is the consequence, the hang of rank 1 the cause.
  std::string abort_parent = parent;
  abort_parent.replace(abort_parent.find("process 1 terminated with exit code 7"), 37,
                       "process 0 terminated with signal SIGABRT");
  Classification h = ClassifyText("[rank0]: ok\n[rank1]: ok\n" + kWatchdog0 + abort_parent, ExitCode(1));
  EXPECT_EQ(h.signature, "timeout:rank_hang");
  EXPECT_EQ(h.rank, "rank1");
}

TEST(RankTriage, SuiteRulesAndJsonCarryTheRank) {
  std::vector<SignatureRule> rules(1);
  rules[0].match = "fault=hang";
  rules[0].verdict = Verdict::kTimeout;
  rules[0].signature = "timeout:injected_hang";
  Classification c = ClassifyText("[rank0]: start\n[rank1]: fault=hang: sleeping\n", ExitCode(1), rules);
  EXPECT_EQ(c.signature, "timeout:injected_hang");
  EXPECT_EQ(c.rank, "rank1");
  EXPECT_EQ(ToJson(c)["rank"], "rank1");
  EXPECT_FALSE(ToJson(ClassifyText("all good\n", ExitCode(0))).contains("rank")) << "no rank, no field";
}
