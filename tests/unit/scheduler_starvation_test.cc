// Nothing starves (issue 31): work that no node can run, however much of it is queued, neither
// delays nor costs a lease of work a node can run. The scheduler as a pure state machine (fake clock,
// fake store); the work a lease does is counted (Scheduler::lease_steps), not timed.
#include <gtest/gtest.h>

#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet {
namespace {

daemon::TrackedNode StarvationNode(int64_t id, int gpus) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = "n" + std::to_string(id);
  for (int i = 0; i < gpus; ++i) n.inv.gpus.push_back({i, "NVIDIA H200", "GPU-" + std::to_string(i), 9, 0, 143771});
  return n;
}

Need Gpus(int n) {
  Need need;
  need.gpus = n;
  return need;
}

std::vector<daemon::QueuedTrial> Trials(int64_t first, int64_t sweep, int n, const Need& need) {
  std::vector<daemon::QueuedTrial> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    daemon::QueuedTrial t;
    t.id = first + i;
    t.sweep = sweep;
    t.need = need;
    t.config = {{"i", std::to_string(i)}};
    t.config_key = ConfigKey(t.config);
    out.push_back(std::move(t));
  }
  return out;
}

// One scheduler holding `sweeps` sweeps of `per_sweep` trials that need 64 GPUs (no node has them),
// queued before the runnable one-trial sweep; returns the steps of the lease that took it.
uint64_t StepsOfTheRunnableLease(int sweeps, int per_sweep, int64_t* leased) {
  test::FakeClock clock;
  test::FakeSchedulerStore store;
  store.record = false;
  daemon::Scheduler s(clock, store, {});
  s.UpsertNode(StarvationNode(1, 8));
  int64_t id = 1;
  for (int i = 0; i < sweeps; ++i) {
    s.AddSweep({i + 1, 0, true, true, {}}, Trials(id, i + 1, per_sweep, Gpus(64)));
    id += per_sweep;
  }
  EXPECT_FALSE(*s.TryLease(1, {0, 1, 2, 3, 4, 5, 6, 7})) << "nothing runnable yet";
  const int64_t runnable = sweeps + 1;
  s.AddSweep({runnable, 0, true, true, {}}, Trials(10'000'000, runnable, 1, Gpus(1)));
  const uint64_t before = s.lease_steps();
  auto g = s.TryLease(1, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(g.ok() && *g);
  *leased = g.ok() && *g ? (*g)->trial : 0;
  return s.lease_steps() - before;
}

TEST(SchedulerStarvation, ARunnableTrialIsLeasedBesideAHundredThousandUnrunnableOnes) {
  int64_t leased = 0;
  StepsOfTheRunnableLease(1, 100'000, &leased);
  EXPECT_EQ(leased, 10'000'000);
}

// The lease's work is the same with 10 unrunnable trials in one sweep, 100,000 in one sweep, and
// 100,000 in 2,000 sweeps: it visits only sweeps with work this node could serve.
TEST(SchedulerStarvation, TheWorkOfALeaseDoesNotGrowWithUnrunnableWork) {
  int64_t a = 0, b = 0, c = 0;
  const uint64_t few = StepsOfTheRunnableLease(1, 10, &a);
  const uint64_t many_trials = StepsOfTheRunnableLease(1, 100'000, &b);
  const uint64_t many_sweeps = StepsOfTheRunnableLease(2'000, 50, &c);
  EXPECT_EQ(a, 10'000'000);
  EXPECT_EQ(b, 10'000'000);
  EXPECT_EQ(c, 10'000'000);
  EXPECT_EQ(few, many_trials);
  EXPECT_EQ(few, many_sweeps);
  EXPECT_LE(few, 4u) << "one candidate sweep, one queue";
}

// "No node can run this" is a cache, not a verdict: a node that registers later with enough GPUs
// gets the work at once, and the sweep's unmatched targets say so.
TEST(SchedulerStarvation, ANodeThatJoinsLaterServesTheWorkNoNodeCouldRun) {
  test::FakeClock clock;
  test::FakeSchedulerStore store;
  daemon::Scheduler s(clock, store, {});
  s.UpsertNode(StarvationNode(1, 8));
  s.AddSweep({1, 0, true, true, {}}, Trials(1, 1, 1000, Gpus(64)));
  EXPECT_FALSE(*s.TryLease(1, {0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.UnmatchableTargets(1), std::vector<int>{0});
  s.UpsertNode(StarvationNode(2, 64));
  EXPECT_TRUE(s.UnmatchableTargets(1).empty()) << "the fleet changed";
  std::vector<int> all;
  for (int i = 0; i < 64; ++i) all.push_back(i);
  auto g = s.TryLease(2, all);
  ASSERT_TRUE(g.ok() && *g);
  EXPECT_EQ((*g)->trial, 1);
  EXPECT_EQ((*g)->gpus.size(), 64u);
  // Node 2 going offline makes the target unmatched again (the cache follows the fleet).
  EXPECT_TRUE(s.UnmatchableTargets(1).empty());
  ASSERT_TRUE(s.SetNodeState(2, NodeState::kOffline, "test").ok());
  EXPECT_EQ(s.UnmatchableTargets(1), std::vector<int>{0});
  s.Touch(2);  // heard again: back online
  EXPECT_TRUE(s.UnmatchableTargets(1).empty());
}

// A sweep whose queue drained and is queued again (a retried trial) is found again.
TEST(SchedulerStarvation, ADrainedSweepQueuedAgainIsFoundAgain) {
  test::FakeClock clock;
  test::FakeSchedulerStore store;
  daemon::Scheduler s(clock, store, {1000, 5000, 3});
  s.UpsertNode(StarvationNode(1, 1));
  s.AddSweep({1, 0, true, true, {}}, Trials(1, 1, 1, Gpus(1)));
  auto g = s.TryLease(1, {0});
  ASSERT_TRUE(g.ok() && *g);
  EXPECT_FALSE(*s.TryLease(1, {}));  // the drained sweep leaves the class's list
  store::ResultRow r;
  r.verdict = Verdict::kInfraError;
  r.signature = "infra_error:x";
  ASSERT_TRUE(s.Report((*g)->lease, r).ok());  // queued again, at the front
  auto again = s.TryLease(1, {0});
  ASSERT_TRUE(again.ok() && *again) << "the requeued trial is leased again";
  EXPECT_EQ((*again)->trial, 1);
}

}  // namespace
}  // namespace gauntlet
