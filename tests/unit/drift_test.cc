// The judgement the drift answer, the check and the matrix's drift and evidence layers share
// (core/drift.h, core/config_runs.h's EvidenceOf): the evidence ladder with the dispatch check, a
// fallback never passing, the framework's own answer as a declaration beside a table's, and a
// probe stage's answer as read from its output (core/probe.h).
#include <gtest/gtest.h>

#include "core/drift.h"
#include "core/probe.h"

namespace gauntlet {
namespace {
using nlohmann::json;

ConfigRuns Ran(Config cfg, std::vector<Verdict> verdicts, std::vector<double> metrics,
               RunDispatch dispatch = RunDispatch::kNone) {
  ConfigRuns c;
  c.config = std::move(cfg);
  c.config_key = ConfigKey(c.config);
  c.hardware = "NVIDIA H200 ×1 (sm_90)";
  c.metric_name = "tflops";
  c.metric_unit = "TFLOP/s";
  size_t m = 0;
  int64_t trial = 0;
  for (Verdict v : verdicts) {
    std::optional<double> x;
    if (v == Verdict::kPassed && m < metrics.size()) x = metrics[m++];
    AddRun(c, v, v == Verdict::kPassed ? "" : std::string(Name(v)) + ":x", ++trial, "{}", x, false, dispatch);
  }
  return c;
}

FrameworkClaim Says(bool supported, std::string reason = "") {
  FrameworkClaim f;
  f.supported = supported;
  f.reason = std::move(reason);
  f.framework = "torch";
  f.version = "2.5.1";
  f.trial = 7;
  return f;
}

TEST(Evidence, DispatchVerifiedNeedsAVerifiedLatestRunAndBenchmarkedAMetricBeyondIt) {
  const Config cfg = {{"backend", "FLASH_ATTENTION"}};
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed}, {}, RunDispatch::kVerified)), Evidence::kDispatchVerified);
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed}, {1}, RunDispatch::kVerified)), Evidence::kDispatchVerified);
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed, Verdict::kPassed}, {1, 2}, RunDispatch::kVerified)), Evidence::kBenchmarked);
  // A record that could not decide proves no backend, so its metrics benchmark nothing in particular.
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed, Verdict::kPassed}, {1, 2}, RunDispatch::kUnverified)), Evidence::kCorrect);
  // No expectation applies (a suite without `dispatch`): nothing to verify, metrics still benchmark.
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed}, {1})), Evidence::kCorrect);
  EXPECT_EQ(EvidenceOf(Ran(cfg, {Verdict::kPassed, Verdict::kPassed}, {1, 2})), Evidence::kBenchmarked);
  // The latest run decides: a verified run before an unverified one does not carry over.
  ConfigRuns c = Ran(cfg, {Verdict::kPassed}, {}, RunDispatch::kVerified);
  AddRun(c, Verdict::kPassed, "", 9, "{}", std::nullopt, false, RunDispatch::kUnverified);
  EXPECT_EQ(EvidenceOf(c), Evidence::kCorrect);
  EXPECT_STREQ(EvidenceName(Evidence::kDispatchVerified), "dispatch_verified");
}

TEST(Evidence, AFallbackNeverCountsAsPassing) {
  const Config cfg = {{"backend", "FLASH_ATTENTION"}};
  ConfigRuns c = Ran(cfg, {Verdict::kPassed, Verdict::kPassed, Verdict::kFallback}, {1, 2});
  EXPECT_EQ(c.passed, 2);
  EXPECT_EQ(c.runs, 3);
  EXPECT_FALSE(PassesWithConfidence(c));
  EXPECT_EQ(EvidenceOf(c), Evidence::kStarted);
  // Declared supported, and what ran was another backend: the runs contradict the claim.
  c.claim = Says(true);
  const DriftItem it = JudgeDrift(c, nullptr);
  EXPECT_EQ(it.kind, DriftKind::kSupportedButFailing);
  EXPECT_EQ(it.framework, DriftKind::kSupportedButFailing);
}

TEST(Evidence, AClaimWithoutARunIsDeclared) {
  ConfigRuns c;
  c.config = {{"backend", "MATH"}};
  EXPECT_EQ(EvidenceOf(c), Evidence::kNone);
  EXPECT_EQ(EvidenceOf(c, true), Evidence::kDeclared);
  c.claim = Says(false);
  EXPECT_EQ(EvidenceOf(c), Evidence::kDeclared);
}

