// Issue 21 in the scheduler alone: failures confirmed before they stand (confirm_failures), and the
// order that settles the most first (one trial per gate key value, cheaper targets first, then the rest).
#include <gtest/gtest.h>

#include "core/pass_rate.h"
#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet {
namespace {

using test::FakeClock;
using FakeStore = test::FakeSchedulerStore;

daemon::TrackedNode Cpu(int64_t id) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = "cpu" + std::to_string(id);
  return n;
}

daemon::QueuedTrial Trial(int64_t id, Config cfg) {
  daemon::QueuedTrial t;
  t.id = id;
  t.sweep = 1;
  t.config = cfg;
  t.config_key = ConfigKey(cfg);
  t.max_attempts = 3;
  return t;
}

daemon::SweepInfo Info(std::map<std::string, std::vector<std::string>> gate, int confirm, bool settle = true) {
  daemon::SweepInfo i;
  i.id = 1;
  i.gate_on = std::move(gate);
  i.confirm_failures = confirm;
  i.settle_first = settle;
  return i;
}

class SettleTest : public ::testing::Test {
 protected:
  FakeClock clock;
  FakeStore store;
  daemon::Scheduler s{clock, store, daemon::SchedulerOptions{}};
  std::optional<daemon::Grant> Lease(int64_t node) {
    auto g = s.TryLease(node, {});
    EXPECT_TRUE(g.ok());
    return g.ok() ? *g : std::nullopt;
  }
  daemon::ReportOutcome Report(const daemon::Grant& g, const std::string& verdict, const std::string& sig = "") {
    store::ResultRow r;
    r.verdict = ParseVerdict(verdict).value();  // a typo in a test throws
    r.failing_stage = "k";
    r.signature = sig.empty() ? verdict + ":RuntimeError:boom@x.py" : sig;
    auto out = s.Report(g.lease, r);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : daemon::ReportOutcome{};
  }
};

TEST(PassRate, WilsonIntervalMatchesTheFormula) {
  // 2 of 3: the textbook 95% Wilson interval is [0.208, 0.939].
  Interval ci = WilsonInterval(2, 3);
  EXPECT_NEAR(ci.low, 0.2077, 1e-3);
  EXPECT_NEAR(ci.high, 0.9385, 1e-3);
  // 200 of 300: the same rate, a much narrower interval.
  Interval wide = WilsonInterval(200, 300);
  EXPECT_GT(wide.low, 0.6);
  EXPECT_LT(wide.high, 0.72);
  EXPECT_EQ(WilsonInterval(0, 0).low, 0);
  EXPECT_EQ(WilsonInterval(0, 0).high, 1);
  EXPECT_EQ(WilsonInterval(5, 5).high, 1);
  // Skips, cancels and infra errors are not runs of the config; timeouts are.
  auto j = PassRateJson({{"passed", 2}, {"crashed", 1}, {"skipped", 7}, {"infra_error", 2}, {"timeout", 1}, {"queued", 3}});
  EXPECT_EQ(j["passed"], 2);
  EXPECT_EQ(j["runs"], 4);
  EXPECT_EQ(j["rate"], 0.5);
  EXPECT_TRUE(PassRateJson({{"skipped", 3}}).is_null());
}

TEST_F(SettleTest, AFailureIsRunAgainElsewhereBeforeItStandsAndAPassAfterItIsFlaky) {
  s.UpsertNode(Cpu(1));
  s.UpsertNode(Cpu(2));
  s.AddSweep(Info({{"k", {"mode"}}}, 2), {Trial(1, {{"mode", "flaky"}, {"i", "1"}}), Trial(2, {{"mode", "flaky"}, {"i", "2"}})});
  auto g = Lease(1);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->trial, 1);
  daemon::ReportOutcome out = Report(*g, "crashed");
  EXPECT_TRUE(out.confirming);
  EXPECT_TRUE(out.skipped.empty());
  ASSERT_EQ(store.attempts.size(), 1u);  // the failing attempt is kept
  EXPECT_EQ(store.attempts[0].verdict, Verdict::kCrashed);
  EXPECT_FALSE(store.verdicts.count(1));  // not a verdict yet
  // The confirmation goes first, and to the other node when one asks.
  auto again = Lease(2);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial, 1);
  EXPECT_EQ(again->attempt, 2);
  Report(*again, "passed");
  ASSERT_TRUE(store.results.count(1));
  const store::ResultRow& r = store.results[1];
  EXPECT_EQ(r.verdict, Verdict::kPassed);
  EXPECT_TRUE(r.flaky);
  EXPECT_EQ(r.confirmed, 0);
  EXPECT_EQ(r.attempt_counts.value("crashed", 0), 1);
  EXPECT_EQ(store.skipped, 0);  // a flake never prunes
}

