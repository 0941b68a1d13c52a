// The scheduler as a pure state machine: a fake clock, a fake store, no threads.
#include <gtest/gtest.h>

#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet {
namespace {
using nlohmann::json;

using test::FakeClock;
using FakeStore = test::FakeSchedulerStore;

daemon::TrackedNode MakeNode(int64_t id, const std::string& name, int gpus, int cc_major, int cc_minor = 0) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = name;
  for (int i = 0; i < gpus; ++i) n.inv.gpus.push_back({i, name, "GPU-" + std::to_string(i), cc_major, cc_minor, 100000});
  return n;
}

daemon::QueuedTrial Trial(int64_t id, int64_t sweep, Config cfg, Need need = {}, int target = 0) {
  daemon::QueuedTrial t;
  t.id = id;
  t.sweep = sweep;
  t.config = cfg;
  t.config_key = ConfigKey(cfg);
  t.need = need;
  t.target = target;
  t.max_attempts = 2;
  return t;
}

Need Gpu(const std::string& arch) {
  Need n;
  n.gpus = 1;
  n.arch = {arch};
  return n;
}

class SchedulerTest : public ::testing::Test {
 protected:
  FakeClock clock;
  FakeStore store;
  daemon::SchedulerOptions opts{1000, 5000, 2};
  daemon::Scheduler s{clock, store, opts};

  std::optional<daemon::Grant> Lease(int64_t node, std::vector<int> free) {
    auto g = s.TryLease(node, free);
    EXPECT_TRUE(g.ok());
    return g.ok() ? *g : std::nullopt;
  }
  void Report(const daemon::Grant& g, const std::string& verdict, const std::string& stage = "k", const std::string& sig = "") {
    store::ResultRow r;
    r.verdict = ParseVerdict(verdict).value();  // a typo in a test throws
    r.failing_stage = stage;
    r.signature = sig.empty() ? verdict + ":x" : sig;
    ASSERT_TRUE(s.Report(g.lease, r).ok());
  }
};

// A GPU the worker holds back (processes outlived a trial on it) is never leased, even when a
// lease request lists it as free; once the worker stops holding it back it is leased again.
TEST_F(SchedulerTest, AHeldBackGpuIsNotLeasedWhateverTheRequestSays) {
  s.UpsertNode(MakeNode(1, "h200", 2, 9));
  s.AddSweep({1, 0, true, true, {}}, {Trial(10, 1, {{"b", "x"}}, Gpu("sm_90")), Trial(11, 1, {{"b", "y"}}, Gpu("sm_90"))});
  daemon::HeldGpu h;
  h.reason = "GPU 1 still has processes after its trial: 4242 (python3)";
  h.pids = {4242};
  EXPECT_TRUE(s.SetHeldBack(1, {{1, h}}));
  EXPECT_FALSE(s.SetHeldBack(1, {{1, h}})) << "the same GPUs again is no change";
  EXPECT_FALSE(s.SetHeldBack(7, {{1, h}})) << "an unknown node";
  const int64_t since = s.Node(1)->held_gpus.at(1).since;
  EXPECT_EQ(since, clock.now);
  EXPECT_FALSE(Lease(1, {1})) << "the held-back GPU is not free";
  auto a = Lease(1, {0, 1});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->gpus, std::vector<int>{0});
  EXPECT_FALSE(Lease(1, {0, 1})) << "GPU 0 is leased, GPU 1 held back";
  clock.now += 5;
  s.UpsertNode(MakeNode(1, "h200", 2, 9));  // a re-registration keeps what the worker holds back
  ASSERT_EQ(s.Node(1)->held_gpus.count(1), 1u);
  EXPECT_EQ(s.Node(1)->held_gpus.at(1).since, since);
  EXPECT_TRUE(s.SetHeldBack(1, {}));
  auto b = Lease(1, {1});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->gpus, std::vector<int>{1});
}

