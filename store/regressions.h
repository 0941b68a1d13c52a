// Regressions over the stored results (GET /api/v1/regressions, `gauntlet regressions`): configs
// whose latest verdict is worse than the one before on the same hardware class, or whose key metric
// fell, and those along ordered parameters (store/ordered_regressions.h).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/verdict.h"
#include "store/ordered_regressions.h"
#include "store/results_index.h"
#include "store/store.h"

namespace gauntlet::store {

// What got worse: the verdict, the key metric (both passed), or a value along an ordered parameter.
enum class RegressionKind : uint8_t { kVerdict, kMetric, kOrdered };
// "verdict", "metric", "ordered": the JSON and query spelling of `k`; static storage.
std::string_view Name(RegressionKind k);
// The kind spelled `name`, or nullopt.
std::optional<RegressionKind> ParseRegressionKind(std::string_view name);

// One cell (suite version, config, hardware class) whose latest verdict or key metric is worse than
// the one before it.
struct CellRegression {
  std::string suite;
  int64_t suite_version = 0;  // both sides are of it: a cell is per version
  std::string config_key;
  nlohmann::json config;  // parameter -> value
  std::string hardware;
  RegressionKind kind = RegressionKind::kVerdict;  // kVerdict or kMetric
  Verdict before_verdict = Verdict::kPassed, after_verdict = Verdict::kPassed;
  std::string before_signature, after_signature;
  int64_t before_trial = 0, after_trial = 0;
  std::optional<double> before_metric;  // the key metric's value before, if stored
  std::optional<Metric> after_metric;   // the latest result's key metric, if it has one
  int64_t at = 0;                       // the latest result, ms
  // A flake (its verdict got worse but its runs passed and failed in turn; store/outcome_history.h):
  // its pass rate (core/pass_rate.h PassRateJson); unset for a regression.
  std::optional<nlohmann::json> pass_rate;
};

struct RegressionList {
  std::vector<CellRegression> cells;         // kVerdict and kMetric regressions
  std::vector<CellRegression> flaky;         // verdicts that got worse while the runs passed and failed in turn
  std::vector<OrderedRegression> ordered;    // along ordered parameters, newest first
  double threshold = 0;
};

// The regressions of `suite` (every suite when unset): a verdict worse than the one before on the
// same hardware, or a key metric that fell by more than `threshold` (0.1 = 10%), then those along
// ordered parameters. A verdict that got worse but did not stay worse (the config's latest runs passed
// and failed in turn, whatever the fingerprint: docs/SCHEDULING.md "Broke or flaky") is flaky, not a
// regression, and is listed in `flaky` only. `budget` (may be null: unbounded) bounds
// the cells read and the time, as the matrix's. Reads only; thread-safe. Internal on a store error.
Result<RegressionList> Regressions(Store& store, const std::optional<std::string>& suite, double threshold,
                                   QueryBudget* budget = nullptr);

// `r` as GET /api/v1/regressions answers it: {"items": [...cells as {"suite", "suite_version",
// "config_key", "config", "hardware", "kind", "before": {"verdict", "signature", "trial", "metric":
// number|null}, "after": {"verdict", "signature", "trial", "metric": {"name", "value", "unit"}|null},
// "at"}, then the ordered ones (OrderedRegressionJson)], "flaky": [cells with "flaky": true and
// "pass_rate"], "threshold"}; with `only`, "items" holds that kind alone. Pure.
nlohmann::json RegressionsJson(const RegressionList& r, std::optional<RegressionKind> only = std::nullopt);

}  // namespace gauntlet::store
