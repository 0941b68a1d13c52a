// Regressions along an ordered parameter across sweeps, through a real daemon and a worker that
// declares an H200: one sweep passes version 3, a later one fails version 30. GET /api/v1/regressions
// and `gauntlet regressions` report it with both values and trials and how to start a bisection; a
// sweep with auto_bisect whose finish makes it appear starts the bisection itself (on that hardware,
// reusing both known verdicts), regressions then link it, and a later sweep that sees the same gap
// starts no second one.
#include <gtest/gtest.h>

#include "tests/integration/cli_fixture.h"
#include "tests/integration/ordered_suite.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

const char* kH200 = "NVIDIA H200 · sm_90 · x1";

class AutoBisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = std::make_unique<Daemon>(dir_.path(), SourceDir() + "/tests/fixtures/suites");
    net::Client c(d_->url(), "");
    auto put = c.Send("PUT", "/api/v1/suites/regress40", OrderedSuite40("regress40", 1).dump());
    ASSERT_TRUE(put.ok());
    ASSERT_EQ(put->status, 201) << put->body;
    const json inv = {{"gpus", json::array({{{"index", 0}, {"name", "NVIDIA H200"}, {"uuid", "GPU-0"},
                                              {"compute_capability", "9.0"}, {"memory_mb", 143771}}})}};
    worker_ = StartWorker(dir_.path(), d_->url(), "w", inv);
  }
  // Submits one sweep of `versions` x `backend` and waits for it.
  json Sweep(std::vector<std::string> versions, const std::string& backend, bool auto_bisect, bool reuse = true) {
    json s = d_->PostJson("/api/v1/sweeps", {{"suite", "regress40"}, {"auto_bisect", auto_bisect}, {"reuse", reuse},
                                             {"parameters", {{"version", versions}, {"backend", {backend}}}}}, 201);
    json done = d_->WaitSweep(s["id"]);
    EXPECT_TRUE(done["finished"].get<bool>()) << done.dump();
    return done;
  }
  std::vector<json> Bisections() {
    std::vector<json> out;
    const json list = d_->GetJson("/api/v1/sweeps?limit=100");  // kept: items refers into it
    for (auto& sw : list["items"])
      if (sw["kind"] == "bisect") out.push_back(sw);
    return out;
  }
  json Ordered() { return d_->GetJson("/api/v1/regressions?suite=regress40&kind=ordered")["items"]; }
  TempDir dir_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

