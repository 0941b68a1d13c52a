// A full disk under the daemon's database (issue 19): a real `gauntlet serve` whose database lives
// on a small tmpfs that the test fills. Writes answer 503 problem+json naming the cause with
// Retry-After, health says degraded, nothing stored is lost, no attempt is burnt, and all recovers
// once space is freed. Skips visibly where the test cannot mount a tmpfs (it needs root).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "tests/support/harness.h"
#include "tests/support/small_tmpfs.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

std::string Header(const net::ClientResponse& r, const std::string& name) {
  for (auto& [k, v] : r.headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return "";
}

TEST(DiskFull, WritesAnswer503UntilSpaceIsBackAndNothingIsLost) {
  TempDir dir;
  SmallTmpfs disk(dir.path() + "/disk", 6);
  if (!disk.mounted()) GTEST_SKIP() << "SKIP: cannot mount a tmpfs to fill (" << disk.why() << ")";
  Daemon d(dir.path() + "/disk", SourceDir() + "/tests/fixtures/suites");
  json before = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);

  disk.Fill("filler");
  // The WAL may still have room from earlier writes: sweeps of 400 trials until one cannot be stored.
  const std::string big = json{{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}, {"repeats", 400}}.dump();
  net::ClientResponse refused;
  int accepted = 0;
  for (int i = 0; i < 200; ++i) {
    auto r = d.Post("/api/v1/sweeps", big);
    ASSERT_TRUE(r.status == 201 || r.status == 503) << r.status << " " << r.body;  // never a 500
    if (r.status == 503) {
      refused = r;
      break;
    }
    ++accepted;
  }
  ASSERT_EQ(refused.status, 503) << "the disk never filled";
  EXPECT_EQ(Header(refused, "content-type"), "application/problem+json");
  EXPECT_EQ(Header(refused, "retry-after"), "5");
  json problem = json::parse(refused.body);
  EXPECT_NE(problem["detail"].get<std::string>().find("disk full"), std::string::npos) << problem.dump();

  auto health = d.Get("/api/v1/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_FALSE(Header(health, "retry-after").empty());
  json hj = json::parse(health.body);
  EXPECT_EQ(hj["status"], "degraded");
  EXPECT_NE(hj["store"].get<std::string>().find("disk full"), std::string::npos) << hj.dump();
  // Reads go on meanwhile: what was stored before is all there.
  EXPECT_EQ(d.GetJson("/api/v1/sweeps/" + before["id"].dump())["trials"], 1);

  // A worker meanwhile can neither register nor take a lease: it backs off, and no attempt is spent.
  auto w = StartWorker(dir.path(), d.url(), "w", json::object());
  ASSERT_TRUE(WaitFor([&] { return w->Log().find("cannot register") != std::string::npos; })) << w->Log();

  fs::remove(dir.path() + "/disk/filler");
  ASSERT_TRUE(WaitFor([&] { return d.Get("/api/v1/health").status == 200; })) << d.Get("/api/v1/health").body;
  json after = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  json done = d.WaitSweep(before["id"]);
  EXPECT_EQ(done["by_verdict"]["passed"], 1) << done.dump();
  json t = d.GetJson("/api/v1/trials?sweep=" + before["id"].dump())["items"][0];
  EXPECT_EQ(d.GetJson("/api/v1/trials/" + t["id"].dump())["attempt"], 1);  // the full disk burnt none
  EXPECT_EQ(d.WaitSweep(after["id"])["by_verdict"]["passed"], 1);
}

}  // namespace
}  // namespace gauntlet::test
