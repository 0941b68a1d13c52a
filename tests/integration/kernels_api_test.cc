// The kernel record through the daemon (issue 30): a worker's report carries `kernels` and a
// `fallback` verdict; the daemon checks and stores them, GET /api/v1/trials/{id} serves them, and
// the matrix's dispatch layer names the family that carried each cell. A real daemon on loopback,
// the worker protocol spoken by hand (register, lease, report).
#include <gtest/gtest.h>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

std::string Suites() { return SourceDir() + "/tests/fixtures/suites"; }

json Record(const std::string& family, const std::string& name) {
  return {{"processes", 1}, {"complete", true}, {"incomplete", 0}, {"dropped", 0}, {"names_dropped", 0},
          {"launches", 24}, {"gpu_ns", 37000000}, {"distinct", 1}, {"carrying_family", family}, {"problems", json::array()},
          {"top", {{{"name", name}, {"family", family}, {"count", 24}, {"total_ns", 37000000}, {"max_ns", 1600000}}}},
          {"omitted", 0}};
}

class KernelsApiTest : public ::testing::Test {
 protected:
  KernelsApiTest() : d(dir.path(), Suites()) {
    node = d.PostJson("/api/v1/nodes/register", {{"name", "manual"}, {"inventory", json::object()}})["node"].dump();
  }
  // Leases the next trial; returns {lease, trial}.
  std::pair<std::string, std::string> Lease() {
    json g = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}});
    EXPECT_TRUE(g.contains("lease")) << g.dump();
    return {g.value("lease", ""), g["trial"].dump()};
  }
  TempDir dir;
  Daemon d;
  std::string node;
};

TEST_F(KernelsApiTest, AFallbackWithItsKernelsIsStoredServedAndShownInTheDispatchLayer) {
  d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}}}, {"prune", false}}, 201);
  auto [l1, t1] = Lease();
  const std::string fam = "fmha_cutlassF (memory-efficient)";
  json report = {{"verdict", "fallback"},
                 {"signature", "fallback:" + fam},
                 {"failing_stage", "run"},
                 {"stages", {{{"name", "run"}, {"verdict", "fallback"}, {"dispatch", {{"status", "fallback"}, {"family", fam}}}}}},
                 {"kernels", Record(fam, "fmha_cutlassF_f32_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel)")}};
  ASSERT_EQ(d.Post("/api/v1/leases/" + l1 + "/result", report.dump()).status, 200);
  auto [l2, t2] = Lease();
  ASSERT_EQ(d.Post("/api/v1/leases/" + l2 + "/result", json{{"verdict", "passed"}}.dump()).status, 200);

  json t = d.GetJson("/api/v1/trials/" + t1);
  EXPECT_EQ(t["verdict"], "fallback");
  EXPECT_EQ(t["signature"], "fallback:" + fam);
  ASSERT_TRUE(t["kernels"].is_object()) << t.dump();
  EXPECT_EQ(t["kernels"]["top"][0]["count"], 24);
  EXPECT_EQ(t["kernels"]["carrying_family"], fam);
  EXPECT_FALSE(d.GetJson("/api/v1/trials/" + t2).contains("kernels")) << "a trial without a record has none";

  json m = d.GetJson("/api/v1/matrix?suite=fixture-cmd&rows=mode&cols=hardware&layer=dispatch");
  int seen = 0;
  for (auto& c : m["cells"]) {
    if (c["verdict"] == "fallback") {
      EXPECT_EQ(c["dispatch"], fam);
      EXPECT_EQ(c["dispatch_status"], "fallback");
      ++seen;
    } else {
      EXPECT_TRUE(c["dispatch"].is_null()) << c.dump();
    }
  }
  EXPECT_EQ(seen, 1) << m.dump();
  EXPECT_FALSE(d.GetJson("/api/v1/matrix?suite=fixture-cmd&rows=mode")["cells"][0].contains("dispatch"));
  const std::string csv = d.Get("/api/v1/matrix?suite=fixture-cmd&rows=mode&layer=dispatch&format=csv").body;
  EXPECT_NE(csv.find(",dispatch,dispatch_status"), std::string::npos) << csv;
  EXPECT_NE(csv.find(fam + ",fallback"), std::string::npos) << csv;
  auto bad = d.Get("/api/v1/matrix?suite=fixture-cmd&layer=kernels");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.body.find("\"layer\""), std::string::npos) << bad.body;
}

TEST_F(KernelsApiTest, AMalformedRecordIsRefusedNamingTheFieldAndLosesNothing) {
  d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  auto [l, t] = Lease();
  json rec = Record("x", "k");
  rec["top"][0]["count"] = -3;
  auto r = d.Post("/api/v1/leases/" + l + "/result", json{{"verdict", "passed"}, {"kernels", rec}}.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("kernels.top[0].count"), std::string::npos) << r.body;
  EXPECT_NE(d.GetJson("/api/v1/trials/" + t)["state"], "done");
  // The same report with a sound record is taken.
  EXPECT_EQ(d.Post("/api/v1/leases/" + l + "/result", json{{"verdict", "passed"}, {"kernels", Record("x", "k")}}.dump()).status,
            200);
  EXPECT_EQ(d.GetJson("/api/v1/trials/" + t)["kernels"]["top"][0]["name"], "k");
}

}  // namespace
}  // namespace gauntlet::test
