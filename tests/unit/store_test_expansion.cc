// Big sweeps expanded after their answer (docs/DESIGN.md "Storage"): the store's reserved ids and
// counted chunks, and the coordinator's expander: whole once expanded, resumed after a stop with
// exactly its trials, stopped by a cancel, and honest about its partial state meanwhile.
#include <gtest/gtest.h>

#include <tuple>

#include "api/codec.h"
#include "api/requests.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "daemon/suite_loader.h"
#include "store/deliveries.h"
#include "store/store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

json ExpansionSuite() {
  return {{"name", "s"}, {"version", 1}, {"parameters", {{"a", {"x", "y"}}}},
          {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
}

// Trials [from, to) of a sweep begun at `first`, as its expander would store them.
std::vector<store::NewTrial> Chunk(int64_t first, int from, int to) {
  std::vector<store::NewTrial> out;
  for (int i = from; i < to; ++i) out.push_back({json{{"a", "x"}}.dump(), "a=x", 0, i, first + i});
  return out;
}

bool Has(const std::vector<int64_t>& ids, int64_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

TEST(StoreExpansion, ABegunSweepReservesItsIdsAndSaysHowManyAreStored) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", ExpansionSuite(), "");
  int64_t first = 0;
  auto big = s->BeginSweep(suite->id, "big", json::object(), 0, 10, &first);
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_GT(first, 0);
  // Written after it, whole, and before any of its trials: past its ten ids.
  int64_t other = 0;
  ASSERT_TRUE(s->CreateSweep(suite->id, "small", json::object(), 0, 3, {{"{}", "", 0, 0}}, &other).ok());
  EXPECT_EQ(other, first + 10);
  auto row = s->GetSweep(*big);
  ASSERT_TRUE(row.ok());
  EXPECT_TRUE(row->Expanding());
  EXPECT_EQ(row->Stored(), 0);
  EXPECT_EQ(row->trial_count, 10);
  EXPECT_EQ(row->first_trial, first);
  store::SweepFilter running;
  running.state = SweepState::kRunning;
  auto listed = s->ListSweeps(0, 10, running);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u) << "an expanding sweep is listed, and is running";

  // The second half first: a chunk is any of its trials, at their ids.
  auto added = s->AddSweepTrials(*big, 0, 3, Chunk(first, 5, 10));
  ASSERT_TRUE(added.ok() && *added) << added.status().message();
  auto again = s->AddSweepTrials(*big, 0, 3, Chunk(first, 0, 5));
  ASSERT_FALSE(again.ok()) << "a chunk counted from a stale count is refused";
  EXPECT_EQ(again.status().code(), Code::kConflict);
  // Every stored trial done: still not finished, since five are to come.
  std::vector<int64_t> stored;
  for (int i = 5; i < 10; ++i) stored.push_back(first + i);
  ASSERT_TRUE(s->FinishMany(stored, Verdict::kPassed, "", std::nullopt).ok());
  row = s->GetSweep(*big);
  EXPECT_EQ(row->Stored(), 5);
  const json shown = api::SweepJson(*row);
  EXPECT_EQ(shown["expanding"], true);
  EXPECT_EQ(shown["materialized"], 5);
  EXPECT_EQ(shown["trials"], 10);
  EXPECT_EQ(shown["done"], 5);
  EXPECT_EQ(shown["finished"], false);
  EXPECT_FALSE(Has(*store::FinishedUnannounced(*s), *big)) << "the notifier waits for the rest";

  added = s->AddSweepTrials(*big, 5, 3, Chunk(first, 0, 5));
  ASSERT_TRUE(added.ok() && *added) << added.status().message();
  row = s->GetSweep(*big);
  EXPECT_FALSE(row->Expanding());
  EXPECT_FALSE(row->materialized.has_value()) << "whole, as a sweep stored whole is";
  EXPECT_EQ(row->by_state["queued"], 5);
  EXPECT_EQ(row->by_state["done"], 5);
  EXPECT_TRUE(s->ExpandingSweeps()->empty());
  auto t = s->GetTrial(first + 3);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->sweep_id, *big);
  EXPECT_EQ(t->repeat_index, 3);
}

