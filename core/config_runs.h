// What a suite's runs say about each configuration on each hardware class: the facts that the
// recommendation (core/recommend.h) and the pre-flight check (core/preflight.h) are made of, and the
// rules that turn them into "passes with confidence", a metric with its noise, and an evidence level.
// Every function here is pure and thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/pass_rate.h"
#include "core/sweep.h"
#include "core/verdict.h"

namespace gauntlet {

// The runs of one config on one hardware class (of one suite version, maybe one fingerprint).
struct ConfigRuns {
  std::string config_key, hardware;
  Config config;
  int64_t runs = 0;     // real runs whose verdict counts (CountsAsRun); reused results are not runs
  int64_t passed = 0;   // of `runs`
  int64_t reused = 0;   // results copied from an earlier trial, counted apart
  std::map<Verdict, int64_t> verdicts;  // real runs by verdict
  Verdict latest = Verdict::kPassed;    // the latest real run's (valid when runs > 0)
  std::string latest_signature, fingerprint;  // the latest real run's signature and fingerprint
  int64_t latest_trial = 0;
  std::string metric_name, metric_unit;
  std::vector<double> metric;  // the chosen metric of each passed real run, oldest first
};

// Adds one finished trial to `c` (the caller keeps one ConfigRuns per config × hardware, feeding
// trials oldest first). A reused result only counts in `reused`; a verdict that says nothing about
// the config (skipped, cancelled, infra_error) changes nothing.
void AddRun(ConfigRuns& c, Verdict v, const std::string& signature, int64_t trial, const std::string& fingerprint,
            std::optional<double> metric, bool reused);

// The lowest pass-rate interval end (95% Wilson) that still counts as passing with confidence when
// not every run passed (docs/API.md "Recommend"): 0.8, so a config needs about 16 passes in a row
// after one failure before it counts again.
inline constexpr double kConfidentLow = 0.8;

// True when the config passed with confidence: at least one real run, never `fallback` or another
// failure as its latest, and every run passed or the Wilson interval's low end >= kConfidentLow.
bool PassesWithConfidence(const ConfigRuns& c);

// A metric over runs: mean and a 95% interval for it (Student's t over the runs; a single run has
// no spread: low == high == mean and `n` says 1).
struct MetricSummary {
  int64_t n = 0;
  double mean = 0, low = 0, high = 0;
};
std::optional<MetricSummary> Summarize(const std::vector<double>& values);  // nullopt when empty

// True when a smaller value of this metric is better: a latency or a time (unit ms, s, us, or a
// name naming latency, ttft, itl, tpot or ms_); throughput and everything else is higher-is-better.
bool LowerIsBetter(const std::string& name, const std::string& unit);

// How far the evidence for a config goes, weakest first (docs/API.md "Evidence levels"):
// it ran (started), it passed with confidence (correct), the backend asked for is proven to have run
// (dispatch verified; from the kernel recorder), and it has a metric over at least two runs
// (benchmarked). `declared` is a claim with no run behind it.
enum class Evidence { kNone, kDeclared, kStarted, kCorrect, kDispatchVerified, kBenchmarked };
const char* EvidenceName(Evidence e);  // "none", "declared", "started", ... (static storage)

// The strongest level `c` reaches; dispatch verification is not known from ConfigRuns, so a
// correct config with two or more measured runs is benchmarked, with one or none correct.
Evidence EvidenceOf(const ConfigRuns& c);

}  // namespace gauntlet
