// Issue 21 through a real daemon and worker on loopback: flakiness as a measured fact (pass rates
// with their Wilson interval under repeats, GET /api/v1/flaky) and failures confirmed before they
// stand (confirm_failures), with the fixture that fails one run in three (counted in a file, so
// which run fails is fixed: the 1st, 4th, 7th ...).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_fixture.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

const json* StatCell(const json& m, const json& row) {
  for (auto& c : m["cells"])
    if (c["row"] == row) return &c;
  return nullptr;
}

class StatisticsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = std::make_unique<Daemon>(dir_.path(), SourceDir() + "/tests/fixtures/suites");
    worker_ = StartWorker(dir_.path(), d_->url(), "w", json::object(), {"--max-trials", "1"});
  }
  int64_t RunSweep(const json& body) {
    json s = d_->PostJson("/api/v1/sweeps", body, 201);
    json done = d_->WaitSweep(s["id"]);
    EXPECT_TRUE(done["finished"].get<bool>()) << done.dump();
    return s["id"];
  }
  TempDir dir_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

TEST_F(StatisticsTest, RepeatsMeasureAPassRateWithItsInterval) {
  const std::string runs = dir_.path() + "/flaky-runs";
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"reuse", false}, {"prune", false}, {"repeats", 6},
                               {"parameters", {{"mode", {"flaky", "pass"}}, {"dir", {runs}}}}});
  json m = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=mode");
  const json* flaky = StatCell(m, json::array({"flaky"}));
  ASSERT_TRUE(flaky) << m.dump();
  EXPECT_EQ((*flaky)["state"], "flaky");
  // Six runs of the flaky mode: runs 1 and 4 of its counter fail.
  const json& rate = (*flaky)["pass_rate"];
  EXPECT_EQ(rate["runs"], 6) << flaky->dump();
  EXPECT_EQ(rate["passed"], 4);
  EXPECT_NEAR(rate["rate"].get<double>(), 0.667, 1e-3);
  EXPECT_NEAR(rate["low"].get<double>(), 0.300, 1e-3);  // Wilson, 4 of 6
  EXPECT_NEAR(rate["high"].get<double>(), 0.903, 1e-3);
  EXPECT_EQ((*flaky)["flaky"][0]["pass_rate"]["runs"], 6);
  const json* pass = StatCell(m, json::array({"pass"}));
  EXPECT_EQ((*pass)["pass_rate"]["rate"], 1.0);
  EXPECT_LT((*pass)["pass_rate"]["low"].get<double>(), 1.0);  // six passes are not certainty
  // The flaky list names the config, least reliable first, with its rate; the steady one is absent.
  json f = d_->GetJson("/api/v1/flaky?suite=fixture-flaky");
  ASSERT_EQ(f["items"].size(), 1u) << f.dump();
  EXPECT_EQ(f["items"][0]["config"]["mode"], "flaky");
  EXPECT_EQ(f["items"][0]["pass_rate"]["runs"], 6);
  EXPECT_EQ(f["items"][0]["hardware"], "cpu");
  auto csv = d_->Get("/api/v1/flaky?suite=fixture-flaky&format=csv");
  EXPECT_EQ(csv.status, 200);
  EXPECT_NE(csv.body.find(",cpu,passed,4,6,0.667,0.3,0.903"), std::string::npos) << csv.body;
  // The CLI: the same list as a table a person reads, and as JSON.
  Out o = RunProgram(dir_, {GauntletBin(), "flaky", "--suite", "fixture-flaky", "--server", d_->url()});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("mode=flaky"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("4/6 = 67% (95%: 30-90%)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("mode=pass"), std::string::npos) << o.out;
  Out j = RunProgram(dir_, {GauntletBin(), "flaky", "--suite", "fixture-flaky", "--server", d_->url(), "--format", "json"});
  EXPECT_EQ(json::parse(j.out, nullptr, false)["items"].size(), 1u) << j.out;
  // Its CSV is the API's, byte for byte (issue 33: it had columns of its own).
  Out c = RunProgram(dir_, {GauntletBin(), "flaky", "--suite", "fixture-flaky", "--server", d_->url(), "--format", "csv"});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, csv.body);
  // The matrix's flaky line carries the rate too.
  Out mx = RunProgram(dir_, {GauntletBin(), "matrix", "--suite", "fixture-flaky", "--rows", "mode", "--server", d_->url()});
  EXPECT_NE(mx.out.find("pass rate 67% of 6 runs (95%: 30-90%)"), std::string::npos) << mx.out;
  EXPECT_EQ(d_->Get("/api/v1/flaky").status, 422);
  EXPECT_EQ(d_->Get("/api/v1/flaky?suite=nope").status, 404);
}

