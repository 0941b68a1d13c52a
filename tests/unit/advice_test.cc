// Recommend and check as pure functions (core/config_runs.h, core/recommend.h, core/preflight.h,
// core/launch_line.h): which runs count, when a config passes with confidence, how noise decides a
// ranking, which neighbour a failing config is pointed to, and the flags a config means.
#include <gtest/gtest.h>

#include "core/advice_text.h"
#include "core/drift.h"
#include "core/launch_line.h"
#include "core/preflight.h"
#include "core/recommend.h"

namespace gauntlet {
namespace {
using nlohmann::json;

ConfigRuns Runs(Config cfg, std::vector<Verdict> verdicts, std::vector<double> metrics, std::string hw = "H200") {
  ConfigRuns c;
  c.config = std::move(cfg);
  c.config_key = ConfigKey(c.config);
  c.hardware = std::move(hw);
  c.metric_name = "tok_s";
  c.metric_unit = "tok/s";
  size_t m = 0;
  int64_t trial = 0;
  for (Verdict v : verdicts) {
    std::optional<double> x;
    if (v == Verdict::kPassed && m < metrics.size()) x = metrics[m++];
    AddRun(c, v, v == Verdict::kPassed ? "" : "crashed:x", ++trial, "{}", x, false);
  }
  return c;
}

TEST(ConfigRuns, ReusedResultsAndUnjudgedVerdictsAreNotRuns) {
  ConfigRuns c;
  AddRun(c, Verdict::kPassed, "", 1, "{}", 5.0, true);
  AddRun(c, Verdict::kInfraError, "infra", 2, "{}", std::nullopt, false);
  AddRun(c, Verdict::kSkipped, "", 3, "{}", std::nullopt, false);
  EXPECT_EQ(c.runs, 0);
  EXPECT_EQ(c.reused, 1);
  EXPECT_FALSE(PassesWithConfidence(c));
  EXPECT_EQ(EvidenceOf(c), Evidence::kNone);
  AddRun(c, Verdict::kPassed, "", 4, "{}", 7.0, false);
  EXPECT_EQ(c.runs, 1);
  EXPECT_EQ(c.metric, std::vector<double>{7.0});
  EXPECT_EQ(EvidenceOf(c), Evidence::kCorrect);
}

TEST(ConfigRuns, ConfidenceNeedsTheLatestToPassAndTheIntervalAboveTheFloor) {
  std::vector<Verdict> many(30, Verdict::kPassed);
  many[3] = Verdict::kCrashed;  // one failure in 30: Wilson low ~0.83
  EXPECT_TRUE(PassesWithConfidence(Runs({{"b", "x"}}, many, {})));
  std::vector<Verdict> few = {Verdict::kPassed, Verdict::kCrashed, Verdict::kPassed, Verdict::kPassed};
  EXPECT_FALSE(PassesWithConfidence(Runs({{"b", "x"}}, few, {})));  // 3 of 4: low ~0.30
  many.back() = Verdict::kWrongOutput;
  EXPECT_FALSE(PassesWithConfidence(Runs({{"b", "x"}}, many, {})));  // it fails now
}

TEST(ConfigRuns, MetricIntervalIsStudentsT) {
  auto m = Summarize({99, 100, 101});
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->mean, 100);
  EXPECT_NEAR(m->high - m->mean, 4.303 * 1.0 / std::sqrt(3.0), 1e-9);  // s = 1, df = 2
  auto one = Summarize({5});
  EXPECT_EQ(one->n, 1);
  EXPECT_EQ(one->low, one->high);
  EXPECT_FALSE(Summarize({}));
  EXPECT_TRUE(LowerIsBetter("ttft_p50", ""));
  EXPECT_TRUE(LowerIsBetter("step", "ms"));
  EXPECT_FALSE(LowerIsBetter("output_tok_s@c8", "tok/s"));
}

TEST(Recommend, NoiseDecidesWhetherTheBestIsBetter) {
  const std::vector<Verdict> p3(3, Verdict::kPassed);
  std::vector<ConfigRuns> cells = {
      Runs({{"backend", "cutlass"}, {"shape", "large"}}, p3, {198, 200, 202}),
      Runs({{"backend", "triton"}, {"shape", "large"}}, p3, {119, 120, 121}),
      Runs({{"backend", "cutlass"}, {"shape", "small"}}, p3, {99, 100, 101}),
      Runs({{"backend", "triton"}, {"shape", "small"}}, p3, {98.5, 99.5, 100.5}),
      Runs({{"backend", "broken"}, {"shape", "small"}}, {Verdict::kCrashed}, {}),
  };
  auto recs = Recommend(cells, {"shape"});
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].region.at("shape"), "large");
  EXPECT_EQ(recs[0].decision, Decision::kBeyondNoise);
  EXPECT_EQ(recs[0].best->runs->config.at("backend"), "cutlass");
  EXPECT_EQ(recs[0].best->evidence, Evidence::kBenchmarked);
  EXPECT_EQ(recs[1].decision, Decision::kWithinNoise);
  EXPECT_EQ(recs[1].best->runs->config.at("backend"), "cutlass");
  EXPECT_EQ(recs[1].configs, 3);
  EXPECT_EQ(recs[1].candidates, 2);
  // One measured run each: the gap may be noise, and the answer says so.
  std::vector<ConfigRuns> once = {Runs({{"b", "x"}}, {Verdict::kPassed}, {10}), Runs({{"b", "y"}}, {Verdict::kPassed}, {5})};
  EXPECT_EQ(Recommend(once, {})[0].decision, Decision::kInsufficientData);
  EXPECT_EQ(Recommend(once, {})[0].best->runs->config.at("b"), "x");
  std::vector<ConfigRuns> none = {Runs({{"b", "x"}}, {Verdict::kUnsupported}, {})};
  EXPECT_EQ(Recommend(none, {})[0].decision, Decision::kNoPassingConfig);
  EXPECT_EQ(Recommend({once[0]}, {})[0].decision, Decision::kOnlyCandidate);
}