// A grant that never reached its worker comes back: queued at the front with the attempts it had,
// its GPU free, and leased again as attempt 1. A lease its worker has heartbeated is not undone.
TEST_F(SchedulerTest, AReturnedGrantIsQueuedAgainWithoutSpendingAnAttempt) {
  s.UpsertNode(MakeNode(1, "h200", 1, 9));
  s.AddSweep({1, 0, true, true, {}}, {Trial(10, 1, {{"b", "x"}}, Gpu("sm_90")), Trial(11, 1, {{"b", "y"}}, Gpu("sm_90"))});
  auto g = Lease(1, {0});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->attempt, 1);
  auto back = s.ReturnLease(g->lease);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, g->trial);
  EXPECT_EQ(store.requeued, std::vector<int64_t>{g->trial});
  EXPECT_EQ(s.leased(), 0u);
  EXPECT_FALSE(s.ReturnLease(g->lease).ok()) << "once";
  auto again = Lease(1, {0});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial, g->trial) << "first in line again";
  EXPECT_EQ(again->attempt, 1) << "no attempt spent on a grant nobody received";
  ASSERT_TRUE(s.Heartbeat(again->lease).ok());
  EXPECT_EQ(s.ReturnLease(again->lease).status().code(), Code::kConflict) << "its worker has it";
  EXPECT_EQ(s.leased(), 1u);
}

TEST_F(SchedulerTest, LeasesOnlyToMatchingHardwareAndOneTrialPerGpu) {
  s.UpsertNode(MakeNode(1, "h200", 2, 9));
  s.UpsertNode(MakeNode(2, "rtx", 1, 12));
  // One target per hardware need, as sweeps make them.
  s.AddSweep({1, 0, true, true, {}}, {Trial(10, 1, {{"b", "x"}}, Gpu("sm_120"), 0), Trial(11, 1, {{"b", "y"}}, Gpu("sm_90"), 1),
                                       Trial(12, 1, {{"b", "z"}}, Gpu("sm_90"), 1), Trial(13, 1, {{"b", "w"}}, Gpu("sm_90"), 1)});
  auto a = Lease(1, {0, 1});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->trial, 11);
  EXPECT_EQ(a->hardware, "h200 · sm_90 · x1");
  auto b = Lease(1, {0, 1});  // the worker's list is stale: GPU 0 is under a lease
  ASSERT_TRUE(b);
  EXPECT_EQ(b->trial, 12);
  EXPECT_NE(a->gpus, b->gpus);
  EXPECT_FALSE(Lease(1, {0, 1}));  // both GPUs busy
  auto c = Lease(2, {0});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->trial, 10);
}

TEST_F(SchedulerTest, FairShareDoesNotStarveASmallSweepBehindABigOne) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  std::vector<daemon::QueuedTrial> big;
  for (int i = 0; i < 1000; ++i) big.push_back(Trial(100 + i, 1, {{"i", std::to_string(i)}}));
  s.AddSweep({1, 0, true, true, {}}, big);
  std::vector<int64_t> order;
  for (int i = 0; i < 3; ++i) {
    auto g = Lease(1, {});
    order.push_back(g->trial);
    Report(*g, "passed");
  }
  s.AddSweep({2, 0, true, true, {}}, {Trial(5000, 2, {{"i", "a"}}), Trial(5001, 2, {{"i", "b"}})});
  for (int i = 0; i < 4; ++i) {
    auto g = Lease(1, {});
    order.push_back(g->trial);
    Report(*g, "passed");
  }
  // The small sweep's two trials are served within the next four leases, alternating.
  EXPECT_NE(std::find(order.begin() + 3, order.end(), 5000), order.end());
  EXPECT_NE(std::find(order.begin() + 3, order.end(), 5001), order.end());
}

TEST_F(SchedulerTest, PriorityComesFirst) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}})});
  s.AddSweep({2, 5, true, true, {}}, {Trial(2, 2, {{"a", "1"}})});
  EXPECT_EQ(Lease(1, {})->trial, 2);
}

TEST_F(SchedulerTest, ExpiredLeasesRequeueUntilAttemptsRunOut) {
  s.UpsertNode(MakeNode(1, "a", 0, 0));
  s.UpsertNode(MakeNode(2, "b", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(7, 1, {{"a", "1"}})});
  auto g1 = Lease(1, {});
  ASSERT_TRUE(g1);
  clock.now += 1500;
  s.Touch(2);
  EXPECT_EQ(s.Tick(), std::vector<int64_t>{7});
  EXPECT_EQ(store.requeued, std::vector<int64_t>{7});
  EXPECT_FALSE(Lease(1, {}));  // it avoids the node that lost it while another could take it
  auto g2 = Lease(2, {});
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->attempt, 2);
  EXPECT_GT(g2->epoch, g1->epoch);
  // The old lease is stale: its report is refused.
  store::ResultRow r;
  r.verdict = Verdict::kPassed;
  EXPECT_EQ(s.Report(g1->lease, r).status().code(), Code::kConflict);
  clock.now += 1500;
  s.Tick();
  EXPECT_EQ(store.verdicts[7], "infra_error");  // max_attempts (2) reached
}

