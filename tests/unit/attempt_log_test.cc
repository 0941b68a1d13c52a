// A trial's log across attempts (Store::LeaseTrial / AppendLog): each attempt's worker counts its
// log from 0, and the trial keeps every attempt's, in order, each later one after a line naming it;
// a grant given back before its worker saw it adds no label, and an attempt that wrote nothing
// still gets its own.
#include <gtest/gtest.h>

#include "store/store.h"

namespace gauntlet {
namespace {
using nlohmann::json;

class AttemptLog : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::Store::Open(":memory:"));
    json def = {{"name", "s"}, {"version", 1}, {"parameters", {{"a", {"x"}}}},
                {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
    auto suite = store_->PutSuite("s", def, "");
    ASSERT_TRUE(suite.ok());
    ASSERT_TRUE(store_->CreateSweep(suite->id, "n", json::object(), 0, 3, {{json{{"a", "x"}}.dump(), "a=x", 0, 0}}, &trial_).ok());
    auto node = store_->RegisterNode("w", json::object(), json::object(), json::object(), "cpu");
    ASSERT_TRUE(node.ok());
    node_ = node->id;
  }
  // Leases the trial, as a grant does: one attempt more. Requeue puts it back with `attempt` made.
  void Lease(const std::string& lease) {
    ASSERT_TRUE(store_->LeaseTrial(trial_, node_, lease, ++epoch_, 1 << 30, "", "cpu").ok());
  }
  void Requeue(int attempt) { ASSERT_TRUE(store_->RequeueTrial(trial_, attempt).ok()); }
  std::string Log() {
    std::string out;
    int64_t size = 0, next = 0;
    EXPECT_TRUE(store_->ReadLog(trial_, 0, 1 << 20, &out, &size, &next).ok());
    return out;
  }
  std::unique_ptr<store::Store> store_;
  int64_t trial_ = 0, node_ = 0, epoch_ = 0;
};

TEST_F(AttemptLog, EveryAttemptIsKeptInOrderEachLaterOneLabelled) {
  Lease("l1");
  ASSERT_TRUE(store_->AppendLog(trial_, 0, "one: start\n", 1 << 20).ok());
  ASSERT_TRUE(store_->AppendLog(trial_, 11, "one: timed out\n", 1 << 20).ok());
  EXPECT_EQ(Log(), "one: start\none: timed out\n") << "a first attempt's log carries no label";
  Requeue(1);
  Lease("l2");
  // Attempt 2's worker starts at 0 again; a chunk sent twice is kept once.
  ASSERT_TRUE(store_->AppendLog(trial_, 0, "two: start\n", 1 << 20).ok());
  ASSERT_TRUE(store_->AppendLog(trial_, 0, "two: start\n", 1 << 20).ok());
  EXPECT_EQ(store_->AppendLog(trial_, 99, "past the end", 1 << 20).code(), Code::kConflict);
  EXPECT_EQ(Log(),
            "one: start\none: timed out\n"
            "\n[gauntlet] ===== attempt 2 of this trial begins here; the log above is attempt 1's =====\n"
            "two: start\n");
}

TEST_F(AttemptLog, AGivenBackGrantAddsNoLabelAndASilentAttemptKeepsItsOwn) {
  Lease("l1");
  ASSERT_TRUE(store_->AppendLog(trial_, 0, "one\n", 1 << 20).ok());
  Requeue(1);
  Lease("l2");  // attempt 2, given back before its worker saw it: the same attempt is granted again
  Requeue(1);
  Lease("l2b");
  Requeue(2);  // it wrote nothing; attempt 3 says so by its own label right after attempt 2's
  Lease("l3");
  ASSERT_TRUE(store_->AppendLog(trial_, 0, "three\n", 1 << 20).ok());
  EXPECT_EQ(Log(),
            "one\n"
            "\n[gauntlet] ===== attempt 2 of this trial begins here; the log above is attempt 1's =====\n"
            "\n[gauntlet] ===== attempt 3 of this trial begins here; the log above is attempt 2's =====\n"
            "three\n");
}

}  // namespace
}  // namespace gauntlet
