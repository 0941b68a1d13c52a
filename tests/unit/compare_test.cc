// What changed between two runs (store/compare.h) on a real SQLite store, and the webhook queue's
// exactly-once marks (store/deliveries.h), migration 6 included.
#include <gtest/gtest.h>

#include "core/outcome_order.h"

#include "store/compare.h"
#include "store/deliveries.h"
#include "store/regressions.h"
#include "store/migrations.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

TEST(CompareChange, NamesEachKindOfChange) {
  EXPECT_EQ(Name(store::CompareChange(std::nullopt, "", Verdict::kPassed, "", false)), "new");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kPassed, "", std::nullopt, "", false)), "gone");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kCrashed, "c:x", Verdict::kPassed, "", false)), "fixed");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kPassed, "", Verdict::kUnsupported, "u:y", false)), "broke");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kPassed, "", Verdict::kPassed, "", true)), "broke");  // the metric fell
  EXPECT_EQ(Name(store::CompareChange(Verdict::kPassed, "", Verdict::kPassed, "", false)), "same");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kUnsupported, "u:y", Verdict::kCrashed, "c:x", false)), "broke");  // more severe
  EXPECT_EQ(Name(store::CompareChange(Verdict::kCrashed, "c:x", Verdict::kUnsupported, "u:y", false)), "changed");
  EXPECT_EQ(Name(store::CompareChange(Verdict::kCrashed, "c:x", Verdict::kCrashed, "c:z", false)), "changed");  // another signature
  EXPECT_EQ(Name(store::CompareChange(Verdict::kCrashed, "c:x", Verdict::kCrashed, "c:x", false)), "same");
}