TEST_F(SettleTest, AFailureConfirmedAsOftenAsAskedPrunesAtOnce) {
  s.UpsertNode(Cpu(1));
  std::vector<daemon::QueuedTrial> ts;
  for (int i = 1; i <= 5; ++i) ts.push_back(Trial(i, {{"mode", "fail"}, {"i", std::to_string(i)}}));
  s.AddSweep(Info({{"k", {"mode"}}}, 2), ts);
  auto g = Lease(1);
  EXPECT_TRUE(Report(*g, "crashed").confirming);
  EXPECT_EQ(store.skipped, 0);  // pruning waits for the confirmation
  auto g2 = Lease(1);  // no other node: the same one confirms
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->trial, g->trial);
  EXPECT_TRUE(Report(*g2, "crashed").confirming);
  EXPECT_EQ(store.skipped, 0);
  auto g3 = Lease(1);
  ASSERT_TRUE(g3);
  EXPECT_EQ(g3->trial, g->trial);
  daemon::ReportOutcome out = Report(*g3, "crashed");
  EXPECT_FALSE(out.confirming);
  EXPECT_EQ(store.results[g->trial].confirmed, 2);
  EXPECT_FALSE(store.results[g->trial].flaky);
  EXPECT_EQ(out.skipped.size(), 4u);  // one trial, confirmed, settles its gate value
  EXPECT_FALSE(Lease(1));
}

TEST_F(SettleTest, ABareCrashConfirmedStillNeverPrunesAndATimeoutIsConfirmedNotRetried) {
  s.UpsertNode(Cpu(1));
  s.AddSweep(Info({{"k", {"mode"}}}, 1), {Trial(1, {{"mode", "x"}, {"i", "1"}}), Trial(2, {{"mode", "x"}, {"i", "2"}}),
                                           Trial(3, {{"mode", "y"}, {"i", "1"}})});
  auto g = Lease(1);
  Report(*g, "crashed", "crashed:exit_code:1");
  Report(*Lease(1), "crashed", "crashed:exit_code:1");
  EXPECT_EQ(store.results[g->trial].confirmed, 1);
  EXPECT_EQ(store.skipped, 0);
  auto t = Lease(1);
  ASSERT_TRUE(t);
  EXPECT_TRUE(Report(*t, "timeout").confirming);
  auto t2 = Lease(1);
  EXPECT_EQ(t2->trial, t->trial);
  Report(*t2, "passed");
  EXPECT_TRUE(store.results[t->trial].flaky);  // a timeout then a pass: flaky, though timeout is not judged
}

TEST_F(SettleTest, ReuseTakesAnUnconfirmedFailureOnlyWhenTheSweepDoesNotConfirm) {
  s.UpsertNode(Cpu(1));
  store::ResultRow prior;
  prior.trial_id = 99;
  prior.verdict = Verdict::kCrashed;
  prior.signature = "crashed:RuntimeError:boom@x.py";
  prior.failing_stage = "k";
  store.reusable = prior;
  s.AddSweep(Info({}, 1), {Trial(1, {{"mode", "x"}})});
  auto g = Lease(1);
  ASSERT_TRUE(g) << "an unconfirmed crash is run again, not reused";
  Report(*g, "passed");
  // Confirmed as often as the sweep asks: reused.
  store.reusable->confirmed = 1;
  daemon::SweepInfo two = Info({}, 1);
  two.id = 2;
  daemon::QueuedTrial t = Trial(2, {{"mode", "x"}});
  t.sweep = 2;
  s.AddSweep(two, {t});
  EXPECT_FALSE(Lease(1));
  EXPECT_EQ(store.verdicts[2], "crashed");
}

