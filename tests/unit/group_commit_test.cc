// Group commit: writes staged by many threads are each acknowledged only once a commit made them
// visible to other connections; a failed commit loses its whole batch and says so to every waiter;
// a failing write inside a batch rolls back alone.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "store/store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

std::set<std::string> NodeNames(store::Store& s) {
  std::set<std::string> out;
  auto nodes = s.ListNodes();
  if (nodes.ok())
    for (auto& n : *nodes) out.insert(n.name);
  return out;
}

struct Acks {
  std::mutex mu;
  std::condition_variable cv;
  int ok = 0, failed = 0, wrong = 0;
  void Add(bool ok_now, bool visible) {
    std::lock_guard lock(mu);
    (ok_now ? ok : failed)++;
    if (ok_now != visible) wrong++;  // acknowledged but not visible, or failed but visible
    cv.notify_all();
  }
  void WaitFor(int n) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return ok + failed >= n; });
  }
};

TEST(GroupCommit, ConcurrentStagedWritesAreEachAcknowledgedAfterTheirCommit) {
  test::TempDir dir;
  auto s = store::Store::Open(dir.path() + "/g.db");
  ASSERT_TRUE(s.ok()) << s.status().message();
  store::Store& store = **s;
  constexpr int kThreads = 8, kEach = 50;
  Acks acks;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string name = "n" + std::to_string(t) + "-" + std::to_string(i);
        store::Store::Group group;
        ASSERT_TRUE(store.RegisterNode(name, json::object(), json::object(), json::object(), "cpu").ok());
        // The callback reads through a pooled read connection: it sees only committed rows.
        store.AfterCommit(store.Staged(), [&, name](const Status& st) { acks.Add(st.ok(), NodeNames(store).count(name) > 0); });
      }
    });
  for (auto& t : ts) t.join();
  acks.WaitFor(kThreads * kEach);
  EXPECT_EQ(acks.ok, kThreads * kEach);
  EXPECT_EQ(acks.wrong, 0);
  EXPECT_EQ(NodeNames(store).size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_TRUE(store.Outcome(store.Staged()).value_or(Status::Internal("pending")).ok());
}

TEST(GroupCommit, AFailedCommitLosesItsBatchAndTellsEveryWaiter) {
  test::TempDir dir;
  auto s = store::Store::Open(dir.path() + "/g.db");
  ASSERT_TRUE(s.ok()) << s.status().message();
  store::Store& store = **s;
  std::atomic<int> failures{0};
  store.OnCommitFailure([&] { ++failures; });
  Acks acks;
  int staged = 0;
  {
    store::Store::Group group;
    for (int i = 0; i < 5; ++i) {
      const std::string name = "before-" + std::to_string(i);
      ASSERT_TRUE(store.RegisterNode(name, json::object(), json::object(), json::object(), "cpu").ok());
      store.AfterCommit(store.Staged(), [&, name](const Status& st) { acks.Add(st.ok(), NodeNames(store).count(name) > 0); });
      ++staged;
    }
    // A write whose own statements succeed but whose commit cannot: a deferred foreign key that
    // points nowhere. Everything staged with it in the same transaction goes with it.
    store.Write([](store::sql::Db& db) {
      db.Exec("PRAGMA defer_foreign_keys=ON");
      db.Exec("INSERT INTO results(trial_id, attempt, verdict, finished_at) VALUES(424242, 1, 'passed', 0)");
    });
    const store::Store::Ticket bad = store.Staged();
    store.AfterCommit(bad, [&](const Status& st) { acks.Add(st.ok(), false); });
    ++staged;
    acks.WaitFor(staged);
    EXPECT_FALSE(store.Outcome(bad)->ok());
  }
  EXPECT_GE(acks.failed, 1);
  EXPECT_EQ(acks.wrong, 0);
  EXPECT_GE(failures.load(), 1);
  // The store goes on: a later write commits.
  ASSERT_TRUE(store.RegisterNode("after", json::object(), json::object(), json::object(), "cpu").ok());
  EXPECT_EQ(NodeNames(store).count("after"), 1u);
}

TEST(GroupCommit, AFailingWriteInABatchRollsBackAlone) {
  test::TempDir dir;
  auto s = store::Store::Open(dir.path() + "/g.db");
  ASSERT_TRUE(s.ok()) << s.status().message();
  store::Store& store = **s;
  store::Store::Group group;
  ASSERT_TRUE(store.RegisterNode("kept", json::object(), json::object(), json::object(), "cpu").ok());
  EXPECT_THROW(store.Write([](store::sql::Db& db) {
    db.Exec("INSERT INTO nodes(name, inventory, labels, fingerprint, hardware, state, registered_at, last_heartbeat)"
            " VALUES('dropped', '{}', '{}', '{}', 'cpu', 'online', 0, 0)");
    throw std::runtime_error("the write fails half way");
  }), std::runtime_error);
  ASSERT_TRUE(store.Flush().ok());
  auto names = NodeNames(store);
  EXPECT_EQ(names.count("kept"), 1u);
  EXPECT_EQ(names.count("dropped"), 0u);
  EXPECT_TRUE(store.Outcome(store.Staged())->ok());
}

}  // namespace
}  // namespace gauntlet