class CompareStore : public ::testing::Test {
 protected:
  std::unique_ptr<store::Store> s = std::move(*store::Store::Open(":memory:"));
  int64_t suite = 0;
  void SetUp() override {
    json def = {{"name", "s"}, {"version", 1}, {"key_metric", "score"}, {"parameters", {{"a", {"x", "y"}}}},
                {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
    suite = s->PutSuite("s", def, "")->id;
  }
  // A sweep of one trial per (value of a, verdict, score), finished on hardware "hw".
  int64_t Sweep(const std::vector<std::tuple<std::string, std::string, double>>& runs) {
    std::vector<store::NewTrial> ts;
    for (auto& [a, v, m] : runs) ts.push_back({json{{"a", a}}.dump(), "a=" + a, 0, 0});
    int64_t first = 0;
    const int64_t id = *s->CreateSweep(suite, "", json::object(), 0, 3, ts, &first);
    for (size_t i = 0; i < runs.size(); ++i) {
      auto& [a, v, m] = runs[i];
      store::ResultRow r;
      r.trial_id = first + static_cast<int64_t>(i);
      r.attempt = 1;
      r.verdict = ParseVerdict(v).value();
      r.signature = v == "passed" ? "" : v + ":boom";
      r.hardware = "hw";
      r.finished_at = store::NowMs();
      if (v == "passed") r.metrics = {{"score", {{"value", m}, {"unit", "pts"}}}};
      EXPECT_TRUE(s->FinishTrial(r).ok());
    }
    return id;
  }
  json Cmp(int64_t a, int64_t b, double threshold = 0.1) {
    store::CompareSide sa, sb;
    sa.sweep = a;
    sb.sweep = b;
    auto j = store::Compare(*s, sa, sb, threshold);
    EXPECT_TRUE(j.ok()) << j.status().message();
    return j.ok() ? store::ComparisonJson(*j) : json();
  }
};

TEST_F(CompareStore, AKeyMetricThatFellPastTheThresholdBroke) {
  const int64_t a = Sweep({{"x", "passed", 100}, {"y", "passed", 100}});
  const int64_t b = Sweep({{"x", "passed", 80}, {"y", "passed", 95}});
  json j = Cmp(a, b);
  EXPECT_EQ(j["key_metric"], "score");
  EXPECT_EQ(j["summary"]["broke"], 1);
  EXPECT_EQ(j["summary"]["same"], 1);
  EXPECT_EQ(j["items"][0]["config_key"], "a=x");
  EXPECT_EQ(j["items"][0]["why"], "metric");
  EXPECT_NEAR(j["items"][0]["metric_change"].get<double>(), -0.2, 1e-9);
  EXPECT_NEAR(j["items"][1]["metric_change"].get<double>(), -0.05, 1e-9);
  // A looser threshold: nothing broke.
  EXPECT_EQ(Cmp(a, b, 0.25)["summary"]["broke"], 0);
}

TEST_F(CompareStore, ASweepsRepeatsShowTheirWorstAndSuiteSidesTheirLatest) {
  const int64_t a = Sweep({{"x", "passed", 1}, {"x", "crashed", 0}});  // one config run twice, disagreeing
  const int64_t b = Sweep({{"x", "passed", 1}});
  json j = Cmp(a, b);
  ASSERT_EQ(j["items"].size(), 1u);
  EXPECT_EQ(j["items"][0]["a"]["verdict"], "crashed");
  EXPECT_EQ(j["items"][0]["change"], "fixed");
  // Regressions: the result before sweep b's, from another sweep.
  store::CompareSide before, now;
  before.before_sweep = b;
  now.sweep = b;
  json r = store::ComparisonJson(*store::Compare(*s, before, now, 0.1));
  EXPECT_EQ(r["items"][0]["a"]["verdict"], "crashed");  // sweep a's later trial
  EXPECT_EQ(r["items"][0]["a"]["sweep"], a);
  // Errors.
  store::CompareSide missing, none;
  missing.sweep = 999;
  EXPECT_EQ(store::Compare(*s, missing, now, 0.1).status().code(), Code::kNotFound);
  auto bad = store::Compare(*s, now, none, 0.1);
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  EXPECT_EQ(bad.status().field(), "b");
}

// docs/SCHEDULING.md "Broke or flaky": one change that stayed is a break whatever the fingerprint
// (every run here has the same, empty one); passing and failing in turn is flaky.
TEST_F(CompareStore, OneChangeThatStayedBrokeAndPassingAndFailingInTurnIsFlaky) {
  const int64_t a = Sweep({{"x", "passed", 1}});
  const int64_t b = Sweep({{"x", "crashed", 0}});
  json j = Cmp(a, b);
  EXPECT_EQ(j["items"][0]["change"], "broke") << j.dump();
  EXPECT_EQ(j["items"][0]["why"], "verdict");
  const int64_t c = Sweep({{"x", "crashed", 0}});
  EXPECT_EQ(Cmp(a, c)["items"][0]["change"], "broke");  // P F F: still one change
  const int64_t d = Sweep({{"x", "passed", 1}});
  const int64_t e = Sweep({{"x", "crashed", 0}});
  json flaky = Cmp(d, e);  // P F F P F: in turn
  EXPECT_EQ(flaky["items"][0]["change"], "flaky") << flaky.dump();
  EXPECT_EQ(flaky["items"][0]["why"], "passed and failed in turn");
}

// The matrix cell's flag reads the same order: the suite-wide matrix (the results index, cells) and
// one fingerprint's (trial rows) call P F F a break and P F F P F flaky; repeats of one sweep that
// disagree are flaky whatever their order.
TEST_F(CompareStore, TheMatrixCellsFlakyFlagFollowsTheOrderOfRuns) {
  // by_trials: the fingerprint the results share, so the matrix is folded from trial rows.
  auto state_of_x = [&](bool by_trials) {
    store::MatrixQuery q;
    q.suite = "s";
    q.rows = {"a"};
    if (by_trials) {
      auto all = store::Matrix(*s, q);
      EXPECT_TRUE(all.ok() && !(*all)["fingerprints"].empty());
      if (!all.ok() || (*all)["fingerprints"].empty()) return std::string();
      const json& fp = (*all)["fingerprints"][0]["fingerprint"];
      q.fingerprint = fp.is_string() ? fp.get<std::string>() : fp.dump();
    }
    auto m = store::Matrix(*s, q);
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return std::string();
    for (const json& c : (*m)["cells"])
      if (c["row"] == json::array({"x"})) return c["state"].get<std::string>();
    return std::string("none");
  };
  Sweep({{"x", "passed", 1}});
  Sweep({{"x", "crashed", 0}});
  Sweep({{"x", "crashed", 0}});
  EXPECT_EQ(state_of_x(false), "failed");  // broke: not flaky
  EXPECT_EQ(state_of_x(true), "failed");
  Sweep({{"x", "passed", 1}});
  EXPECT_EQ(state_of_x(false), "flaky");  // P F F P: back again
  EXPECT_EQ(state_of_x(true), "flaky");
  // An old flake ages out of the latest kOrderWindow runs: a config failing ever since is a break.
  for (int i = 0; i < kOrderWindow; ++i) Sweep({{"x", "crashed", 0}});
  EXPECT_EQ(state_of_x(false), "failed");
  EXPECT_EQ(state_of_x(true), "failed");
  // Two runs of one sweep that disagree ran together: flaky, whatever finished first.
  Sweep({{"y", "crashed", 0}, {"y", "passed", 1}});
  store::MatrixQuery q;
  q.suite = "s";
  q.rows = {"a"};
  auto m = store::Matrix(*s, q);
  ASSERT_TRUE(m.ok());
  for (const json& c : (*m)["cells"])
    if (c["row"] == json::array({"y"})) EXPECT_EQ(c["state"], "flaky") << c.dump();
}

TEST(OutcomeOrder, RunsOfOneSweepThatDisagreeAreFlakyAndABreakIsNot) {
  auto run = [](int64_t at, int64_t sweep, bool passed, bool flaky = false) { return OrderedRun{at, sweep, passed, flaky}; };
  EXPECT_FALSE(RunsAreFlaky({}));
  EXPECT_FALSE(RunsAreFlaky({run(1, 1, true), run(2, 2, false), run(3, 3, false)}));
  EXPECT_TRUE(RunsAreFlaky({run(1, 1, true), run(2, 2, false), run(3, 3, true)}));
  // Given in any order, read by finish time: P F F, a break.
  EXPECT_FALSE(RunsAreFlaky({run(3, 3, false), run(1, 1, true), run(2, 2, false)}));
  EXPECT_TRUE(RunsAreFlaky({run(1, 1, true), run(2, 1, false)}));  // one sweep: no order to read
  EXPECT_TRUE(RunsAreFlaky({run(1, 1, true, true)}));              // its own trial flaked
  std::vector<OrderedRun> aged = {run(0, 0, true, true)};
  for (int i = 1; i <= kOrderWindow; ++i) aged.push_back(run(i, i, false));
  EXPECT_FALSE(RunsAreFlaky(aged));  // the flaky trial is older than the latest kOrderWindow
}

TEST_F(CompareStore, RegressionsListARunThatStayedWorseAndFlakesApart) {
  Sweep({{"x", "passed", 1}, {"y", "passed", 1}});
  Sweep({{"x", "crashed", 0}});
  auto r = store::Regressions(*s, std::string("s"), 0.1);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->cells.size(), 1u);  // P F: one change, it stayed
  EXPECT_TRUE(r->flaky.empty());
  Sweep({{"x", "passed", 1}});
  Sweep({{"x", "crashed", 0}});  // P F P F: in turn
  r = store::Regressions(*s, std::string("s"), 0.1);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cells.empty());
  ASSERT_EQ(r->flaky.size(), 1u);
  EXPECT_EQ(r->flaky[0].config_key, "a=x");
}