TEST_F(SchedulerTest, HeartbeatsKeepALeaseAndReportsAreIdempotent) {
  s.UpsertNode(MakeNode(1, "a", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(7, 1, {{"a", "1"}})});
  auto g = Lease(1, {});
  for (int i = 0; i < 5; ++i) {
    clock.now += 800;
    ASSERT_TRUE(s.Heartbeat(g->lease).ok());
    s.Tick();
  }
  EXPECT_TRUE(store.requeued.empty());
  Report(*g, "passed");
  store::ResultRow again;
  again.verdict = Verdict::kPassed;
  auto dup = s.Report(g->lease, again);
  ASSERT_TRUE(dup.ok());
  EXPECT_TRUE(dup->duplicate);
  EXPECT_EQ(store.finished.size(), 1u);
  EXPECT_EQ(s.Heartbeat(g->lease).status().code(), Code::kConflict);
}

TEST_F(SchedulerTest, AnUnsupportedGateSkipsQueuedTrialsSharingItsKeyOnTheSameTarget) {
  s.UpsertNode(MakeNode(1, "rtx", 1, 12));
  std::vector<daemon::QueuedTrial> ts;
  int64_t id = 1;
  for (std::string moe : {"trtllm", "cutlass"})
    for (std::string gemm : {"a", "b", "c"})
      for (int target : {0, 1}) ts.push_back(Trial(id++, 1, {{"moe", moe}, {"gemm", gemm}}, Gpu("sm_120"), target));
  s.AddSweep({1, 0, true, true, {{"k", {"moe"}}}}, ts);
  auto g = Lease(1, {0});
  ASSERT_TRUE(g);  // trial 1: moe=trtllm gemm=a target 0
  Report(*g, "unsupported", "k", "unsupported:sm100_only");
  // Skipped: moe=trtllm on target 0 (gemm b, c); not target 1, not moe=cutlass.
  std::set<int64_t> skipped;
  for (auto& [t, v] : store.verdicts)
    if (v == "skipped") skipped.insert(t);
  EXPECT_EQ(skipped, (std::set<int64_t>{3, 5}));
  EXPECT_EQ(store.evidence[3], std::optional<int64_t>(1));
  // No pruned trial is ever leased.
  std::set<int64_t> later;
  while (auto n = Lease(1, {0})) {
    later.insert(n->trial);
    Report(*n, "passed");
  }
  for (auto t : skipped) EXPECT_FALSE(later.count(t));
  EXPECT_EQ(later.size(), ts.size() - 3);
  EXPECT_EQ(s.Saved(1).first, 2);
}

TEST_F(SchedulerTest, ACrashPrunesOnlyWhenItsSignatureRepeats) {
  s.UpsertNode(MakeNode(1, "rtx", 1, 12));
  std::vector<daemon::QueuedTrial> ts;
  for (int i = 1; i <= 4; ++i) ts.push_back(Trial(i, 1, {{"moe", "cutedsl"}, {"i", std::to_string(i)}}, Gpu("sm_120")));
  s.AddSweep({1, 0, true, true, {{"k", {"moe"}}}}, ts);
  auto g1 = Lease(1, {0});
  Report(*g1, "crashed", "k", "crashed:RuntimeError:boom@x.py");
  EXPECT_EQ(store.finished.size(), 1u);
  auto g2 = Lease(1, {0});
  Report(*g2, "crashed", "k", "crashed:RuntimeError:boom@x.py");
  EXPECT_EQ(store.finished.size(), 4u);
  EXPECT_FALSE(Lease(1, {0}));
}