// The ordering rule: one trial per value of each gate key first (single keys before pairs, the
// grid's diagonal where it covers two values at once), then the rest in the grid's order.
TEST_F(SettleTest, OneTrialPerGateValueRunsFirstThenTheRest) {
  s.UpsertNode(Cpu(1));
  std::vector<daemon::QueuedTrial> ts;
  int64_t id = 1;
  for (std::string a : {"a1", "a2", "a3"})
    for (std::string b : {"b1", "b2", "b3"})
      for (std::string c : {"c1", "c2"}) ts.push_back(Trial(id++, {{"a", a}, {"b", b}, {"c", c}}));
  s.AddSweep(Info({{"load", {"a"}}, {"init", {"b"}}, {"run", {"a", "b"}}}, 0), ts);
  std::vector<Config> order;
  while (auto g = Lease(1)) {
    order.push_back(ts[g->trial - 1].config);
    Report(*g, "passed");
  }
  ASSERT_EQ(order.size(), ts.size());
  // First three: the diagonal, each opening a value of a and of b.
  std::set<std::string> as, bs;
  for (int i = 0; i < 3; ++i) as.insert(order[i]["a"]), bs.insert(order[i]["b"]);
  EXPECT_EQ(as.size(), 3u);
  EXPECT_EQ(bs.size(), 3u);
  // Then one per pair not covered yet (6 of them), before any second trial of a pair.
  std::set<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < 9; ++i) pairs.insert({order[i]["a"], order[i]["b"]});
  EXPECT_EQ(pairs.size(), 9u);
  // The grid's order otherwise: order "grid" keeps it exactly.
  daemon::Scheduler plain{clock, store, daemon::SchedulerOptions{}};
  plain.UpsertNode(Cpu(1));
  plain.AddSweep(Info({{"load", {"a"}}, {"run", {"a", "b"}}}, 0, false), ts);
  for (int64_t want = 1; want <= static_cast<int64_t>(ts.size()); ++want) {
    auto g = plain.TryLease(1, {});
    ASSERT_TRUE(g.ok() && *g);
    EXPECT_EQ((*g)->trial, want);
    store::ResultRow r;
    r.verdict = Verdict::kPassed;
    ASSERT_TRUE(plain.Report((*g)->lease, r).ok());
  }
}

TEST_F(SettleTest, ARefusalFoundByTheFirstProbePrunesBeforeTheGridGetsThere) {
  s.UpsertNode(Cpu(1));
  std::vector<daemon::QueuedTrial> ts;
  int64_t id = 1;
  for (std::string a : {"a1", "a2", "a3", "a4"})
    for (std::string c : {"c1", "c2", "c3", "c4", "c5"}) ts.push_back(Trial(id++, {{"a", a}, {"c", c}}));
  s.AddSweep(Info({{"load", {"a"}}}, 0), ts);
  // a4 is refused: in grid order it is met after 15 passes; settling first meets it 4th.
  int ran = 0;
  while (auto g = Lease(1)) {
    ++ran;
    if (ts[g->trial - 1].config["a"] == "a4") {
      EXPECT_LE(ran, 4);
      store::ResultRow r;
      r.verdict = Verdict::kUnsupported;
      r.failing_stage = "load";
      r.signature = "unsupported:sm100_only";
      ASSERT_TRUE(s.Report(g->lease, r).ok());
    } else {
      Report(*g, "passed");
    }
  }
  EXPECT_EQ(ran, 16);
  EXPECT_EQ(store.skipped, 4);
}

// Cheapest hardware first: a node that two priced targets fit takes the cheaper target's probes
// first, then the dearer's, then the rest of each, cheaper first. Without prices, or where a node
// fits one target only, the targets keep their order.
daemon::TrackedNode H100(int64_t id) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = "h100-" + std::to_string(id);
  n.inv.gpus.push_back({0, "NVIDIA H100 80GB HBM3", "GPU-" + std::to_string(id), 9, 0, 81559});
  return n;
}