TEST(Drift, TheFrameworksAnswerIsADeclarationBesideTheTable) {
  auto s = ParseSuite(json::parse(R"({"name": "sdpa", "parameters": {"backend": ["FLASH_ATTENTION", "MATH"],
      "head_dim": ["64", "512"]}, "stages": [{"name": "run", "kind": "command", "argv": ["true"]}]})"));
  ASSERT_TRUE(s.ok());
  auto d = ParseDeclared(json::parse(R"({"source": {"url": "https://docs"}, "rules": [
      {"when": {"backend": "FLASH_ATTENTION"}, "supported": true}]})"), *s);
  ASSERT_TRUE(d.ok());
  // The table says flash works; PyTorch itself says not at head_dim 512, and the run refused.
  ConfigRuns big = Ran({{"backend", "FLASH_ATTENTION"}, {"head_dim", "512"}}, {Verdict::kUnsupported}, {});
  big.claim = Says(false, "Flash attention requires head_dim <= 256");
  // PyTorch says no, and it ran anyway.
  ConfigRuns small = Ran({{"backend", "FLASH_ATTENTION"}, {"head_dim", "64"}}, {Verdict::kPassed}, {9}, RunDispatch::kVerified);
  small.claim = Says(false);
  // Only the framework said anything about MATH, and it agrees.
  ConfigRuns math = Ran({{"backend", "MATH"}, {"head_dim", "64"}}, {Verdict::kPassed}, {1});
  math.claim = Says(true);
  ConfigRuns silent = Ran({{"backend", "MATH"}, {"head_dim", "512"}}, {Verdict::kPassed}, {1});
  const std::vector<ConfigRuns> cells = {big, small, math, silent};
  auto items = Drift(cells, &*d);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].kind, DriftKind::kSupportedButFailing);  // the table's claim fails
  EXPECT_EQ(items[0].table, DriftKind::kSupportedButFailing);
  EXPECT_EQ(items[0].framework, DriftKind::kAgrees);
  EXPECT_EQ(items[1].kind, DriftKind::kUnsupportedButPassing);  // the framework's claim fails
  EXPECT_EQ(items[1].table, DriftKind::kAgrees);
  EXPECT_EQ(items[1].evidence, Evidence::kDispatchVerified);
  EXPECT_EQ(items[2].kind, DriftKind::kUndeclared);
  EXPECT_EQ(items[2].runs->config.at("head_dim"), "512");
  EXPECT_EQ(items[3].kind, DriftKind::kAgrees);
  EXPECT_EQ(items[3].rule, nullptr);
  // Without a table, the framework's answers alone.
  auto alone = Drift(cells, nullptr);
  EXPECT_EQ(alone[0].kind, DriftKind::kUnsupportedButPassing);
  EXPECT_EQ(alone[0].runs->config.at("head_dim"), "64");
}

TEST(ProbeAnswer, OnlyAnAnswerIsOne) {
  auto ok = ParseProbeAnswer(R"({"supported": false, "reason": "Flash attention requires head_dim <= 256"})");
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(ok->supported);
  EXPECT_EQ(ok->reason, "Flash attention requires head_dim <= 256");
  EXPECT_TRUE(ParseProbeAnswer(R"({"supported": true})")->supported);
  for (const char* bad : {"", "True", "[true]", R"({"supported": "yes"})", R"({"reason": "x"})",
                          R"({"supported": true, "reason": 3})", "{\"supported\": true, \"reason\": \"\xff\"}"}) {
    auto r = ParseProbeAnswer(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_FALSE(r.status().message().empty());
  }
  // A reason past the bound is cut at a character boundary, never inside one.
  std::string long_reason;
  while (long_reason.size() < kMaxProbeReason + 10) long_reason += "é";
  auto cut = ParseProbeAnswer(json{{"supported", true}, {"reason", long_reason}}.dump());
  ASSERT_TRUE(cut.ok());
  EXPECT_LE(cut->reason.size(), kMaxProbeReason);
  EXPECT_EQ(cut->reason.size() % 2, 0u);
}

TEST(ProbeStage, TheSuiteFormatTakesAProbeAndRefusesWhatItCannotUse) {
  auto ok = ParseSuite(json::parse(R"({"name": "p", "parameters": {"b": ["x"]}, "stages": [
      {"name": "ask", "kind": "probe", "framework": "torch", "argv": ["python3", "ask.py", "{b}"]},
      {"name": "run", "kind": "command", "argv": ["true"]}]})"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  auto gated = ParseSuite(json::parse(R"({"name": "p", "parameters": {"b": ["x"]}, "stages": [
      {"name": "ask", "kind": "probe", "gate_on": ["b"], "argv": ["true"]}]})"));
  EXPECT_EQ(gated.status().field(), "stages[0].gate_on");
  auto fw = ParseSuite(json::parse(R"({"name": "p", "parameters": {"b": ["x"]}, "stages": [
      {"name": "ask", "kind": "probe", "framework": 3, "argv": ["true"]}]})"));
  EXPECT_EQ(fw.status().field(), "stages[0].framework");
}

}  // namespace
}  // namespace gauntlet