// The reported flaw: one flaky crash of mode=a plus any crash of mode=b with a generic signature
// skipped every other mode=a trial. A crash settles a gate key only when two trials with the same
// values of that key crashed with the same signature (one that carries a message).
TEST_F(SchedulerTest, CrashesOfOtherGateValuesOrWithoutAMessageNeverPrune) {
  s.UpsertNode(MakeNode(1, "rtx", 1, 12));
  std::vector<daemon::QueuedTrial> ts;
  int64_t id = 1;
  for (int i = 0; i < 6; ++i)
    for (std::string mode : {"a", "b"}) ts.push_back(Trial(id++, 1, {{"mode", mode}, {"i", std::to_string(i)}}, Gpu("sm_120")));
  s.AddSweep({1, 0, true, true, {{"k", {"mode"}}}}, ts);
  // The next leased trial of `mode`; trials of the other mode met on the way end with a bare crash,
  // which (as this test shows) settles nothing.
  auto by_mode = [&](const std::string& mode) {
    for (;;) {
      auto g = Lease(1, {0});
      if (!g || ts[g->trial - 1].config.at("mode") == mode) return g;
      Report(*g, "crashed", "k", "crashed:exit_code:1");
    }
  };
  // The same message twice, but for different gate values: nothing is settled.
  auto first = by_mode("a");
  ASSERT_TRUE(first);
  Report(*first, "crashed", "k", "crashed:RuntimeError:boom@x.py");
  Report(*by_mode("b"), "crashed", "k", "crashed:RuntimeError:boom@x.py");
  // No message at all, twice for the same value: an exit code or a signal is not a cause.
  Report(*by_mode("b"), "crashed", "k", "crashed:exit_code:1");
  Report(*by_mode("b"), "crashed", "k", "crashed:exit_code:1");
  Report(*by_mode("b"), "crashed", "k", "crashed:signal:SIGSEGV");
  for (auto& [t, v] : store.verdicts) EXPECT_NE(v, "skipped") << "trial " << t;
  // The second mode=a crash with the first one's message settles mode=a, naming both trials.
  auto second = by_mode("a");
  ASSERT_TRUE(second);
  Report(*second, "crashed", "k", "crashed:RuntimeError:boom@x.py");
  std::set<int64_t> skipped;
  for (auto& [t, v] : store.verdicts)
    if (v == "skipped") skipped.insert(t);
  ASSERT_FALSE(skipped.empty());
  for (int64_t t : skipped) {
    EXPECT_EQ(ts[t - 1].config.at("mode"), "a") << "trial " << t;
    EXPECT_NE(store.texts[t].find("pruned: trials " + std::to_string(first->trial) + " and " + std::to_string(second->trial)),
              std::string::npos)
        << store.texts[t];
  }
}

// A cancel commits its trials as done before it tells the scheduler; a lease in that moment finds the
// trial gone from the store. That is no error: the next trial is granted instead.
TEST_F(SchedulerTest, ATrialCancelledInTheStoreMeanwhileIsSkippedNotAnError) {
  s.UpsertNode(MakeNode(1, "a", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}}), Trial(2, 1, {{"a", "2"}})});
  store.gone.insert(1);
  auto g = s.TryLease(1, {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(*g);
  EXPECT_EQ((*g)->trial, 2);
  EXPECT_FALSE(Lease(1, {}));  // and the cancelled one is not offered again
}

TEST_F(SchedulerTest, PruneOffRunsEverything) {
  s.UpsertNode(MakeNode(1, "rtx", 1, 12));
  s.AddSweep({1, 0, false, true, {{"k", {"moe"}}}},
             {Trial(1, 1, {{"moe", "x"}, {"g", "1"}}, Gpu("sm_120")), Trial(2, 1, {{"moe", "x"}, {"g", "2"}}, Gpu("sm_120"))});
  Report(*Lease(1, {0}), "unsupported");
  EXPECT_TRUE(Lease(1, {0}).has_value());
}

TEST_F(SchedulerTest, InfraErrorsRetryElsewhereAndQuarantineTheNode) {
  s.UpsertNode(MakeNode(1, "bad", 0, 0));
  s.UpsertNode(MakeNode(2, "good", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}}), Trial(2, 1, {{"a", "2"}})});
  auto g = Lease(1, {});
  Report(*g, "infra_error");
  EXPECT_EQ(store.requeued, std::vector<int64_t>{g->trial});
  auto g2 = Lease(1, {});  // the other trial; the retried one avoids this node
  ASSERT_TRUE(g2);
  EXPECT_NE(g2->trial, g->trial);
  Report(*g2, "infra_error");
  EXPECT_EQ(store.node_states[1], NodeState::kQuarantined);
  EXPECT_FALSE(Lease(1, {}));
  auto g3 = Lease(2, {});
  ASSERT_TRUE(g3);
  Report(*g3, "passed");
}

