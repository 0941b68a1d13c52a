// An idle worker is one waiting in its lease long-poll: while that call is open the daemon hears it,
// so its node's heartbeat age stays near zero and it never goes offline (issue 33: the age drifted
// to the poll's 20 s, since only the start of each poll counted). On a clock the test moves.
#include <gtest/gtest.h>

#include <atomic>

#include "api/requests.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "daemon/suite_loader.h"
#include "store/store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// A clock the test sets; read by the coordinator's clock thread as well, hence atomic.
class MovedClock : public daemon::Clock {
 public:
  std::atomic<int64_t> now{1'700'000'000'000};
  int64_t NowMs() override { return now.load(); }
};

const daemon::NodeView* Find(const std::vector<daemon::NodeView>& nodes, const std::string& name) {
  for (auto& n : nodes)
    if (n.row.name == name) return &n;
  return nullptr;
}

// The named node's state now ("" when there is no such node).
std::string StateOf(daemon::Coordinator& coord, const std::string& name) {
  auto nodes = coord.Nodes();
  const daemon::NodeView* n = Find(nodes, name);
  return n ? std::string(Name(n->row.state)) : "";
}

TEST(CoordinatorPresence, AWorkerInItsLongPollIsHeardFromWhileItWaits) {
  test::TempDir dir;
  auto opened = store::Store::Open(dir.path() + "/c.db");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  store::Store& store = **opened;
  ASSERT_TRUE(daemon::LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites", store).ok());
  daemon::EventBus events;
  MovedClock clock;
  daemon::CoordinatorOptions opts;
  opts.clock = &clock;
  opts.tick_ms = 20;
  daemon::Coordinator coord(store, events, opts);
  const int64_t idle = coord.Register(*api::ParseRegistration({{"name", "idle"}, {"inventory", json::object()}}))->node;
  ASSERT_TRUE(coord.Register(*api::ParseRegistration({{"name", "silent"}, {"inventory", json::object()}})).ok());
  // `idle` waits for work that never comes (nothing is queued); `silent` says nothing after registering.
  std::atomic<bool> open{true};
  coord.Lease(idle, {}, 3600s, {}, daemon::LeaseWaiter{[&] { return open.load(); }, [](daemon::LeaseOutcome) {}});

  clock.now += 20'000;
  auto nodes = coord.Nodes();
  ASSERT_NE(Find(nodes, "idle"), nullptr);
  ASSERT_NE(Find(nodes, "silent"), nullptr);
  EXPECT_TRUE(Find(nodes, "idle")->waiting);
  EXPECT_EQ(Find(nodes, "idle")->heartbeat_age_s, 0) << "its long-poll is open this moment";
  EXPECT_GE(Find(nodes, "silent")->heartbeat_age_s, 20) << "the clock moved for every node";

  // Past the offline limit (30 s): the silent node goes offline at a tick; the clock thread touched
  // the waiting one in that same tick, before it looked for silent nodes, so it is online still.
  clock.now += 20'000;
  ASSERT_TRUE(test::WaitFor([&] { return StateOf(coord, "silent") == "offline"; }, 10s));
  EXPECT_EQ(StateOf(coord, "idle"), "online");
  open = false;  // its call ended (the server's timer would now forget it)
  coord.Stop();
}

}  // namespace
}  // namespace gauntlet
