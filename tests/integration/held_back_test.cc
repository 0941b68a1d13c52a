// GPUs a worker holds back (NVML lists processes on them after their trial) over real HTTP against
// a real `gauntlet serve`: the lease request says which and why, the scheduler leases none of them
// whatever the request calls free, GET /api/v1/nodes and /nodes/{id} show them, `gauntlet nodes`
// prints them, and a malformed report is a 422 naming the field.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;


const char* kReason = "GPU 1 still has processes after its trial: 4242 (python3)";

json TwoGpuNode() {
  json gpu = {{"name", "NVIDIA H200"}, {"compute_capability", "9.0"}, {"memory_mb", 143771}};
  json a = gpu, b = gpu;
  a["index"] = 0;
  a["uuid"] = "GPU-0";
  b["index"] = 1;
  b["uuid"] = "GPU-1";
  return {{"name", "held"}, {"inventory", {{"gpus", {a, b}}}}};
}

TEST(HeldBack, TheDaemonLeasesNoHeldBackGpuAndShowsWhyOverHttp) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  const int64_t node = d.PostJson("/api/v1/nodes/register", TwoGpuNode())["node"].get<int64_t>();
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-gpu"}, {"parameters", {{"mode", {"pass"}}, {"i", {"1", "2"}}}}},
                          201);
  ASSERT_EQ(sweep["trials"], 2);
  const std::string lease = "/api/v1/nodes/" + std::to_string(node) + "/lease";
  const json held = json::array({{{"gpu", 1}, {"reason", kReason}, {"pids", {4242}}}});

  // The request calls both GPUs free (a worker's list can be stale) and GPU 1 held back: 0 is leased.
  auto first = d.Post(lease, json{{"free_gpus", {0, 1}}, {"held_back", held}, {"wait_s", 0}}.dump());
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(json::parse(first.body)["gpus"], json({0}));
  auto second = d.Post(lease, json{{"free_gpus", {0, 1}}, {"held_back", held}, {"wait_s", 0}}.dump());
  EXPECT_EQ(second.status, 204) << "GPU 0 is leased and GPU 1 held back: " << second.body;

  json items = d.GetJson("/api/v1/nodes")["items"];
  ASSERT_EQ(items.size(), 1u);
  ASSERT_EQ(items[0]["held_back"].size(), 1u) << items.dump();
  const json& h = items[0]["held_back"][0];
  EXPECT_EQ(h["gpu"], 1);
  EXPECT_EQ(h["reason"], kReason);
  EXPECT_EQ(h["pids"], json({4242}));
  EXPECT_GT(h.value("since", int64_t{0}), 0);
  EXPECT_EQ(d.GetJson("/api/v1/nodes/" + std::to_string(node))["held_back"], items[0]["held_back"]);
  EXPECT_EQ(d.Get("/api/v1/nodes/" + std::to_string(node + 100)).status, 404);

  Child cli({GauntletBin(), "nodes", "--server", d.url()}, dir.path() + "/cli.log");
  int st = cli.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cli.Log();
  EXPECT_NE(cli.Log().find("HELD BACK"), std::string::npos) << cli.Log();
  EXPECT_NE(cli.Log().find("1 (pids 4242)"), std::string::npos) << cli.Log();
  EXPECT_NE(cli.Log().find(std::string("held GPU 1 held back: ") + kReason), std::string::npos) << cli.Log();

  for (const json& bad : {json("x"), json({{{"gpu", "1"}}}), json({{{"gpu", 1}, {"pids", {"a"}}}}),
                          json({{{"gpu", -1}}}), json({{{"gpu", 1}, {"reason", 7}}})}) {
    auto r = d.Post(lease, json{{"free_gpus", json::array()}, {"held_back", bad}, {"wait_s", 0}}.dump());
    EXPECT_EQ(r.status, 422) << bad.dump();
    EXPECT_EQ(json::parse(r.body, nullptr, false).value("field", ""), "held_back") << r.body;
  }
  EXPECT_EQ(d.GetJson("/api/v1/nodes")["items"][0]["held_back"], items[0]["held_back"])
      << "a refused report changes nothing";

  // The worker no longer holds it back: GPU 1 is leased, and the nodes list says nothing is held.
  auto third = d.Post(lease, json{{"free_gpus", {1}}, {"held_back", json::array()}, {"wait_s", 0}}.dump());
  ASSERT_EQ(third.status, 200) << third.body;
  EXPECT_EQ(json::parse(third.body)["gpus"], json({1}));
  EXPECT_EQ(d.GetJson("/api/v1/nodes")["items"][0]["held_back"], json::array());
}

}  // namespace
}  // namespace gauntlet::test
