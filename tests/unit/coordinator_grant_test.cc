// A grant whose worker was gone when it came (Coordinator::ReturnGrant, called by the lease
// handler when its long-poll had ended or its answer could not be written): the clock thread gives
// the lease back at once and the next waiting worker gets the same trial, as the same attempt.
#include <gtest/gtest.h>

#include <future>

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

TEST(CoordinatorGrant, AGrantGivenBackGoesToTheNextWaiterAsTheSameAttempt) {
  test::TempDir dir;
  auto opened = store::Store::Open(dir.path() + "/c.db");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  store::Store& store = **opened;
  ASSERT_TRUE(daemon::LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites", store).ok());
  daemon::EventBus events;
  daemon::Coordinator coord(store, events, {});
  const int64_t a = coord.Register(*api::ParseRegistration({{"name", "a"}, {"inventory", json::object()}}))->node;
  const int64_t b = coord.Register(*api::ParseRegistration({{"name", "b"}, {"inventory", json::object()}}))->node;
  ASSERT_LT(a, b) << "a waits first in line";
  std::promise<daemon::LeaseOutcome> to_a, to_b;
  coord.Lease(a, {}, 10s, {}, daemon::LeaseWaiter{[] { return true; }, [&](daemon::LeaseOutcome x) { to_a.set_value(std::move(x)); }});
  coord.Lease(b, {}, 10s, {}, daemon::LeaseWaiter{[] { return true; }, [&](daemon::LeaseOutcome x) { to_b.set_value(std::move(x)); }});
  ASSERT_TRUE(coord.Submit(*api::ParseSweepSubmission({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}})).ok());

  daemon::LeaseOutcome first = to_a.get_future().get();
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().message();
  const json g = api::GrantJson(**first);
  EXPECT_EQ(g["attempt"], 1);
  coord.ReturnGrant(g["lease"]);  // as the handler does when a's connection had closed

  auto later = to_b.get_future();
  ASSERT_EQ(later.wait_for(10s), std::future_status::ready) << "the trial never reached the other waiter";
  daemon::LeaseOutcome second = later.get();
  ASSERT_TRUE(second.ok() && second->has_value()) << second.status().message();
  const json g2 = api::GrantJson(**second);
  EXPECT_EQ(g2["trial"], g["trial"]);
  EXPECT_EQ(g2["attempt"], 1) << "no attempt spent on the grant a never received";
  EXPECT_NE(g2["lease"], g["lease"]);
  auto t = store.GetTrial(g["trial"].get<int64_t>());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->attempt, 1);
  EXPECT_EQ(t->node_id, b);
  EXPECT_EQ(coord.Heartbeat(g["lease"], api::ParseHeartbeat(json::object())).status().code(), Code::kConflict)
      << "the given-back lease is gone";
}

}  // namespace
}  // namespace gauntlet
