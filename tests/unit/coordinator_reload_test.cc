// After a group commit fails (its staged writes are lost), the coordinator rebuilds its scheduler
// from the store before its next worker call, as a restart would: committed leases stay live and
// are not granted again, queued trials are granted once each, and nothing runs ahead of the store.
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "api/requests.h"
#include "api/views.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "daemon/suite_loader.h"
#include "store/store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// A lease that does not wait, as the worker gets it: once its commit is settled.
daemon::LeaseOutcome LeaseNow(daemon::Coordinator& coord, int64_t node) {
  std::promise<daemon::LeaseOutcome> p;
  auto f = p.get_future();
  EXPECT_EQ(coord.Lease(node, {}, 0ms, {}, daemon::LeaseWaiter{[] { return true; }, [&p](daemon::LeaseOutcome a) { p.set_value(std::move(a)); }}),
            0);
  return f.get();
}

// The outcome of the commit of everything staged so far.
Status Committed(daemon::Coordinator& coord) {
  std::promise<Status> p;
  auto f = p.get_future();
  if (auto now = coord.WhenCommitted([&p](Status s) { p.set_value(s); })) return *now;
  return f.get();
}

// A write whose statements succeed but whose commit cannot (a deferred foreign key that points
// nowhere), staged so that the committer commits it: the whole batch is lost.
void FailOneGroupCommit(store::Store& store) {
  store::Store::Group group;
  store.Write([](store::sql::Db& db) {
    db.Exec("PRAGMA defer_foreign_keys=ON");
    db.Exec("INSERT INTO results(trial_id, attempt, verdict, finished_at) VALUES(424242, 1, 'passed', 0)");
  });
  const store::Store::Ticket bad = store.Staged();
  std::promise<Status> p;
  store.AfterCommit(bad, [&p](const Status& s) { p.set_value(s); });
  ASSERT_FALSE(p.get_future().get().ok());
}

// A file store with the fixture suites loaded, for a coordinator under test.
std::unique_ptr<store::Store> FixtureStore(const test::TempDir& dir) {
  auto opened = store::Store::Open(dir.path() + "/c.db");
  EXPECT_TRUE(opened.ok()) << opened.status().message();
  if (!opened.ok()) return nullptr;
  EXPECT_TRUE(daemon::LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites", **opened).ok());
  return std::move(*opened);
}

TEST(CoordinatorReload, AFailedGroupCommitRebuildsTheSchedulerFromTheStore) {
  test::TempDir dir;
  auto owned = FixtureStore(dir);
  ASSERT_TRUE(owned);
  store::Store& store = *owned;
  daemon::EventBus events;
  daemon::Coordinator coord(store, events, {});
  auto sweep = coord.Submit(*api::ParseSweepSubmission({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail", "unsupported"}}}}}));
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials, 3);
  auto node = coord.Register(*api::ParseRegistration({{"name", "n1"}, {"inventory", json::object()}}));
  ASSERT_TRUE(node.ok()) << node.status().message();
  const int64_t id = node->node;

  daemon::LeaseOutcome first = LeaseNow(coord, id);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->has_value());
  const json grant = api::GrantJson(**first);

  FailOneGroupCommit(store);

  // The next calls run on the rebuilt scheduler: the committed lease is still live...
  auto hb = coord.Heartbeat(grant["lease"], api::ParseHeartbeat({{"running", true}}));
  ASSERT_TRUE(hb.ok()) << hb.status().message();
  EXPECT_TRUE(Committed(coord).ok());
  // ...and each of the other two trials is granted once, never the leased one again.
  std::set<int64_t> trials = {grant["trial"].get<int64_t>()};
  for (int i = 0; i < 2; ++i) {
    daemon::LeaseOutcome r = LeaseNow(coord, id);
    ASSERT_TRUE(r.ok() && r->has_value()) << r.status().message();
    EXPECT_TRUE(trials.insert(api::GrantJson(**r)["trial"].get<int64_t>()).second) << api::GrantJson(**r).dump();
  }
  daemon::LeaseOutcome none = LeaseNow(coord, id);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->has_value());
  coord.Stop();
}

}  // namespace
}  // namespace gauntlet

namespace gauntlet {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// Events in causal order: a follower never hears of a trial of a sweep before the sweep itself, even
// when a waiting worker is granted the sweep's first trial inside Submit (the grant's event is
// published by the committer thread, the sweep's by the submitting one).
TEST(CoordinatorEvents, ASweepIsAnnouncedBeforeAnyOfItsTrials) {
  test::TempDir dir;
  auto owned = FixtureStore(dir);
  ASSERT_TRUE(owned);
  store::Store& store = *owned;
  daemon::EventBus events;
  daemon::Coordinator coord(store, events, {});
  auto node = coord.Register(*api::ParseRegistration({{"name", "n1"}, {"inventory", json::object()}}));
  ASSERT_TRUE(node.ok()) << node.status().message();
  const int64_t id = node->node;
  auto sub = events.Subscribe(0, 0);
  std::vector<daemon::Event> seen;
  for (int i = 0; i < 20; ++i) {
    std::promise<daemon::LeaseOutcome> granted;
    auto f = granted.get_future();
    coord.Lease(id, {}, 10s, {}, daemon::LeaseWaiter{[] { return true; }, [&](daemon::LeaseOutcome a) { granted.set_value(std::move(a)); }});
    auto sweep = coord.Submit(*api::ParseSweepSubmission({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {std::to_string(i)}}}}}));
    ASSERT_TRUE(sweep.ok()) << sweep.status().message();
    daemon::LeaseOutcome a = f.get();
    ASSERT_TRUE(a.ok() && a->has_value()) << a.status().message();
    auto r = coord.Report((*a)->grant.lease, *api::ParseReport({{"verdict", "passed"}}));
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  // Every change staged so far is committed, so every event is published: drain what is queued.
  std::promise<Status> committed;
  if (auto now = coord.WhenCommitted([&](Status s) { committed.set_value(s); })) committed.set_value(*now);
  ASSERT_TRUE(committed.get_future().get().ok());
  // Drain what is queued. `batch` outlives the loop: a Next that finds nothing keeps its callback
  // until the subscription is closed below.
  std::optional<std::vector<daemon::Event>> batch;
  for (;;) {
    batch.reset();
    sub->Next([&](std::optional<std::vector<daemon::Event>> b) { batch = std::move(b); });
    if (!batch || batch->empty()) break;
    seen.insert(seen.end(), batch->begin(), batch->end());
  }
  std::set<int64_t> announced;
  int trial_events = 0;
  for (const daemon::Event& e : seen) {
    json d = json::parse(e.data);
    if (e.type == "sweep.created") announced.insert(d["sweep"].get<int64_t>());
    if (e.type == "trial.changed") {
      ++trial_events;
      EXPECT_TRUE(announced.count(d["sweep"].get<int64_t>())) << "trial event before its sweep: " << e.data;
    }
  }
  EXPECT_GE(trial_events, 20);
  sub->Close();
  coord.Stop();
}

}  // namespace
}  // namespace gauntlet
