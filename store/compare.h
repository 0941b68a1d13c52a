// What changed between two sets of results (GET /api/v1/compare, `gauntlet diff`, the webhooks'
// regression.found): per config × hardware class present in either side, fixed, broke, changed,
// same, new or gone, with both verdicts, signatures and the key metric's relative change.
#pragma once
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/verdict.h"
#include "store/results_index.h"
#include "store/store.h"

namespace gauntlet::store {

// One side of a comparison: a sweep, or a suite's results narrowed by version and/or fingerprint,
// or (regressions) the results that came before a sweep's.
struct CompareSide {
  std::optional<int64_t> sweep;            // its done trials; among repeats the most severe verdict
  std::string suite;                       // else: this suite's latest result of each config × hardware
  std::optional<int> suite_version;        //   of this version (unset: any)
  std::optional<std::string> fingerprint;  //   under this fingerprint (canonical JSON, as trials store it)
  // Set (with `suite` empty): for each config × hardware of that sweep, the latest judged result of
  // the same suite before the sweep's own trial, from any other sweep.
  std::optional<int64_t> before_sweep;
};

// How one config × hardware changed between the two sides, in the order answers list them.
enum class Change : uint8_t { kBroke, kFlaky, kFixed, kChanged, kNew, kGone, kSame };
inline constexpr int kChangeCount = 7;
// Why a change is a "broke" (kNone for any other change). kInTurn: its runs passed and failed in
// turn, or passed again after this failure (core/outcome_order.h), so it became flaky rather than broke.
enum class ChangeWhy : uint8_t { kNone, kVerdict, kMetric, kInTurn };
// "broke", "flaky", "fixed", "changed", "new", "gone", "same": the JSON/CSV spelling; static storage.
std::string_view Name(Change c);
// "", "verdict", "metric", "passed and failed in turn"; static storage.
std::string_view Name(ChangeWhy w);

// How one config × hardware changed from verdict/signature `a` to `b` (no verdict: absent on that
// side): new, gone, fixed (b passed, a did not), broke (a passed and b did not, or b's verdict is
// more severe, or both passed and the key metric fell by more than the threshold: `metric_fell`
// says so), changed (another failing verdict or signature), same. Pure.
Change CompareChange(std::optional<Verdict> a_verdict, const std::string& a_signature,
                     std::optional<Verdict> b_verdict, const std::string& b_signature, bool metric_fell);

// One side's result for one config × hardware.
struct CompareEnd {
  Verdict verdict = Verdict::kPassed;
  std::string signature;
  int64_t trial = 0, sweep = 0;
  std::optional<Metric> metric;  // the trial's key metric, if it has one
};

struct CompareItem {
  std::string config_key;
  nlohmann::json config;  // parameter -> value, as the trial stores it
  std::string hardware;
  Change change = Change::kSame;
  ChangeWhy why = ChangeWhy::kNone;
  std::optional<CompareEnd> a, b;      // absent on a side: new or gone
  std::optional<double> metric_change;  // (b - a) / |a| of the key metric, where both have one and a != 0
};

// The changes, first (broke, flaky, fixed, changed, new, gone, same), then by config key and hardware.
struct Comparison {
  CompareSide a, b;
  double threshold = 0;
  std::string key_metric;  // "" when no result of either side has one
  std::array<int64_t, kChangeCount> counts{};  // by Change
  int64_t pending = 0;                         // trials not done in a side's sweeps
  std::vector<CompareItem> items;
};

// Compares `a` with `b`: per config × hardware class present in either. Change flaky (became flaky)
// is a broke by verdict whose config also passed under b's own fingerprint (same suite version and
// hardware class): not broken, flaky. A sweep side holds its done trials, among repeats the most
// severe verdict. Errors: NotFound (sweep, suite), Invalid (a side names nothing: field "a"/"b"),
// Internal. Takes `store` for the call only; thread-safe. `budget` (may be null: unbounded) bounds
// the trials read and the time (its Answer, naming "a", when it ends the query).
Result<Comparison> Compare(Store& store, const CompareSide& a, const CompareSide& b, double threshold,
                           QueryBudget* budget = nullptr);

// `e` as the answers and the webhooks write a side: {"verdict", "signature", "trial", "sweep",
// "metric": {"name", "value", "unit"}|null}, or null for none. Pure.
nlohmann::json CompareEndJson(const std::optional<CompareEnd>& e);
// `c` as GET /api/v1/compare answers it: {"a": side, "b": side, "threshold", "key_metric" (or null),
// "summary": {change: count, "pending"}, "items": [{"config_key", "config", "hardware", "change",
// "why", "a", "b", "metric_change" (or null)}]}. Pure.
nlohmann::json ComparisonJson(const Comparison& c);

}  // namespace gauntlet::store