TEST(StoreExpansion, AnExpandingSweepOutlivesARestartAndACancelEndsIt) {
  test::TempDir dir;
  const std::string path = dir.path() + "/x.db";
  int64_t big = 0, empty = 0, first = 0, first_empty = 0;
  {
    auto s = std::move(*store::Store::Open(path));
    auto suite = s->PutSuite("s", ExpansionSuite(), "");
    big = *s->BeginSweep(suite->id, "big", json::object(), 0, 10, &first);
    empty = *s->BeginSweep(suite->id, "none yet", json::object(), 0, 10, &first_empty);
    EXPECT_EQ(first_empty, first + 10);
    ASSERT_TRUE(*s->AddSweepTrials(big, 0, 3, Chunk(first, 0, 4)));
  }
  auto s = std::move(*store::Store::Open(path));
  auto pending = s->ExpandingSweeps();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u) << "acknowledged, so kept: resumed, never removed";
  EXPECT_EQ(pending->at(0).sweep, big);
  EXPECT_EQ(pending->at(0).first_trial, first);
  EXPECT_EQ(pending->at(0).materialized, 4);
  EXPECT_EQ(*s->SweepTrialIds(big), (std::vector<int64_t>{first, first + 1, first + 2, first + 3}));

  std::vector<int64_t> cancelled, stopping;
  ASSERT_TRUE(s->CancelSweep(big, &cancelled, &stopping).ok());
  EXPECT_EQ(cancelled.size(), 4u);
  auto after = s->AddSweepTrials(big, 4, 3, Chunk(first, 4, 10));
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after) << "no trial is stored after the cancel";
  auto row = s->GetSweep(big);
  EXPECT_FALSE(row->Expanding());
  EXPECT_EQ(row->Stored(), 4);
  const json shown = api::SweepJson(*row);
  EXPECT_EQ(shown["finished"], true) << shown.dump();
  EXPECT_EQ(shown["materialized"], 4);
  EXPECT_TRUE(Has(*store::FinishedUnannounced(*s), big));
  // A sweep with none of its trials stored yet still has something to cancel: the rest.
  cancelled.clear();
  EXPECT_TRUE(s->CancelSweep(empty, &cancelled, &stopping).ok());
  EXPECT_TRUE(s->ExpandingSweeps()->empty());
}

// --- the coordinator's expander, on the fixture suites ---

json Values(int n) {
  json v = json::array();
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  return v;
}

// 2 modes x 40 x 70 configs x 2 targets = 11,200 trials, none of which a CPU-only fleet could run.
json BigSweep() {
  return {{"suite", "fixture-cmd"},
          {"parameters", {{"mode", {"pass", "fail"}}, {"seconds", Values(40)}, {"count", Values(70)}}},
          {"targets", {{{"arch", "sm_100"}}, {{"arch", "sm_120"}}}},
          {"max_trials", 100000}};
}