TEST(Recommend, LowerIsBetterForLatencies) {
  const std::vector<Verdict> p3(3, Verdict::kPassed);
  auto a = Runs({{"b", "fast"}}, p3, {10, 10.1, 9.9});
  auto b = Runs({{"b", "slow"}}, p3, {20, 20.1, 19.9});
  a.metric_name = b.metric_name = "ttft_ms";
  a.metric_unit = b.metric_unit = "ms";
  auto r = Recommend({b, a}, {});
  EXPECT_EQ(r[0].best->runs->config.at("b"), "fast");
  EXPECT_TRUE(r[0].lower_is_better);
  EXPECT_EQ(r[0].decision, Decision::kBeyondNoise);
}

TEST(Preflight, KnownVerdictAndTheNearestPassingConfigs) {
  const std::vector<Verdict> p2(2, Verdict::kPassed);
  std::vector<ConfigRuns> cells = {
      Runs({{"backend", "broken"}, {"shape", "small"}}, {Verdict::kCrashed}, {}),
      Runs({{"backend", "triton"}, {"shape", "small"}}, p2, {90, 91}),
      Runs({{"backend", "cutlass"}, {"shape", "small"}}, p2, {100, 101}),
      Runs({{"backend", "cutlass"}, {"shape", "large"}}, p2, {300, 301}),
  };
  auto p = Check(cells, {{"backend", "broken"}, {"shape", "small"}});
  EXPECT_EQ(p.known, Known::kFails);
  EXPECT_EQ(KnownExitCode(p.known), 1);
  ASSERT_EQ(p.nearest.size(), 3u);
  // One change before two, and among one change the faster first.
  EXPECT_EQ(p.nearest[0].runs->config.at("backend"), "cutlass");
  EXPECT_EQ(p.nearest[0].changed, std::vector<std::string>{"backend"});
  EXPECT_EQ(p.nearest[1].runs->config.at("backend"), "triton");
  EXPECT_EQ(p.nearest[2].changed, (std::vector<std::string>{"backend", "shape"}));
  EXPECT_EQ(Check(cells, {{"backend", "cutlass"}, {"shape", "large"}}).known, Known::kPasses);
  auto unknown = Check(cells, {{"backend", "triton"}, {"shape", "large"}});
  EXPECT_EQ(unknown.known, Known::kUnknown);
  EXPECT_EQ(KnownExitCode(unknown.known), 3);
  EXPECT_EQ(unknown.match, nullptr);
}

