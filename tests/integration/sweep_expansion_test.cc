// A big sweep through a real daemon and worker (docs/DESIGN.md "Storage"): the 201 comes once the
// sweep is durable, its trials are stored afterwards while the listing says so, a runnable sweep
// submitted behind it runs meanwhile, and a SIGTERM during the expansion loses nothing: the next
// start resumes it, ending with exactly its trials.
#include <gtest/gtest.h>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

TEST(SweepExpansion, ABigSweepIsDurableAtItsAnswerAndWholeAfterARestartMidway) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--threads", "2"});
  auto w = StartWorker(dir.path(), d.url(), "cpu", json::object());
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == 1; }));
  // 2 x 300 x 100 = 60,000 trials on sm_100, which no node here has.
  const json big = {{"suite", "fixture-cmd"},
                    {"parameters", {{"mode", {"pass", "fail"}}, {"seconds", CountingValues(300)}, {"count", CountingValues(100)}}},
                    {"targets", {{{"arch", "sm_100"}}}},
                    {"max_trials", 100000}};
  json created = d.PostJson("/api/v1/sweeps", big, 201);
  ASSERT_EQ(created["trials"], 60000);
  EXPECT_EQ(created["expanding"], true);
  const std::string path = "/api/v1/sweeps/" + created["id"].dump();
  json shown = d.GetJson(path);
  EXPECT_EQ(shown["trials"], 60000);
  EXPECT_EQ(shown["finished"], false);
  EXPECT_LE(shown["materialized"].get<int64_t>(), 60000);
  // A runnable sweep behind it is leased from its own answer on, not after the expansion.
  json small = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  EXPECT_EQ(small["expanding"], false);
  json ran = d.WaitSweep(small["id"].get<int64_t>());
  EXPECT_EQ(ran["by_verdict"]["passed"], 1) << ran.dump();

  const bool midway = d.GetJson(path)["expanding"].get<bool>();
  std::cerr << "SIGTERM with the expansion " << (midway ? "under way" : "already done") << "\n";
  w.reset();
  EXPECT_EQ(d.Stop(), 0) << d.Log();
  d.Start();
  ASSERT_TRUE(WaitFor([&] { return !d.GetJson(path)["expanding"].get<bool>(); }, std::chrono::seconds(120)));
  shown = d.GetJson(path);
  EXPECT_EQ(shown["materialized"], 60000);
  EXPECT_EQ(shown["by_state"]["queued"], 60000) << shown.dump();
  // Ids consecutive, none missing and none twice: 60,000 distinct ids from the first to the last.
  json lowest = d.GetJson("/api/v1/trials?limit=1&sweep=" + created["id"].dump());
  json highest = d.GetJson("/api/v1/trials?limit=1&desc=1&sweep=" + created["id"].dump());
  ASSERT_EQ(lowest["items"].size(), 1u);
  ASSERT_EQ(highest["items"].size(), 1u);
  EXPECT_EQ(highest["items"][0]["id"].get<int64_t>() - lowest["items"][0]["id"].get<int64_t>(), 59999);
  json listed = d.GetJson("/api/v1/sweeps?state=running");
  bool found = false;
  for (auto& s : listed["items"]) found = found || s["id"] == created["id"];
  EXPECT_TRUE(found) << "queued, so still running";
}

}  // namespace
}  // namespace gauntlet::test
