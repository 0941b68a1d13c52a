// What changed between two sets of results (GET /api/v1/compare, `gauntlet diff`, the webhooks'
// regression.found): per config × hardware class present in either side, fixed, broke, changed,
// same, new or gone, with both verdicts, signatures and the key metric's relative change.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/status.h"
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

// How one config × hardware changed from verdict/signature `a` to `b` (no verdict: absent on that
// side): "new", "gone", "fixed" (b passed, a did not), "broke" (a passed and b did not, or b's
// verdict is more severe, or both passed and the key metric fell by more than `threshold`:
// `metric_fell` says so), "changed" (another failing verdict or signature), "same". Pure.
std::string CompareChange(std::optional<Verdict> a_verdict, const std::string& a_signature,
                          std::optional<Verdict> b_verdict, const std::string& b_signature, bool metric_fell);

// {"a": side, "b": side, "threshold", "key_metric", "summary": {change: count, "pending": trials not
// done in a side's sweeps}, "items": [{"config_key", "config", "hardware", "change", "why"
// ("verdict"|"metric"|"passed and failed under one fingerprint"|""), "a": {"verdict", "signature",
// "trial", "sweep", "metric"}|null, "b": ..., "metric_change": (b - a) / a | null}]}. Change "flaky"
// (became flaky) is a "broke" by verdict whose config also passed under b's own fingerprint (same
// suite version and hardware class): not broken, flaky. Changes first (broke, flaky, fixed, changed,
// new, gone, same), then
// by config key and hardware. Errors: NotFound (sweep, suite), Invalid (a side names nothing: field
// "a"/"b"), Internal. Takes `store` for the call only; thread-safe. `budget` (may be null: unbounded)
// bounds the trials read and the time (its Answer, naming "a", when it ends the query).
Result<nlohmann::json> Compare(Store& store, const CompareSide& a, const CompareSide& b, double threshold,
                               QueryBudget* budget = nullptr);

}  // namespace gauntlet::store