// The next grant for `node`'s one GPU (nullopt when none, or on an error, which the test then sees).
std::optional<daemon::Grant> LeaseGpu(daemon::Scheduler& s, int64_t node) {
  auto g = s.TryLease(node, {0});
  EXPECT_TRUE(g.ok());
  return g.ok() ? *g : std::nullopt;
}

// 3 values of the gated `a` x 2 of the ungated `c` per target: 3 probes and 3 others each.
std::vector<daemon::QueuedTrial> PricedTrials(double dear, double cheap) {
  std::vector<daemon::QueuedTrial> ts;
  int64_t id = 1;
  for (int target : {0, 1})
    for (std::string a : {"a1", "a2", "a3"})
      for (std::string c : {"c1", "c2"}) {
        daemon::QueuedTrial t = Trial(id++, {{"a", a}, {"c", c}});
        t.target = target;
        t.need.gpus = 1;
        if (target == 1) t.need.arch = {"sm_90"};  // target 0 fits any GPU, target 1 Hopper only
        t.cost_s = 900;
        t.price = target == 0 ? dear : cheap;
        ts.push_back(std::move(t));
      }
  return ts;
}

TEST_F(SettleTest, TheCheaperTargetsProbesGoFirstThenTheDearerOnesThenTheRest) {
  s.UpsertNode(H100(1));  // fits both targets
  std::vector<daemon::QueuedTrial> ts = PricedTrials(6.0, 1.5);
  EXPECT_DOUBLE_EQ(daemon::TrialCost(ts[0]), 1.5);   // 1 GPU x 6.0 x 0.25 h
  EXPECT_DOUBLE_EQ(daemon::TrialCost(ts[6]), 0.375);  // 1 GPU x 1.5 x 0.25 h
  s.AddSweep(Info({{"load", {"a"}}}, 0), ts);
  std::vector<std::pair<int, bool>> order;  // (target, opened a value of a)
  std::set<std::pair<int, std::string>> seen;
  while (auto g = LeaseGpu(s, 1)) {
    const daemon::QueuedTrial& t = ts[g->trial - 1];
    order.emplace_back(t.target, seen.insert({t.target, t.config.at("a")}).second);
    store::ResultRow r;
    r.verdict = Verdict::kPassed;
    ASSERT_TRUE(s.Report(g->lease, r).ok());
  }
  const std::vector<std::pair<int, bool>> want = {{1, true},  {1, true},  {1, true},  {0, true},
                                                  {0, true},  {0, true},  {1, false}, {1, false},
                                                  {1, false}, {0, false}, {0, false}, {0, false}};
  EXPECT_EQ(order, want);
}

TEST_F(SettleTest, UnpricedTargetsOrANodeOfOneTargetKeepTheTargetsOrder) {
  s.UpsertNode(H100(1));
  s.AddSweep(Info({{"load", {"a"}}}, 0), PricedTrials(1.0, 1.0));  // equal prices: target order
  std::vector<int> targets;
  while (auto g = LeaseGpu(s, 1)) {
    targets.push_back(g->trial <= 6 ? 0 : 1);
    store::ResultRow r;
    r.verdict = Verdict::kPassed;
    ASSERT_TRUE(s.Report(g->lease, r).ok());
  }
  EXPECT_EQ(targets, (std::vector<int>{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
  // A node only the dear target fits: its trials, probes first, whatever the other target costs.
  daemon::Scheduler one{clock, store, daemon::SchedulerOptions{}};
  daemon::TrackedNode b200 = H100(2);
  b200.inv.gpus[0] = {0, "NVIDIA B200", "GPU-B", 10, 0, 183359};
  one.UpsertNode(b200);
  std::vector<daemon::QueuedTrial> ts = PricedTrials(6.0, 1.5);
  one.AddSweep(Info({{"load", {"a"}}}, 0), ts);
  std::vector<int64_t> got;
  while (auto g = LeaseGpu(one, 2)) {
    got.push_back(g->trial);
    store::ResultRow r;
    r.verdict = Verdict::kPassed;
    ASSERT_TRUE(one.Report(g->lease, r).ok());
  }
  EXPECT_EQ(got, (std::vector<int64_t>{1, 3, 5, 2, 4, 6}));
}

}  // namespace
}  // namespace gauntlet