// Issue 29, as a new user met it: a config run once, then a sweep of it with `repeats: 5` and reuse
// on (the default). Every repeat took the first run's verdict, and the matrix said "6/6 passed, 95%
// interval 61-100%" from one run. A repeat is a run: reuse stands in for the first repeat only, the
// other four run, and the copy is counted apart.
TEST_F(StatisticsTest, ARepeatIsARunAndReusedResultsAreSaidApart) {
  const json pass = {{"mode", {"pass"}}};
  RunSweep({{"suite", "fixture-flaky"}, {"parameters", pass}});
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"repeats", 5}, {"parameters", pass}});
  json sw = d_->GetJson("/api/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(sw["reused"], 1) << sw.dump();
  EXPECT_EQ(sw["by_verdict"]["passed"], 5) << sw.dump();
  EXPECT_NE(sw["reuse"].value("repeats", "").find("first run only"), std::string::npos) << sw.dump();
  json trials = d_->GetJson("/api/v1/trials?sweep=" + std::to_string(id));
  int started = 0;
  for (auto& t : trials["items"]) started += !t["started_at"].is_null();
  EXPECT_EQ(started, 4) << trials.dump();
  // Over the suite: one run before, four now; the copy is said, not counted.
  json m = d_->GetJson("/api/v1/matrix?suite=fixture-flaky&rows=mode");
  const json* cell = StatCell(m, json::array({"pass"}));
  ASSERT_TRUE(cell) << m.dump();
  EXPECT_EQ((*cell)["counts"], json({{"passed", 5}})) << cell->dump();
  EXPECT_EQ((*cell)["reused"], 1) << cell->dump();
  EXPECT_EQ((*cell)["pass_rate"]["runs"], 5) << cell->dump();
  EXPECT_EQ((*cell)["pass_rate"]["reused"], 1) << cell->dump();
  EXPECT_NEAR((*cell)["pass_rate"]["low"].get<double>(), 0.566, 1e-3);  // Wilson, 5 of 5 (not 6 of 6: 0.61)
  // Within the sweep: four runs and the one reused.
  json ms = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=mode");
  const json* in = StatCell(ms, json::array({"pass"}));
  ASSERT_TRUE(in) << ms.dump();
  EXPECT_EQ((*in)["pass_rate"]["runs"], 4) << in->dump();
  EXPECT_EQ((*in)["reused"], 1) << in->dump();
  // The CLI's matrix says so in the cell.
  Out mx = RunProgram(dir_, {GauntletBin(), "matrix", "--suite", "fixture-flaky", "--rows", "mode", "--server", d_->url()});
  EXPECT_NE(mx.out.find("(+1 reused)"), std::string::npos) << mx.out;
}

