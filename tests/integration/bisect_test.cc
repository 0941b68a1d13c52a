// Bisection through a real daemon and worker: a suite of 40 ordered versions whose first bad one is
// 17 (a Python one-liner that fails from 17 on, deterministic), searched by POST /api/v1/bisect and by
// `gauntlet bisect --wait`, in at most 6 trials; a second search reuses every verdict; a sweep with
// auto_bisect that sees version 1 pass and 40 fail starts the search by itself.
#include <gtest/gtest.h>

#include "net/http_client.h"
#include "tests/integration/cli_fixture.h"
#include "tests/integration/ordered_suite.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

class BisectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = std::make_unique<Daemon>(dir_.path(), SourceDir() + "/tests/fixtures/suites");
    net::Client c(d_->url(), "");
    auto put = c.Send("PUT", "/api/v1/suites/bisect40", OrderedSuite40("bisect40").dump());
    ASSERT_TRUE(put.ok());
    ASSERT_EQ(put->status, 201) << put->body;
    worker_ = StartWorker(dir_.path(), d_->url(), "w", json::object(), {"--max-trials", "1"});
  }
  json Search(int64_t id) {
    json done = d_->WaitSweep(id);
    EXPECT_TRUE(done["finished"].get<bool>()) << done.dump();
    EXPECT_EQ(done["kind"], "bisect");
    return done;
  }
  TempDir dir_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

TEST_F(BisectTest, FortyVersionsFirstBadSeventeenInAtMostSixTrialsThenReused) {
  json r = d_->PostJson("/api/v1/bisect", {{"suite", "bisect40"}, {"parameter", "version"}, {"good", "1"},
                                           {"bad", "40"}, {"config", {{"backend", "a"}}}}, 201);
  EXPECT_EQ(r["kind"], "bisect");
  json sw = Search(r["id"]);
  const json& s = sw["search"];
  EXPECT_EQ(s["state"], "found") << s.dump();
  EXPECT_EQ(s["first_bad"], "17");
  EXPECT_EQ(s["interval"]["good"], "16");
  EXPECT_LE(sw["trials"].get<int>(), 6) << sw.dump();
  EXPECT_EQ(sw["trials"], s["steps"].size());
  EXPECT_EQ(sw["reused"], 0);
  for (auto& st : s["steps"]) EXPECT_EQ(st["bad"].get<bool>(), std::stoi(st["value"].get<std::string>()) >= 17) << st.dump();
  // The same question again: every probe's verdict is known, so nothing runs.
  json again = Search(d_->PostJson("/api/v1/bisect", {{"suite", "bisect40"}, {"parameter", "version"}, {"good", "1"},
                                                      {"bad", "40"}, {"config", {{"backend", "a"}}}}, 201)["id"]);
  EXPECT_EQ(again["search"]["first_bad"], "17");
  EXPECT_EQ(again["reused"], again["trials"]) << again.dump();
}

TEST_F(BisectTest, TheCliWaitsForTheAnswerAndWrongEndpointsAreSaid) {
  Out o = RunProgram(dir_, {GauntletBin(), "bisect", "--server", d_->url(), "--suite", "bisect40", "--param", "version",
                            "--good", "3", "--bad", "33", "--set", "backend=b", "--wait", "--json"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  json last = json::parse(Lines(o.out).back(), nullptr, false);
  EXPECT_EQ(last["first_bad"], "17") << o.out;
  // "good" that is not good: every probe fails down to it, then it is run and fails too.
  json bad = d_->PostJson("/api/v1/bisect", {{"suite", "bisect40"}, {"parameter", "version"}, {"good", "20"},
                                             {"bad", "40"}, {"config", {{"backend", "b"}}}}, 201);
  EXPECT_EQ(Search(bad["id"])["search"]["state"], "good_not_good");
  Out nb = RunProgram(dir_, {GauntletBin(), "bisect", "--server", d_->url(), "--suite", "bisect40", "--param", "version",
                             "--good", "1", "--bad", "10", "--set", "backend=b", "--wait", "--json"});
  EXPECT_EQ(nb.code, 1) << nb.out << nb.err;
  EXPECT_NE(nb.out.find("bad_not_bad"), std::string::npos) << nb.out;
  // Requests that cannot be a bisection name the field at fault and store nothing.
  auto field = [&](const json& body) {
    auto res = d_->Post("/api/v1/bisect", body.dump());
    EXPECT_EQ(res.status, 422) << res.body;
    return json::parse(res.body, nullptr, false).value("field", "");
  };
  const json base = {{"suite", "bisect40"}, {"parameter", "version"}, {"good", "1"}, {"bad", "40"}, {"config", {{"backend", "a"}}}};
  json b = base;
  b["parameter"] = "backend";
  b["good"] = "a";
  b["bad"] = "b";
  b["config"] = json::object();
  EXPECT_EQ(field(b), "parameter");  // not ordered
  b = base;
  b["config"] = json::object();
  EXPECT_EQ(field(b), "config");  // backend has two values
  b = base;
  b["good"] = "41";
  EXPECT_EQ(field(b), "good");
  b = base;
  b["good"] = "30";
  b["bad"] = "2";
  EXPECT_EQ(field(b), "bad");
  b = base;
  b["teleport"] = true;
  EXPECT_EQ(field(b), "teleport");
  EXPECT_EQ(d_->Post("/api/v1/bisect", json({{"suite", "nope"}, {"parameter", "v"}, {"good", "1"}, {"bad", "2"}}).dump()).status, 404);
}

TEST_F(BisectTest, ARegressionBetweenTwoTestedVersionsStartsABisectionByItself) {
  json s = d_->PostJson("/api/v1/sweeps", {{"suite", "bisect40"}, {"auto_bisect", true},
                                           {"parameters", {{"version", {"1", "40"}}, {"backend", {"a"}}}}}, 201);
  d_->WaitSweep(s["id"]);
  int64_t search = 0;
  ASSERT_TRUE(WaitFor([&] {
    const json list = d_->GetJson("/api/v1/sweeps");
    for (auto& sw : list["items"])
      if (sw["kind"] == "bisect") search = sw["id"];
    return search != 0;
  })) << "no bisection was started";
  json done = Search(search);
  EXPECT_EQ(done["search"]["first_bad"], "17") << done.dump();
  EXPECT_EQ(done["request"]["parameters"]["backend"], json::array({"a"}));
  EXPECT_EQ(done["search"]["good"], "1");
  EXPECT_EQ(done["search"]["bad"], "40");
}

}  // namespace
}  // namespace gauntlet::test