std::unique_ptr<store::Store> FixtureStore(const std::string& path) {
  auto opened = store::Store::Open(path);
  EXPECT_TRUE(opened.ok()) << opened.status().message();
  if (!opened.ok()) return nullptr;
  EXPECT_TRUE(daemon::LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites", **opened).ok());
  return std::move(*opened);
}

using TrialKey = std::tuple<int64_t, std::string, int, int, std::string>;  // id, config key, target, repeat, state

std::vector<TrialKey> StoredTrials(store::Store& s, int64_t sweep) {
  return s.Read([&](store::sql::Db& db) {
    auto q = db.Prepare("SELECT id, config_key, target_index, repeat_index, state FROM trials WHERE sweep_id=? ORDER BY id");
    q.Bind(1, sweep);
    std::vector<TrialKey> out;
    while (q.Step()) out.emplace_back(q.Int(0), q.Text(1), static_cast<int>(q.Int(2)), static_cast<int>(q.Int(3)), q.Text(4));
    return out;
  });
}

// What the sweep's trials are, by id, from its request: the grid in ExpandSweep's order, each
// config once per target and repeat, ids consecutive from `first`.
std::vector<TrialKey> ExpectedTrials(store::Store& s, const json& body, int64_t first) {
  auto row = s.GetSuite(body["suite"]);
  auto suite = ParseSuite(row->definition);
  auto req = ParseSweepRequest(body);
  auto configs = ExpandSweep(*suite, *req);
  std::vector<TrialKey> out;
  int64_t id = first;
  for (auto& c : *configs)
    for (int t = 0; t < static_cast<int>(req->targets.size()); ++t)
      for (int r = 0; r < req->repeats; ++r) out.emplace_back(id++, ConfigKey(c), t, r, "queued");
  return out;
}

bool Expanded(store::Store& s, int64_t sweep) {
  auto row = s.GetSweep(sweep);
  return row.ok() && !row->Expanding();
}

TEST(CoordinatorExpansion, ABigSweepIsAnsweredBeforeItsTrialsAndIsWholeOnceExpanded) {
  test::TempDir dir;
  auto store = FixtureStore(dir.path() + "/c.db");
  ASSERT_TRUE(store);
  daemon::EventBus events;
  daemon::Coordinator coord(*store, events, {});
  auto sub = coord.Submit(*api::ParseSweepSubmission(BigSweep()));
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  EXPECT_TRUE(sub->expanding);
  EXPECT_EQ(sub->trials, 11200);
  ASSERT_TRUE(test::WaitFor([&] { return Expanded(*store, sub->sweep); }));
  const int64_t first = store->GetSweep(sub->sweep)->first_trial;
  EXPECT_EQ(StoredTrials(*store, sub->sweep), ExpectedTrials(*store, BigSweep(), first));
  EXPECT_EQ(coord.Stats().queued, 11200) << "every stored trial queued once";
  // A small sweep is still stored whole before its answer.
  auto small = coord.Submit(*api::ParseSweepSubmission({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}));
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(small->expanding);
  EXPECT_EQ(store->GetSweep(small->sweep)->by_state["queued"], 1);
  coord.Stop();
}

TEST(CoordinatorExpansion, AStoppedExpansionResumesAtTheNextStartWithExactlyItsTrials) {
  test::TempDir dir;
  auto store = FixtureStore(dir.path() + "/c.db");
  ASSERT_TRUE(store);
  daemon::EventBus events;
  int64_t stopped = 0, holed = 0;
  {
    daemon::Coordinator coord(*store, events, {});
    // Stopped at once: it stops between two chunks, wherever the expander was.
    auto a = coord.Submit(*api::ParseSweepSubmission(BigSweep()));
    ASSERT_TRUE(a.ok()) << a.status().message();
    coord.Stop();
    stopped = a->sweep;
  }
  std::cerr << "stopped with " << store->GetSweep(stopped)->Stored() << " of 11200 trials stored\n";
  {
    daemon::Coordinator coord(*store, events, {});
    auto b = coord.Submit(*api::ParseSweepSubmission(BigSweep()));
    ASSERT_TRUE(b.ok());
    holed = b->sweep;
    ASSERT_TRUE(test::WaitFor([&] { return Expanded(*store, stopped) && Expanded(*store, holed); }));
    coord.Stop();
  }
  // What a death leaves, at its worst: trials missing anywhere (not a suffix), the count saying so.
  store->Write([&](store::sql::Db& db) {
    db.Exec("DELETE FROM trials WHERE sweep_id=" + std::to_string(holed) + " AND id % 3 != 0");
    db.Exec("UPDATE sweeps SET materialized=(SELECT COUNT(*) FROM trials WHERE sweep_id=" + std::to_string(holed) +
            ") WHERE id=" + std::to_string(holed));
  });
  ASSERT_TRUE(store->GetSweep(holed)->Expanding());
  daemon::Coordinator coord(*store, events, {});
  ASSERT_TRUE(test::WaitFor([&] { return Expanded(*store, holed); }));
  for (int64_t sweep : {stopped, holed}) {
    const int64_t first = store->GetSweep(sweep)->first_trial;
    EXPECT_EQ(StoredTrials(*store, sweep), ExpectedTrials(*store, BigSweep(), first)) << "sweep " << sweep;
  }
  EXPECT_EQ(coord.Stats().queued, 2 * 11200) << "restored and resumed, none queued twice";
  coord.Stop();
}

TEST(CoordinatorExpansion, ACancelWhileExpandingEndsWhatIsStoredAndStoresNoMore) {
  test::TempDir dir;
  auto store = FixtureStore(dir.path() + "/c.db");
  ASSERT_TRUE(store);
  daemon::EventBus events;
  daemon::Coordinator coord(*store, events, {});
  auto a = coord.Submit(*api::ParseSweepSubmission(BigSweep()));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(coord.CancelSweep(a->sweep).ok());
  const int64_t kept = store->GetSweep(a->sweep)->Stored();
  // Another big sweep expands after it; by then the expander has come back to the cancelled one.
  auto b = coord.Submit(*api::ParseSweepSubmission(BigSweep()));
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(test::WaitFor([&] { return Expanded(*store, b->sweep); }));
  auto row = store->GetSweep(a->sweep);
  EXPECT_EQ(row->Stored(), kept) << "nothing stored after the cancel";
  EXPECT_EQ(row->by_state.value("done", int64_t{0}), kept);
  EXPECT_EQ(row->by_verdict.value("cancelled", int64_t{0}), kept);
  const json shown = api::SweepJson(*row);
  EXPECT_EQ(shown["expanding"], false);
  EXPECT_EQ(shown["finished"], true) << shown.dump();
  EXPECT_EQ(coord.Stats().queued, 11200) << "only the other sweep's trials are queued";
  coord.Stop();
}

}  // namespace
}  // namespace gauntlet
