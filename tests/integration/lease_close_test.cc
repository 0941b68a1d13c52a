// A worker that goes away during its lease long-poll (killed, or its socket closed): over real
// HTTP against a real `gauntlet serve`, with real clients that close their sockets mid-poll. The
// daemon forgets such a wait at once, and a grant that still went to the closed connection is
// given back at once without spending an attempt, so the trial goes to a live worker. Before: the
// wait stayed open until its timer (up to 30 s) and took the next trial, which then sat out a
// lease expiry before it was queued again (attempt + 1).
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
using namespace std::chrono;


int64_t Register(Daemon& d, const std::string& name) {
  return d.PostJson("/api/v1/nodes/register", {{"name", name}, {"inventory", {{"gpus", json::array()}}}})["node"]
      .get<int64_t>();
}

std::string LeasePath(int64_t node) { return "/api/v1/nodes/" + std::to_string(node) + "/lease"; }

// The node as the fleet list shows it (the list, not /nodes/{id}, so that an older daemon can be
// measured by the same test).
json NodeView(Daemon& d, int64_t node) {
  const json nodes = d.GetJson("/api/v1/nodes");
  for (auto& n : nodes["items"])
    if (n.value("id", int64_t{0}) == node) return n;
  return json::object();
}

// A long-poll on a connection of its own, on a thread, that the test then breaks by closing the
// socket (Interrupt shuts it down: the daemon sees the client's FIN, as it would a killed one's).
class DyingPoll {
 public:
  DyingPoll(Daemon& d, int64_t node) : client_(d.url(), "") {
    thread_ = std::thread([this, node] {
      result_ = client_.Send("POST", LeasePath(node), json{{"free_gpus", json::array()}, {"wait_s", 30}}.dump(),
                             "application/json", seconds(60));
    });
    EXPECT_TRUE(WaitFor([&] { return NodeView(d, node).value("waiting", false); }, seconds(10)))
        << "the long-poll never reached the daemon: " << NodeView(d, node).dump();
  }
  void Close() {
    client_.Interrupt();
    thread_.join();
    ASSERT_FALSE(result_.ok()) << "the poll was answered before it was closed: " << result_->status;
  }
  ~DyingPoll() {
    if (thread_.joinable()) Close();
  }

 private:
  net::Client client_;
  Result<net::ClientResponse> result_ = Status(Code::kUnavailable, "not sent");
  std::thread thread_;
};

int64_t SubmitOne(Daemon& d) {
  json s = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  EXPECT_EQ(s["trials"], 1);
  return s["id"].get<int64_t>();
}

TEST(LeaseClose, AWaitWhoseSocketClosedIsForgottenAtOnce) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  const int64_t node = Register(d, "a");
  DyingPoll poll(d, node);
  poll.Close();
  EXPECT_TRUE(WaitFor([&] { return !NodeView(d, node).value("waiting", true); }, seconds(10)))
      << "the daemon still holds the wait of a closed connection";
  SubmitOne(d);
  auto r = d.Post(LeasePath(node), json{{"free_gpus", json::array()}, {"wait_s", 10}}.dump());
  ASSERT_EQ(r.status, 200) << "the trial went to the closed connection: " << r.body;
  EXPECT_EQ(json::parse(r.body)["attempt"], 1);
}

// Node a's poll is closed and the sweep submitted at once, before the daemon need have noticed:
// a, the first waiter, may be granted the trial; its grant must come back and go to b's live
// poll, still as attempt 1.
TEST(LeaseClose, AGrantToAClosedConnectionGoesToALiveWorkerWithoutSpendingAnAttempt) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  const int64_t a = Register(d, "a"), b = Register(d, "b");
  DyingPoll dying(d, a);
  Result<net::ClientResponse> live = Status(Code::kUnavailable, "not sent");
  net::Client live_client(d.url(), "");
  std::thread t([&] {
    live = live_client.Send("POST", LeasePath(b), json{{"free_gpus", json::array()}, {"wait_s", 20}}.dump(),
                            "application/json", seconds(60));
  });
  ASSERT_TRUE(WaitFor([&] { return NodeView(d, b).value("waiting", false); }, seconds(10)));
  dying.Close();
  SubmitOne(d);
  t.join();
  ASSERT_TRUE(live.ok()) << live.status().message();
  ASSERT_EQ(live->status, 200) << "no grant reached the live worker within its 20 s poll: " << live->body;
  json grant = json::parse(live->body);
  EXPECT_EQ(grant["attempt"], 1);
  json trial = d.GetJson("/api/v1/trials/" + std::to_string(grant["trial"].get<int64_t>()));
  EXPECT_EQ(trial["attempt"], 1) << trial.dump();
  EXPECT_EQ(trial["node_id"], b) << trial.dump();
  const bool returned = d.Log().find("its grant never reached the worker") != std::string::npos;
  std::printf("the closed connection was %s\n", returned ? "granted the trial, which came back"
                                                        : "forgotten before the trial was granted");
}

}  // namespace
}  // namespace gauntlet::test
