// After a group commit fails (its staged writes are lost), the coordinator rebuilds its scheduler
// from the store before its next worker call, as a restart would: committed leases stay live and
// are not granted again, queued trials are granted once each, and nothing runs ahead of the store.
#include <gtest/gtest.h>

#include <future>

#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "daemon/suite_loader.h"
#include "store/store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// The answer as the client would get it: a deferred one (waiting for its commit) is waited for.
http::Response Answer(http::Response r) {
  if (!r.deferred) return r;
  std::promise<http::Response> p;
  auto f = p.get_future();
  r.deferred->Wait([&p](http::Response out) { p.set_value(std::move(out)); });
  return f.get();
}

// A write whose statements succeed but whose commit cannot (a deferred foreign key that points
// nowhere), staged so that the committer commits it: the whole batch is lost.
void FailOneGroupCommit(Store& store) {
  Store::Group group;
  store.Write([](sql::Db& db) {
    db.Exec("PRAGMA defer_foreign_keys=ON");
    db.Exec("INSERT INTO results(trial_id, attempt, verdict, finished_at) VALUES(424242, 1, 'passed', 0)");
  });
  const Store::Ticket bad = store.Staged();
  std::promise<Status> p;
  store.AfterCommit(bad, [&p](const Status& s) { p.set_value(s); });
  ASSERT_FALSE(p.get_future().get().ok());
}

TEST(CoordinatorReload, AFailedGroupCommitRebuildsTheSchedulerFromTheStore) {
  test::TempDir dir;
  auto opened = Store::Open(dir.path() + "/c.db");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Store& store = **opened;
  ASSERT_TRUE(LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites", store).ok());
  EventBus events;
  Coordinator coord(store, events, {});
  auto sweep = coord.Submit({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail", "unsupported"}}}}});
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials, 3);
  auto node = coord.Register({{"name", "n1"}, {"inventory", json::object()}});
  ASSERT_TRUE(node.ok()) << node.status().message();
  const int64_t id = (*node)["node"];

  http::Response first = Answer(coord.Lease(id, {}, 0ms));
  ASSERT_EQ(first.status, 200) << first.body;
  const json grant = json::parse(first.body);

  FailOneGroupCommit(store);

  // The next calls run on the rebuilt scheduler: the committed lease is still live...
  auto hb = coord.Heartbeat(grant["lease"], {{"running", true}});
  ASSERT_TRUE(hb.ok()) << hb.status().message();
  EXPECT_EQ(Answer(coord.Durable(http::Json(200, *hb))).status, 200);
  // ...and each of the other two trials is granted once, never the leased one again.
  std::set<int64_t> trials = {grant["trial"].get<int64_t>()};
  for (int i = 0; i < 2; ++i) {
    http::Response r = Answer(coord.Lease(id, {}, 0ms));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(trials.insert(json::parse(r.body)["trial"].get<int64_t>()).second) << r.body;
  }
  EXPECT_EQ(Answer(coord.Lease(id, {}, 0ms)).status, 204);
  coord.Stop();
}

}  // namespace
}  // namespace gauntlet
