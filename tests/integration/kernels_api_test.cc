// The kernel record through the daemon (issue 30): a worker's report carries `kernels` and a
// `fallback` verdict; the daemon checks and stores them, GET /api/v1/trials/{id} serves them, and
// the matrix's dispatch layer names the family that carried each cell. A real daemon on loopback,
// the worker protocol spoken by hand (register, lease, report).
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;


json Record(const std::string& family, const std::string& name) {
  return {{"processes", 1}, {"complete", true}, {"incomplete", 0}, {"dropped", 0}, {"names_dropped", 0},
          {"launches", 24}, {"gpu_ns", 37000000}, {"distinct", 1}, {"carrying_family", family}, {"problems", json::array()},
          {"top", {{{"name", name}, {"family", family}, {"count", 24}, {"total_ns", 37000000}, {"max_ns", 1600000}}}},
          {"omitted", 0}};
}

class KernelsApiTest : public ::testing::Test {
 protected:
  KernelsApiTest() : d(dir.path(), FixtureSuites()) {
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


// Issue 32's evidence levels read the dispatch check the worker put in the stage's report entry: a
// config whose latest passing run verified its expected kernels is dispatch_verified, benchmarked
// with a metric over two runs; a record that could not decide stays correct; a fallback after a
// verified pass is no pass at all.
TEST_F(KernelsApiTest, TheEvidenceLevelReadsTheDispatchCheckOfTheLatestRun) {
  const json verified = {{"status", "verified"}, {"param", "mode"}, {"value", "x"}, {"pattern", "flash"}, {"matched", "flash_fwd"}};
  const json unverified = {{"status", "unverified"}, {"param", "mode"}, {"value", "x"}, {"pattern", "flash"}, {"reason", "incomplete"}};
  auto report = [&](const json& dispatch, double metric, const std::string& verdict = "passed") {
    json r = {{"verdict", verdict}, {"stages", {{{"name", "run"}, {"verdict", verdict}, {"dispatch", dispatch}}}}};
    if (metric > 0) r["metrics"] = {{"tflops", {{"value", metric}, {"unit", "TFLOP/s"}}}};
    if (verdict == "fallback") r["signature"] = "fallback:math", r["failing_stage"] = "run";
    return r;
  };
  // Every trial of a sweep, each answered by what its mode stands for here.
  auto run = [&](const json& modes, int repeats, const std::function<json(const std::string&)>& answer) {
    json s = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", modes}}}, {"repeats", repeats},
                                           {"reuse", false}, {"prune", false}}, 201);
    for (size_t i = 0; i < modes.size() * repeats; ++i) {
      json g = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}});
      ASSERT_TRUE(g.contains("lease")) << g.dump();
      ASSERT_EQ(d.Post("/api/v1/leases/" + g["lease"].get<std::string>() + "/result", answer(g["config"]["mode"].get<std::string>()).dump()).status, 200);
    }
    ASSERT_TRUE(d.WaitSweep(s["id"])["finished"].get<bool>());
  };
  run({"pass", "fail", "sleep"}, 2, [&](const std::string& mode) {
    return mode == "pass" ? report(verified, 5) : mode == "fail" ? report(verified, 0) : report(unverified, 3);
  });
  run({"unsupported"}, 1, [&](const std::string&) { return report(verified, 9); });
  run({"unsupported"}, 1, [&](const std::string&) { return report(json{{"status", "fallback"}, {"family", "math"}}, 0, "fallback"); });

  json m = d.GetJson("/api/v1/matrix?suite=fixture-cmd&rows=mode&cols=hardware&layer=evidence");
  std::map<std::string, std::string> level;
  for (auto& c : m["cells"]) level[c["row"][0].get<std::string>()] = c["evidence"];
  EXPECT_EQ(level["pass"], "benchmarked") << m.dump();
  EXPECT_EQ(level["fail"], "dispatch_verified");
  EXPECT_EQ(level["sleep"], "correct");
  EXPECT_EQ(level["unsupported"], "started");
  // The check and the recommendation name the same level.
  EXPECT_EQ(d.GetJson("/api/v1/check?suite=fixture-cmd&config.mode=fail")["evidence"], "dispatch_verified");
  EXPECT_EQ(d.GetJson("/api/v1/check?suite=fixture-cmd&config.mode=unsupported")["known"], "fails");
  json rec = d.GetJson("/api/v1/recommend?suite=fixture-cmd");
  ASSERT_EQ(rec["items"].size(), 1u) << rec.dump();
  EXPECT_EQ(rec["items"][0]["best"]["config"]["mode"], "pass");
  EXPECT_EQ(rec["items"][0]["best"]["evidence"], "benchmarked");
}

}  // namespace
}  // namespace gauntlet::test