TEST_F(AutoBisectTest, AGapBetweenTwoSweepsIsReportedThenBisectedOnceByAutoBisect) {
  Sweep({"3"}, "a", false);
  Sweep({"3"}, "b", false);
  EXPECT_TRUE(Ordered().empty()) << Ordered().dump();

  // Backend b: a later sweep without auto_bisect fails version 30. Reported, nothing started.
  const json eb = Sweep({"30"}, "b", false);
  json items = Ordered();
  ASSERT_EQ(items.size(), 1u) << items.dump();
  const json& r = items[0];
  EXPECT_EQ(r["parameter"], "version");
  EXPECT_EQ(r["hardware"], kH200);
  EXPECT_EQ(r["config"], json({{"backend", "b"}}));
  EXPECT_EQ(r["before"]["value"], "3");
  EXPECT_EQ(r["before"]["verdict"], "passed");
  EXPECT_EQ(r["after"]["value"], "30");
  EXPECT_EQ(r["after"]["verdict"], "crashed");
  EXPECT_EQ(r["after"]["sweep"], eb["id"]);
  EXPECT_EQ(r["untested"], 26);
  EXPECT_TRUE(r["bisection"].is_null());
  EXPECT_TRUE(Bisections().empty());
  const json target = {{"gpu_name", "NVIDIA H200"}, {"arch", "sm_90"}, {"gpus", 1}};
  EXPECT_EQ(r["start"]["request"]["target"], target) << r.dump();
  EXPECT_EQ(r["start"]["command"],
            "gauntlet bisect --suite regress40 --param version --good 3 --bad 30 --set backend=b --target "
            "'{\"arch\":\"sm_90\",\"gpu_name\":\"NVIDIA H200\",\"gpus\":1}'");
  Out cli = RunProgram(dir_, {GauntletBin(), "regressions", "--server", d_->url(), "--suite", "regress40"});
  EXPECT_EQ(cli.code, 0) << cli.err;
  EXPECT_NE(cli.out.find("no bisection"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("3 passed (#"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find(r["start"]["command"].get<std::string>()), std::string::npos) << cli.out;
  Out csv = RunProgram(dir_, {GauntletBin(), "regressions", "--server", d_->url(), "--kind", "ordered", "--format", "csv"});
  EXPECT_EQ(Lines(csv.out).size(), 2u) << csv.out;
  EXPECT_EQ(d_->Get("/api/v1/regressions?kind=sideways").status, 422);
  // A misspelt suite is an error, not "no regressions": a CI gate with a typo fails.
  EXPECT_EQ(d_->Get("/api/v1/regressions?suite=regres40").status, 404);
  Out typo = RunProgram(dir_, {GauntletBin(), "regressions", "--server", d_->url(), "--suite", "regres40"});
  EXPECT_NE(typo.code, 0) << typo.out << typo.err;
  EXPECT_NE(typo.err.find("regres40"), std::string::npos) << typo.err;

  // Backend a: a later sweep with auto_bisect fails version 30, which an earlier sweep passed at 3.
  Sweep({"30"}, "a", true);
  std::vector<json> bs;
  ASSERT_TRUE(WaitFor([&] { return (bs = Bisections()).size() == 1; })) << "no bisection was started: " << d_->Log();
  json done = d_->WaitSweep(bs[0]["id"]);
  const json& s = done["search"];
  EXPECT_EQ(s["state"], "found") << s.dump();
  EXPECT_EQ(s["first_bad"], "17");
  EXPECT_EQ(s["good"], "3");
  EXPECT_EQ(s["bad"], "30");
  EXPECT_EQ(done["request"]["targets"], json::array({target}));
  EXPECT_LE(s["steps"].size(), 5u) << s.dump();
  for (auto& st : s["steps"]) EXPECT_TRUE(st["value"] != "3" && st["value"] != "30") << "a known verdict ran again: " << st;

  // Now the gap is pinned to 16..17, and the line says which bisection pinned it.
  items = Ordered();
  ASSERT_EQ(items.size(), 2u) << items.dump();
  for (auto& i : items) {
    if (i["config"]["backend"] == "b") continue;
    EXPECT_EQ(i["before"]["value"], "16") << i.dump();
    EXPECT_EQ(i["after"]["value"], "17");
    EXPECT_EQ(i["first_bad"], "17");
    EXPECT_EQ(i["bisection"]["id"], done["id"]);
    EXPECT_EQ(i["bisection"]["state"], "found");
    EXPECT_TRUE(i["start"].is_null());
  }
  // The same gap seen again by an auto_bisect sweep: covered, so nothing new. Then backend b's gap
  // with auto_bisect: its bisection starts (and, the clock thread taking finished sweeps in order,
  // only after the repeat was looked at).
  Sweep({"30"}, "a", true, false);
  Sweep({"30"}, "b", true, false);
  ASSERT_TRUE(WaitFor([&] { return (bs = Bisections()).size() >= 2; })) << "backend b's bisection did not start";
  json second = d_->WaitSweep(bs[0]["id"] == done["id"] ? bs[1]["id"] : bs[0]["id"]);
  EXPECT_EQ(second["request"]["parameters"]["backend"], json::array({"b"}));
  EXPECT_EQ(second["search"]["first_bad"], "17");
  EXPECT_EQ(Bisections().size(), 2u);
  for (auto& i : Ordered()) EXPECT_FALSE(i["bisection"].is_null()) << i.dump();
}

}  // namespace
}  // namespace gauntlet::test
