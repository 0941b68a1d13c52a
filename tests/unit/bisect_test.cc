// The bisection's search alone (core/bisect.h): 40 ordered versions whose first bad one is 17 are
// settled in at most 6 probes, every step a midpoint of what is still unknown; an endpoint that is
// not what the user said is reported as such; a probe without a verdict ends the search undecided.
#include <gtest/gtest.h>

#include <cmath>

#include "core/bisect.h"
#include "core/suite.h"
#include "daemon/coordinator.h"

namespace gauntlet {
namespace {
using nlohmann::json;

ParamSpec Versions(int n) {
  ParamSpec p;
  p.name = "version";
  for (int i = 1; i <= n; ++i) p.values.push_back(std::to_string(i));
  return p;
}

// Runs the search against `first_bad` (1-based version number; values at or after it fail).
Bisection Search(const ParamSpec& p, const std::string& good, const std::string& bad, int first_bad, int* probes,
              const std::string& fail = "crashed") {
  auto b = StartBisection(p, true, good, bad);
  EXPECT_TRUE(b.ok()) << b.status().message();
  *probes = 0;
  int64_t trial = 100;
  while (auto next = NextProbe(*b)) {
    ++*probes;
    EXPECT_LT(*probes, 50) << "runaway search";
    if (*probes >= 50) break;
    Observe(*b, std::stoi(p.values[*next]) >= first_bad ? ParseVerdict(fail).value() : Verdict::kPassed, ++trial);
  }
  return *b;
}

TEST(BisectTest, FortyVersionsFirstBadSeventeenInAtMostSixTrials) {
  const ParamSpec p = Versions(40);
  int probes = 0;
  Bisection b = Search(p, "1", "40", 17, &probes);
  EXPECT_EQ(b.state, BisectState::kFound) << BisectionJson(b).dump();
  ASSERT_TRUE(b.first_bad);
  EXPECT_EQ(p.values[*b.first_bad], "17");
  EXPECT_LE(probes, 6);
  json j = BisectionJson(b);
  EXPECT_EQ(j["first_bad"], "17");
  EXPECT_EQ(j["interval"]["good"], "16");
  EXPECT_EQ(j["steps"].size(), static_cast<size_t>(probes));
  // Every first bad version is found, each in about log2(n) probes (endpoints only when needed).
  for (int k = 2; k <= 40; ++k) {
    Bisection any = Search(p, "1", "40", k, &probes);
    ASSERT_EQ(any.state, BisectState::kFound) << k;
    EXPECT_EQ(p.values[*any.first_bad], std::to_string(k));
    EXPECT_LE(probes, static_cast<int>(std::ceil(std::log2(39))) + 1) << k;
  }
}

TEST(BisectTest, EndpointsThatAreNotWhatTheUserSaidAreReported) {
  const ParamSpec p = Versions(40);
  int probes = 0;
  // Everything fails: the search walks down to `good`, runs it, and says it is not good.
  Bisection b = Search(p, "1", "40", 1, &probes, "unsupported");
  EXPECT_EQ(b.state, BisectState::kGoodNotGood) << BisectionJson(b).dump();
  EXPECT_NE(b.detail.find("good (1) is not good"), std::string::npos) << b.detail;
  // Nothing fails: `bad` is run and passes.
  b = Search(p, "1", "40", 99, &probes);
  EXPECT_EQ(b.state, BisectState::kBadNotBad);
  // A probe that says nothing about the config ends the search undecided.
  auto u = StartBisection(p, true, "1", "40");
  ASSERT_TRUE(u.ok());
  ASSERT_TRUE(NextProbe(*u));
  Observe(*u, Verdict::kInfraError, 7);
  EXPECT_EQ(u->state, BisectState::kUndecided);
  EXPECT_FALSE(NextProbe(*u));
}

TEST(BisectTest, RequestsNameTheFieldAtFaultAndTheStateRoundTrips) {
  ParamSpec p = Versions(5);
  EXPECT_EQ(StartBisection(p, true, "0", "5").status().field(), "good");
  EXPECT_EQ(StartBisection(p, true, "1", "9").status().field(), "bad");
  EXPECT_EQ(StartBisection(p, true, "4", "2").status().field(), "bad");
  EXPECT_EQ(StartBisection(p, false, "1", "5").status().field(), "parameter");
  auto b = StartBisection(p, true, "1", "5");
  ASSERT_TRUE(NextProbe(*b));
  Observe(*b, Verdict::kPassed, 3);
  ASSERT_TRUE(NextProbe(*b));
  b->pending_trial = 4;
  auto back = BisectionFromJson(BisectionJson(*b));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(BisectionJson(*back), BisectionJson(*b));
  EXPECT_FALSE(BisectionFromJson(json{{"parameter", "x"}}).ok());
  // A suite declares the order; an ordered parameter needs declared values.
  auto ok = ParseSuite(json::parse(R"({"name": "s", "parameters": {"wheel": {"values": ["0.4.0", "0.4.1"], "ordered": true}},
                                       "stages": [{"name": "a", "kind": "command", "argv": ["true"]}]})"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(IsOrdered(*ok, "wheel"));
  EXPECT_FALSE(IsOrdered(*ok, "nope"));
  auto bad = ParseSuite(json::parse(R"({"name": "s", "parameters": {"wheel": {"pattern": ".*", "default": "x", "ordered": true}},
                                        "stages": [{"name": "a", "kind": "command", "argv": ["true"]}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "parameters.wheel.values");
}

// An auto_bisect sweep starts what the regressions offer, for the gaps it judged a side of, and
// nothing a bisection already covers or that offers no start.
TEST(BisectTest, AutoBisectStartsOfferedGapsItsSweepTouchedOnly) {
  const std::string hw = "NVIDIA H200 · sm_90 · x1";
  auto item = [&](const std::string& good_key, const std::string& bad_key, bool covered, bool start) {
    store::OrderedRegression r;
    r.hardware = hw;
    r.before.config_key = good_key;
    r.after.config_key = bad_key;
    if (covered) r.bisection = store::CoveringBisection{7, {}};
    if (start) {
      store::BisectStart st;
      st.request.suite = "s";
      st.request.parameter = "v";
      st.request.good = "3";
      st.request.bad = "9";
      st.command = "gauntlet bisect ...";
      r.start = st;
    }
    return r;
  };
  std::vector<store::OrderedRegression> regs = {item("v=3", "v=9", false, true),   // the good side is earlier: ours by the bad
                                                item("v=3", "v=9", true, true),    // covered
                                                item("w=1", "w=5", false, true),   // not touched by this sweep
                                                item("v=3", "v=4", false, false)};  // adjacent: nothing to search
  SweepRequest req;
  req.priority = 5;
  req.confirm_failures = 2;
  auto out = daemon::AutoBisections(regs, {{"v=9", hw}, {"v=4", hw}}, req);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].good, "3");
  EXPECT_EQ(out[0].priority, json(5));
  EXPECT_EQ(out[0].confirm_failures, json(2));
  EXPECT_EQ(out[0].name, "auto bisect v 3..9");
  EXPECT_TRUE(daemon::AutoBisections(regs, {{"v=9", "cpu"}}, req).empty());  // same config, other hardware
  std::vector<store::OrderedRegression> many(40, item("v=3", "v=9", false, true));
  EXPECT_EQ(daemon::AutoBisections(many, {{"v=3", hw}}, req).size(), 16u);
}

}  // namespace
}  // namespace gauntlet