TEST_F(SchedulerTest, AFirstTimeoutIsRetriedOnceAndASecondStands) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  daemon::QueuedTrial t = Trial(1, 1, {{"a", "1"}});
  t.max_attempts = 3;
  s.AddSweep({1, 0, true, true, {}}, {t});
  Report(*Lease(1, {}), "timeout");
  EXPECT_EQ(store.requeued, std::vector<int64_t>{1});
  auto again = Lease(1, {});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->attempt, 2);
  Report(*again, "timeout");
  EXPECT_EQ(store.verdicts[1], "timeout");
  EXPECT_FALSE(Lease(1, {}));
}

TEST_F(SchedulerTest, ReuseFilesAnEarlierVerdictWithoutRunning) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  store::ResultRow prior;
  prior.trial_id = 99;
  prior.verdict = Verdict::kUnsupported;
  prior.signature = "unsupported:x";
  store.reusable = prior;
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}})});
  std::vector<int64_t> reused;
  auto g = s.TryLease(1, {}, &reused);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->has_value());
  EXPECT_EQ(reused, std::vector<int64_t>{1});
  EXPECT_EQ(store.verdicts[1], "unsupported");
  EXPECT_EQ(store.evidence[1], std::optional<int64_t>(99));
  EXPECT_TRUE(store.leased.empty());
}

TEST_F(SchedulerTest, AStoreFailureLeavesTheTrialQueued) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}})});
  store.fail_leases = true;
  EXPECT_FALSE(s.TryLease(1, {}).ok());
  store.fail_leases = false;
  EXPECT_EQ(Lease(1, {})->trial, 1);
}

TEST_F(SchedulerTest, SilentNodesGoOfflineAndTargetsNoNodeServesAreReported) {
  s.UpsertNode(MakeNode(1, "h200", 1, 9));
  s.AddSweep({1, 0, true, true, {}}, {Trial(1, 1, {{"a", "1"}}, Gpu("sm_120"), 0), Trial(2, 1, {{"a", "1"}}, Gpu("sm_90"), 1)});
  EXPECT_EQ(s.UnmatchableTargets(1), std::vector<int>{0});
  clock.now += 6000;
  s.Tick();
  EXPECT_EQ(s.Node(1)->state, NodeState::kOffline);
  EXPECT_EQ(store.node_states[1], NodeState::kOffline);
  s.Touch(1);
  EXPECT_EQ(s.Node(1)->state, NodeState::kOnline);
}

// Issue 29: a repeat is a run. With repeats and reuse on, an earlier verdict may stand in for a
// config's first run only; its other repeats run. (Before, every repeat took the copy: one run
// read as "6/6 passed".)
TEST_F(SchedulerTest, ReuseStandsInForAConfigsFirstRepeatOnly) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  store::ResultRow prior;
  prior.trial_id = 99;
  prior.verdict = Verdict::kPassed;
  store.reusable = prior;
  std::vector<daemon::QueuedTrial> ts;
  for (int r = 0; r < 3; ++r) {
    ts.push_back(Trial(r + 1, 1, {{"a", "1"}}));
    ts.back().repeat = r;
  }
  s.AddSweep({1, 0, true, true, {}}, ts);
  std::vector<int64_t> reused;
  std::set<int64_t> ran;
  while (true) {
    auto g = s.TryLease(1, {}, &reused);
    ASSERT_TRUE(g.ok());
    if (!*g) break;
    ran.insert((*g)->trial);
    Report(**g, "passed");
  }
  EXPECT_EQ(reused, std::vector<int64_t>{1});
  EXPECT_EQ(ran, (std::set<int64_t>{2, 3}));
  EXPECT_TRUE(store.results[1].reused);
  EXPECT_FALSE(store.results[2].reused);
}

