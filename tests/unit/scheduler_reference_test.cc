// Differential validation's scheduling (SUITE_FORMAT.md "Differential validation"): a smoke
// reference config's trials are leased before the rest of their target, which wait while one is
// queued or running, and go on once it has ended, however it ended.
#include <gtest/gtest.h>

#include <set>

#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet {
namespace {

daemon::TrackedNode Node(int64_t id, int gpus) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = "h200";
  for (int i = 0; i < gpus; ++i) n.inv.gpus.push_back({i, "h200", "GPU-" + std::to_string(i), 9, 0, 100000});
  return n;
}

daemon::QueuedTrial Trial(int64_t id, const std::string& attn, bool reference, int target = 0) {
  daemon::QueuedTrial t;
  t.id = id;
  t.sweep = 1;
  t.config = {{"attn", attn}};
  t.config_key = ConfigKey(t.config);
  t.need.gpus = 1;
  t.target = target;
  t.max_attempts = 2;
  t.reference = reference;
  return t;
}

class ReferenceScheduling : public ::testing::Test {
 protected:
  test::FakeClock clock;
  test::FakeSchedulerStore store;
  daemon::Scheduler s{clock, store, daemon::SchedulerOptions{1000, 5000, 3}};

  std::optional<daemon::Grant> Lease(std::vector<int> free) {
    auto g = s.TryLease(1, free);
    EXPECT_TRUE(g.ok());
    return g.ok() ? *g : std::nullopt;
  }
  void Report(const daemon::Grant& g, const std::string& verdict) {
    store::ResultRow r;
    r.verdict = ParseVerdict(verdict).value();  // a typo in a test throws
    r.failing_stage = "serve";
    r.signature = verdict + ":x";
    ASSERT_TRUE(s.Report(g.lease, r).ok());
  }
};

TEST_F(ReferenceScheduling, TheReferenceGoesFirstAndTheRestWaitForItsReport) {
  s.UpsertNode(Node(1, 4));
  // Queued last, leased first.
  s.AddSweep({1, 0, false, false, {}}, {Trial(10, "sdpa", false), Trial(11, "flex", false), Trial(12, "eager", true)});
  auto ref = Lease({0, 1, 2, 3});
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->trial, 12);
  // Free GPUs, but the others are judged against its answers: nothing until it reports.
  EXPECT_FALSE(Lease({1, 2, 3}));
  Report(*ref, "passed");
  auto a = Lease({0, 1, 2, 3});
  auto b = Lease({0, 1, 2, 3});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->trial, 10);
  EXPECT_EQ(b->trial, 11);
}

TEST_F(ReferenceScheduling, AFailedReferenceReleasesTheOthers) {
  s.UpsertNode(Node(1, 2));
  s.AddSweep({1, 0, false, false, {}}, {Trial(10, "sdpa", false), Trial(12, "eager", true)});
  auto ref = Lease({0, 1});
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->trial, 12);
  Report(*ref, "crashed");  // judged: the others run, and their stage says there was no reference
  auto a = Lease({0, 1});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->trial, 10);
}

TEST_F(ReferenceScheduling, ARequeuedReferenceStillGoesFirst) {
  s.UpsertNode(Node(1, 2));
  s.AddSweep({1, 0, false, false, {}}, {Trial(10, "sdpa", false), Trial(12, "eager", true)});
  auto ref = Lease({0, 1});
  ASSERT_TRUE(ref);
  Report(*ref, "infra_error");  // attempts left: queued again, in front
  auto again = Lease({0, 1});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial, 12);
  EXPECT_FALSE(Lease({1}));
  // Its lease expires with attempts spent: it ends, and the rest goes on.
  clock.now += 5000;
  s.Tick();
  auto a = Lease({0, 1});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->trial, 10);
}

TEST_F(ReferenceScheduling, ACancelledReferenceReleasesTheOthersAndOtherTargetsNeverWait) {
  s.UpsertNode(Node(1, 2));
  // Target 1 has no reference trial of its own: it never waits for target 0's.
  s.AddSweep({1, 0, false, false, {}},
             {Trial(10, "sdpa", false, 0), Trial(12, "eager", true, 0), Trial(20, "sdpa", false, 1)});
  s.Cancel({12}, {});
  auto a = Lease({0, 1});
  auto b = Lease({0, 1});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(std::set<int64_t>({a->trial, b->trial}), std::set<int64_t>({10, 20}));
}

}  // namespace
}  // namespace gauntlet