TEST_F(StatisticsTest, AConfirmedFlakeIsFlakyWithEveryAttemptKept) {
  const std::string runs = dir_.path() + "/confirm-runs";
  // Two configs of the flaky mode (value 1, 2), gated on mode: without confirmation, the first
  // run's crash would be a verdict; with it, the crash is run again, passes, and is a flake.
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"reuse", false}, {"confirm_failures", 2},
                               {"parameters", {{"mode", {"flaky"}}, {"dir", {runs}}, {"value", {"1", "2"}}}}});
  json sw = d_->GetJson("/api/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(sw["by_verdict"].value("passed", 0), 2) << sw.dump();
  EXPECT_EQ(sw["pruned"]["trials"], 0);
  json trials = d_->GetJson("/api/v1/trials?sweep=" + std::to_string(id));
  int64_t flaked = 0;
  for (auto& t : trials["items"])
    if (t["attempt"] == 2) flaked = t["id"];
  ASSERT_NE(flaked, 0) << trials.dump();
  // Both attempts are in the record: the crash of attempt 1 and the pass of attempt 2.
  json m = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=value");
  const json* cell = StatCell(m, json::array({"1"}));
  ASSERT_TRUE(cell) << m.dump();
  EXPECT_EQ((*cell)["state"], "flaky") << cell->dump();
  EXPECT_EQ((*cell)["counts"]["crashed"], 1);
  EXPECT_EQ((*cell)["counts"]["passed"], 1);
  json f = d_->GetJson("/api/v1/flaky?suite=fixture-flaky");
  ASSERT_EQ(f["items"].size(), 1u) << f.dump();
  EXPECT_EQ(f["items"][0]["config"]["value"], "1");
  EXPECT_EQ(f["items"][0]["pass_rate"]["runs"], 2);
}

TEST_F(StatisticsTest, AConfirmedFailureStandsAndPrunes) {
  // mode=fail crashes every time with a message: confirmed twice, then it settles the other value.
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"reuse", false}, {"confirm_failures", 1},
                               {"parameters", {{"mode", {"fail"}}, {"value", {"1", "2", "3"}}}}});
  json sw = d_->GetJson("/api/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(sw["by_verdict"].value("crashed", 0), 1) << sw.dump();
  EXPECT_EQ(sw["pruned"]["trials"], 2) << sw.dump();
  json f = d_->GetJson("/api/v1/flaky?suite=fixture-flaky");
  EXPECT_TRUE(f["items"].empty()) << f.dump();
  EXPECT_EQ(d_->Post("/api/v1/sweeps", json({{"suite", "fixture-flaky"}, {"confirm_failures", 11}}).dump()).status, 422);
}

// A confirmation under way survives a restart: the attempts it made are read back, so the
// confirming attempt after the restart is the last one and the failure stands (and prunes).
TEST(StatisticsRestart, AConfirmationGoesOnAfterARestart) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  json reg = d.PostJson("/api/v1/nodes/register", {{"name", "manual"}, {"inventory", json::object()}});
  const std::string node = reg["node"].dump();
  json s = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"reuse", false}, {"confirm_failures", 1},
                                         {"parameters", {{"mode", {"fail"}}, {"value", {"1", "2", "3"}}}}}, 201);
  const json crash = {{"verdict", "crashed"}, {"signature", "crashed:RuntimeError:fixture exploded"}, {"failing_stage", "run"}};
  json g = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}, {"free_gpus", json::array()}});
  ASSERT_TRUE(g.contains("lease")) << g.dump();
  json rep = json::parse(d.Post("/api/v1/leases/" + g["lease"].get<std::string>() + "/result", crash.dump()).body);
  EXPECT_TRUE(rep["confirming"].get<bool>()) << rep.dump();
  ASSERT_EQ(d.Stop(), 0);
  d.Start();
  json again = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}, {"free_gpus", json::array()}});
  ASSERT_TRUE(again.contains("lease")) << again.dump();
  EXPECT_EQ(again["trial"], g["trial"]);  // the confirmation first
  EXPECT_EQ(again["attempt"], 2);
  rep = json::parse(d.Post("/api/v1/leases/" + again["lease"].get<std::string>() + "/result", crash.dump()).body);
  EXPECT_FALSE(rep["confirming"].get<bool>()) << rep.dump();
  EXPECT_EQ(rep["skipped"], 2) << rep.dump();
  json sw = d.WaitSweep(s["id"]);
  EXPECT_EQ(sw["by_verdict"], json({{"crashed", 1}, {"skipped", 2}})) << sw.dump();
}

}  // namespace
}  // namespace gauntlet