// Issue 29: with reuse off, a config that crashed, passed, and crashed alike again used to have its
// remaining repeats skipped (two crashes with one signature "settled" it). It has passed in this
// sweep: it is flaky, and every repeat runs.
TEST_F(SchedulerTest, PruningNeverSkipsARepeatOfAConfigThatPassedInTheSweep) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  std::vector<daemon::QueuedTrial> ts;
  for (int r = 0; r < 5; ++r) {
    ts.push_back(Trial(r + 1, 1, {{"mode", "flaky"}}));
    ts.back().repeat = r;
  }
  s.AddSweep({1, 0, true, false, {{"k", {"mode"}}}}, ts);
  const char* outcomes[] = {"crashed", "passed", "crashed", "passed", "passed"};
  int leased = 0;
  for (const char* v : outcomes) {
    auto g = Lease(1, {});
    ASSERT_TRUE(g) << "repeat " << leased + 1 << " was not run";
    ++leased;
    Report(*g, v, "k", std::string(v) == "crashed" ? "crashed:RuntimeError:NCCL error" : "");
  }
  EXPECT_EQ(leased, 5);
  EXPECT_EQ(store.skipped, 0);
  EXPECT_EQ(s.Saved(1).first, 0);
}

// A trial being confirmed is being measured: another trial's confirmed failure of the same gate
// values prunes the rest, never it.
TEST_F(SchedulerTest, AConfirmedFailureNeverSkipsATrialBeingConfirmed) {
  s.UpsertNode(MakeNode(1, "a", 0, 0));
  s.UpsertNode(MakeNode(2, "b", 0, 0));
  daemon::SweepInfo info{1, 0, true, false, {{"k", {"mode"}}}};
  info.confirm_failures = 1;
  info.settle_first = false;
  s.AddSweep(info, {Trial(1, 1, {{"mode", "x"}, {"i", "1"}}), Trial(2, 1, {{"mode", "x"}, {"i", "2"}}),
                    Trial(3, 1, {{"mode", "x"}, {"i", "3"}})});
  const std::string sig = "crashed:RuntimeError:fixture exploded";
  auto g1 = Lease(1, {});
  auto g2 = Lease(2, {});
  ASSERT_TRUE(g1 && g2);
  Report(*g1, "crashed", "k", sig);  // trial 1: first attempt, queued to confirm (not on node 1)
  Report(*g2, "crashed", "k", sig);  // trial 2: the same (not on node 2)
  auto g3 = Lease(1, {});            // trial 2's confirmation
  ASSERT_TRUE(g3);
  EXPECT_EQ(g3->trial, g2->trial);
  Report(*g3, "crashed", "k", sig);  // confirmed: prunes trial 3, not trial 1 (being confirmed)
  EXPECT_EQ(store.verdicts[3], "skipped");
  auto g4 = Lease(2, {});
  ASSERT_TRUE(g4) << "trial 1's confirmation was pruned away";
  EXPECT_EQ(g4->trial, g1->trial);
  EXPECT_NE(store.verdicts[g1->trial], "skipped");
}

// A pass with the same gate values refutes "these values fail": two later crashes alike of other
// configs with those values settle nothing (bench/elimination: one flaky config's confirmed crash
// used to skip every other config of its gate pair, passing ones included).
TEST_F(SchedulerTest, GateValuesThatPassedInTheSweepArePrunedByNoFailure) {
  s.UpsertNode(MakeNode(1, "cpu", 0, 0));
  std::vector<daemon::QueuedTrial> ts;
  for (int i = 1; i <= 4; ++i) ts.push_back(Trial(i, 1, {{"mode", "x"}, {"i", std::to_string(i)}}));
  daemon::SweepInfo info{1, 0, true, false, {{"k", {"mode"}}}};
  info.settle_first = false;
  s.AddSweep(info, ts);
  const char* outcomes[] = {"passed", "crashed", "crashed", "passed"};
  int leased = 0;
  for (const char* v : outcomes) {
    auto g = Lease(1, {});
    ASSERT_TRUE(g) << "trial " << leased + 1 << " was not run";
    ++leased;
    Report(*g, v, "k", std::string(v) == "crashed" ? "crashed:RuntimeError:NCCL error" : "");
  }
  EXPECT_EQ(store.skipped, 0);
}

}  // namespace
}  // namespace gauntlet