TEST(OutcomeOrder, ReadsTheLatestRunsInTheirOrder) {
  using V = Verdict;
  EXPECT_EQ(ReadOutcomeOrder({V::kPassed, V::kPassed}), OutcomeOrder::kStable);
  EXPECT_EQ(ReadOutcomeOrder({V::kPassed, V::kCrashed, V::kWrongOutput}), OutcomeOrder::kChanged);
  EXPECT_EQ(ReadOutcomeOrder({V::kPassed, V::kCrashed, V::kPassed}), OutcomeOrder::kInterleaved);
  // Timeouts and infra errors say nothing about the config.
  EXPECT_EQ(ReadOutcomeOrder({V::kPassed, V::kTimeout, V::kPassed, V::kInfraError, V::kCrashed}), OutcomeOrder::kChanged);
  // Only the latest kOrderWindow runs count: an old flake ages out.
  std::vector<Verdict> old = {V::kPassed, V::kCrashed, V::kPassed};
  for (int i = 0; i < kOrderWindow; ++i) old.push_back(V::kCrashed);
  EXPECT_EQ(ReadOutcomeOrder(old), OutcomeOrder::kStable);
}

TEST_F(CompareStore, ASweepIsAnnouncedOnceWithItsDeliveries) {
  const int64_t a = Sweep({{"x", "passed", 1}});
  auto due = store::FinishedUnannounced(*s);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(*due, std::vector<int64_t>{a});
  EXPECT_TRUE(*store::AnnounceSweep(*s, a, {{"http://h/x", "sweep.finished", "{}"}}));
  EXPECT_FALSE(*store::AnnounceSweep(*s, a, {{"http://h/x", "sweep.finished", "{}"}}));  // never twice
  EXPECT_TRUE(store::FinishedUnannounced(*s)->empty());
  auto rows = store::DueDeliveries(*s, store::NowMs(), 10);
  ASSERT_EQ(rows->size(), 1u);
  const int64_t id = (*rows)[0].id;
  // A refused attempt: pending again later; then delivered.
  ASSERT_TRUE(store::RecordAttempt(*s, id, store::NowMs(), 500, "answered 500", false, false, store::NowMs() + 60000).ok());
  EXPECT_TRUE(store::DueDeliveries(*s, store::NowMs(), 10)->empty());
  EXPECT_TRUE(store::NextDeliveryDue(*s)->has_value());
  ASSERT_TRUE(store::RecordAttempt(*s, id, store::NowMs(), 200, "", true, false, store::NowMs()).ok());
  auto list = store::ListDeliveries(*s, 0, 10, "delivered");
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].attempts, 2);
  EXPECT_EQ((*list)[0].last_status, 200);
  EXPECT_FALSE(store::NextDeliveryDue(*s)->has_value());
}

