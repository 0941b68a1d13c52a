#include "core/config_runs.h"

#include <algorithm>
#include <cmath>

namespace gauntlet {

void AddRun(ConfigRuns& c, Verdict v, const std::string& signature, int64_t trial, const std::string& fingerprint,
            std::optional<double> metric, bool reused, RunDispatch dispatch) {
  if (reused) {
    ++c.reused;
    return;
  }
  if (!CountsAsRun(v)) return;
  ++c.runs;
  ++c.verdicts[v];
  c.latest = v;
  c.latest_signature = signature;
  c.latest_trial = trial;
  c.fingerprint = fingerprint;
  c.latest_dispatch = dispatch;
  if (v == Verdict::kPassed) {
    ++c.passed;
    if (metric && std::isfinite(*metric)) c.metric.push_back(*metric);
  }
}

void AddClaim(ConfigRuns& c, FrameworkClaim claim) { c.claim = std::move(claim); }

bool PassesWithConfidence(const ConfigRuns& c) {
  if (c.runs == 0 || c.latest != Verdict::kPassed) return false;
  if (c.passed == c.runs) return true;
  return WilsonInterval(c.passed, c.runs).low >= kConfidentLow;
}

namespace {
// Two-sided 95% Student's t quantiles for 1..30 degrees of freedom; 1.96 beyond.
double TQuantile95(int64_t df) {
  static const double k[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  return df <= 30 ? k[df - 1] : 1.96;
}
}  // namespace

std::optional<MetricSummary> Summarize(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  MetricSummary m;
  m.n = static_cast<int64_t>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / m.n;
  m.low = m.high = m.mean;
  if (m.n < 2) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  const double half = TQuantile95(m.n - 1) * std::sqrt(ss / (m.n - 1)) / std::sqrt(static_cast<double>(m.n));
  m.low = m.mean - half;
  m.high = m.mean + half;
  return m;
}

bool LowerIsBetter(const std::string& name, const std::string& unit) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (unit == "ms" || unit == "s" || unit == "us" || unit == "ns") return true;
  for (const char* w : {"latency", "ttft", "itl", "tpot", "ms_", "_ms", "seconds"})
    if (n.find(w) != std::string::npos) return true;
  return n == "ms" || n == "s";
}

const char* EvidenceName(Evidence e) {
  switch (e) {
    case Evidence::kNone: return "none";
    case Evidence::kDeclared: return "declared";
    case Evidence::kStarted: return "started";
    case Evidence::kCorrect: return "correct";
    case Evidence::kDispatchVerified: return "dispatch_verified";
    case Evidence::kBenchmarked: return "benchmarked";
  }
  return "none";
}

Evidence EvidenceOf(const ConfigRuns& c, bool declared_by_table) {
  if (c.runs == 0) return declared_by_table || c.claim ? Evidence::kDeclared : Evidence::kNone;
  // A fallback is never a pass (its latest verdict is not passed), so it stops here.
  if (!PassesWithConfidence(c)) return Evidence::kStarted;
  // An expectation the record could not settle: the backend may not be the one asked for, and a
  // metric of an unknown backend is no benchmark of this config.
  if (c.latest_dispatch == RunDispatch::kUnverified) return Evidence::kCorrect;
  if (c.metric.size() >= 2) return Evidence::kBenchmarked;
  return c.latest_dispatch == RunDispatch::kVerified ? Evidence::kDispatchVerified : Evidence::kCorrect;
}

}  // namespace gauntlet