TEST(LaunchLine, FlagsEnvAndAShellLineFromTheSuitesArgv) {
  auto s = ParseSuite(json::parse(R"({"name": "moe", "parameters": {"backend": ["cutlass", "triton"], "shape": ["s", "l"],
      "note": {"pattern": "^.*$", "default": "it's"}},
    "stages": [{"name": "serve", "kind": "command",
      "argv": ["python3", "-m", "sglang.launch_server", "--port", "{port}", "--moe-runner-backend", "{backend}",
               "--shape={shape}", "{note}"],
      "env": {"FP4_BACKEND": "{backend}", "PLAIN": "1"}}]})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto line = LaunchFor(*s, {{"backend", "cutlass"}, {"shape", "l"}});
  EXPECT_EQ(line.flags, (std::vector<std::string>{"--moe-runner-backend", "cutlass", "--shape=l", "it's"}));
  EXPECT_EQ(line.env, std::vector<std::string>{"FP4_BACKEND=cutlass"});
  EXPECT_EQ(line.shell,
            "FP4_BACKEND=cutlass python3 -m sglang.launch_server --port {port} --moe-runner-backend cutlass --shape=l 'it'\\''s'");
}

// The text forms the API's markdown and the CLI's tables share (core/advice_text.h).
TEST(AdviceText, FlagsRegionAndMetricInBothSpreads) {
  const json c = {{"config_key", "backend=triton"}, {"env", {"A=1"}}, {"flags", {"--backend", "triton"}},
                  {"metric", {{"mean", 2.0}, {"low", 1.5}, {"high", 2.5}, {"n", 4}, {"unit", "ms"}}}};
  EXPECT_EQ(AdviceFlags(c), "A=1 --backend triton");
  EXPECT_EQ(AdviceFlags({{"config_key", "backend=triton"}, {"env", json::array()}, {"flags", json::array()}}), "backend=triton");
  EXPECT_EQ(AdviceRegion({{"batch", "8"}, {"shape", "l"}}), "batch=8 shape=l");
  EXPECT_EQ(AdviceRegion(json::object()), "");
  EXPECT_EQ(AdviceMetric(c, MetricSpread::kInterval), "2 ms (95%: 1.5–2.5, 4 runs)");
  EXPECT_EQ(AdviceMetric(c, MetricSpread::kHalfWidth), "2 ms ±0.5 (4 runs)");
  json one = c;
  one["metric"]["n"] = 1;
  EXPECT_EQ(AdviceMetric(one, MetricSpread::kInterval), "2 ms (1 run)");
  EXPECT_EQ(AdviceMetric(one, MetricSpread::kHalfWidth), "2 ms (1 run)");
  EXPECT_EQ(AdviceMetric({{"metric", nullptr}}, MetricSpread::kInterval), "");
}

}  // namespace
}  // namespace gauntlet