TEST(Migration6, SweepsFinishedBeforeItCountAsAnnounced) {
  test::TempDir dir;
  const std::string path = dir.path() + "/old.db";
  {
    store::sql::Db db(path);
    store::Migrate(db, 5);
    db.Exec("INSERT INTO suites(id, name, version, digest, definition, created_at) VALUES(1, 's', 1, 'd', '{}', 0)");
    db.Exec("INSERT INTO sweeps(id, suite_id, request, trial_count, created_at) VALUES(1, 1, '{}', 1, 5), (2, 1, '{}', 1, 6)");
    db.Exec("INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, state, verdict, created_at)"
            " VALUES(1, 1, '{}', '', 0, 'done', 'passed', 0), (2, 1, '{}', '', 0, 'queued', NULL, 0)");
  }
  auto s = store::Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto sw = (*s)->GetSweep(1);
  ASSERT_TRUE(sw.ok());
  EXPECT_EQ(sw->source, "api");
  EXPECT_FALSE(sw->rerun_of.has_value());
  // The finished one is not announced again; the running one will be when it ends.
  EXPECT_TRUE(store::FinishedUnannounced(**s)->empty());
  (*s)->Write([](store::sql::Db& db) { db.Exec("UPDATE trials SET state='done', verdict='passed' WHERE sweep_id=2"); });
  EXPECT_EQ(*store::FinishedUnannounced(**s), std::vector<int64_t>{2});
}

}  // namespace
}  // namespace gauntlet
