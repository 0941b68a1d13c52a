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

// What a probe stage (SUITE_FORMAT.md "probe stages") heard the framework itself answer about a
// config: its own declared support, beside any published table (core/declared.h).
struct FrameworkClaim {
  bool supported = false;
  std::string reason;     // the framework's own words (PyTorch's debug warnings), bounded
  std::string framework;  // the stage's `framework` ("torch"); may be empty
  std::string version;    // that name's value in the trial's fingerprint; empty when it has none
  int64_t trial = 0;      // the trial that asked
};

// How a run's dispatch check (core/dispatch.h) ended: no expectation applied, the expected kernels
// were recorded, or the record could not decide (a fallback is a verdict of its own).
enum class RunDispatch { kNone, kVerified, kUnverified };

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
  RunDispatch latest_dispatch = RunDispatch::kNone;  // the latest real run's dispatch check
  std::optional<FrameworkClaim> claim;               // the latest framework answer (AddClaim)
};

// Adds one finished trial to `c` (the caller keeps one ConfigRuns per config × hardware, feeding
// trials oldest first). A reused result only counts in `reused`; a verdict that says nothing about
// the config (skipped, cancelled, infra_error) changes nothing.
// `dispatch`: the run's dispatch check (results.stages' "dispatch" entry).
void AddRun(ConfigRuns& c, Verdict v, const std::string& signature, int64_t trial, const std::string& fingerprint,
            std::optional<double> metric, bool reused, RunDispatch dispatch = RunDispatch::kNone);
// Takes `claim` as the config's framework answer (fed oldest first, so the latest answer wins).
void AddClaim(ConfigRuns& c, FrameworkClaim claim);

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

// The strongest level `c` reaches, the one rule every answer uses (recommend, check, drift, the
// matrix's evidence layer). No real run: declared when a table rule (`declared_by_table`) or the
// framework (c.claim) says anything, else none. Runs that do not pass with confidence: started.
// Passing: dispatch_verified when the latest run's dispatch check verified the expected kernels;
// benchmarked when it also has a metric over two or more runs, or when no expectation applies to
// the config at all (nothing to verify); a run whose record could not decide stays correct, as does
// one with fewer than two measured runs.
Evidence EvidenceOf(const ConfigRuns& c, bool declared_by_table = false);

}  // namespace gauntlet