namespace gauntlet {
namespace {

Suite MoeSuite() {
  auto s = ParseSuite(nlohmann::json::parse(R"({"name": "moe", "parameters": {"backend": ["cutlass", "triton", "trtllm"],
      "shape": ["s", "l"]}, "stages": [{"name": "run", "kind": "command", "argv": ["true"]}]})"));
  EXPECT_TRUE(s.ok());
  return *s;
}

TEST(Declared, RulesAreCheckedAgainstTheSuiteAndFirstMatchWins) {
  const Suite s = MoeSuite();
  auto bad = ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "u"}, "rules": [{"when": {"bakend": "x"}, "supported": true}]})"), s);
  EXPECT_EQ(bad.status().field(), "rules[0].when.bakend");
  auto value = ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "u"}, "rules": [{"when": {"backend": ["cutlass", "nope"]}, "supported": true}]})"), s);
  EXPECT_EQ(value.status().field(), "rules[0].when.backend");
  EXPECT_EQ(ParseDeclared(nlohmann::json::parse(R"({"rules": []})"), s).status().field(), "source");
  EXPECT_EQ(ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "u"}, "rules": [{"hardware": "sm_90||x", "supported": true}]})"), s)
                .status().field(), "rules[0].hardware");
  EXPECT_EQ(ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "u"}, "rules": [{"supported": "yes"}]})"), s).status().field(),
            "rules[0].supported");
  auto d = ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "https://docs", "version": "0.2"}, "rules": [
      {"when": {"backend": "trtllm"}, "hardware": "sm_100|SM_103", "supported": true},
      {"when": {"backend": "trtllm"}, "supported": false, "note": "Blackwell only"},
      {"hardware": "*", "supported": true}]})"), s);
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string b200 = "NVIDIA B200 ×1 (sm_100)", h200 = "NVIDIA H200 ×1 (sm_90)";
  EXPECT_TRUE(MatchDeclared(*d, {{"backend", "trtllm"}, {"shape", "s"}}, b200)->supported);
  EXPECT_FALSE(MatchDeclared(*d, {{"backend", "trtllm"}, {"shape", "s"}}, h200)->supported);
  EXPECT_TRUE(MatchDeclared(*d, {{"backend", "cutlass"}, {"shape", "s"}}, h200)->supported);
  EXPECT_TRUE(HardwareMatches("h200", h200));
  EXPECT_FALSE(HardwareMatches("sm_100", h200));
  // The canonical form reads back to the same rules.
  auto again = ParseDeclared(DeclaredJson(*d), s);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(DeclaredJson(*again), DeclaredJson(*d));
}

TEST(Drift, DisagreementsComeFirstAndUndeclaredIsItsOwnKind) {
  const Suite s = MoeSuite();
  auto d = ParseDeclared(nlohmann::json::parse(R"({"source": {"url": "u"}, "rules": [
      {"when": {"backend": "trtllm"}, "supported": false},
      {"when": {"backend": "cutlass"}, "supported": true}]})"), s);
  ASSERT_TRUE(d.ok());
  std::vector<ConfigRuns> cells = {
      Runs({{"backend", "cutlass"}, {"shape", "s"}}, {Verdict::kPassed}, {1}),
      Runs({{"backend", "cutlass"}, {"shape", "l"}}, {Verdict::kCrashed}, {}),
      Runs({{"backend", "trtllm"}, {"shape", "s"}}, {Verdict::kPassed, Verdict::kPassed}, {5, 6}),
      Runs({{"backend", "trtllm"}, {"shape", "l"}}, {Verdict::kUnsupported}, {}),
      Runs({{"backend", "triton"}, {"shape", "s"}}, {Verdict::kPassed}, {2}),
  };
  auto items = Drift(cells, &*d);
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[0].kind, DriftKind::kSupportedButFailing);
  EXPECT_EQ(items[0].runs->config.at("shape"), "l");
  EXPECT_EQ(items[1].kind, DriftKind::kUnsupportedButPassing);
  EXPECT_EQ(items[2].kind, DriftKind::kUndeclared);
  EXPECT_EQ(items[2].rule, nullptr);
  EXPECT_EQ(items[3].kind, DriftKind::kAgrees);
  EXPECT_EQ(items[4].kind, DriftKind::kAgrees);
}

}  // namespace
}  // namespace gauntlet
