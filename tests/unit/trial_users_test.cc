// workers/trial_users.h: which options give trial users, and how ids are handed out (each running
// trial its own, round the range, so an id comes back only after the others were given).
#include "workers/trial_users.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

namespace gauntlet::worker {
namespace {

TEST(TrialUsers, BadOptionsAreNamed) {
  std::string error;
  EXPECT_EQ(TrialUsers::Configure("sometimes", "61000-61999", {}, "", "/", &error), nullptr);
  EXPECT_NE(error.find("--trial-users is auto, on or off"), std::string::npos) << error;
  for (const char* range : {"61000", "500-600", "62000-61000", "61000-x"}) {
    error.clear();
    EXPECT_EQ(TrialUsers::Configure("on", range, {}, "", "/", &error), nullptr) << range;
    EXPECT_NE(error.find("--trial-uids is FIRST-LAST"), std::string::npos) << error;
  }
  auto off = TrialUsers::Configure("off", "61000-61999", {}, "", "/", &error);
  ASSERT_NE(off, nullptr);
  EXPECT_FALSE(off->enabled());
  EXPECT_FALSE(off->Acquire().has_value());
  EXPECT_EQ(off->description().rfind("off: ", 0), 0u);
}

TEST(TrialUsers, EachRunningTrialGetsAnIdOfItsOwnAndAReleasedOneComesBackLast) {
  std::string error;
  auto users = TrialUsers::Configure("on", "62100-62102", {}, "", "/", &error);
  if (geteuid() != 0) {
    EXPECT_EQ(users, nullptr);
    EXPECT_NE(error.find("needs the worker to run as root"), std::string::npos) << error;
    GTEST_SKIP() << "trial users need root";
  }
  ASSERT_NE(users, nullptr) << error;
  ASSERT_TRUE(users->enabled()) << users->description();
  EXPECT_EQ(users->description(), "trial users (uids 62100-62102)");
  auto a = users->Acquire(), b = users->Acquire(), c = users->Acquire();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(std::set<uid_t>({a->uid, b->uid, c->uid}).size(), 3u);
  EXPECT_EQ(a->gid, a->uid);
  EXPECT_FALSE(users->Acquire().has_value()) << "every id is held";
  users->Release(*b);
  auto d = users->Acquire();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->uid, b->uid);  // the only free one
  users->Release(*a);
  users->Release(*c);
  auto e = users->Acquire();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->uid, c->uid) << "the next free id round the range after the last one given";
  // A user that cannot reach the workdir: auto turns off and says why; on refuses.
  auto closed = TrialUsers::Configure("auto", "62100-62102", {}, "", "/root", &error);
  ASSERT_NE(closed, nullptr);
  if (!TrialUsers::Can(62100, "/root", X_OK)) {
    EXPECT_FALSE(closed->enabled());
    EXPECT_NE(closed->description().find("cannot reach the workdir /root"), std::string::npos) << closed->description();
    EXPECT_EQ(TrialUsers::Configure("on", "62100-62102", {}, "", "/root", &error), nullptr);
  }
}

}  // namespace
}  // namespace gauntlet::worker
