// Regressions along an ordered parameter (versions, tags, commits): over the stored results (the
// cells, so across sweeps), a config that passed at one value and failed at the next value tested on
// the same hardware class, with the bisection that searches that gap, or how to start one. The
// regressions endpoint lists them; auto_bisect starts the bisections (daemon/auto_bisect.cc).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/bisect_request.h"
#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

// The ordered-parameter regressions of `suite` (every suite when unset), newest first:
// {"items": [{"kind": "ordered", "suite", "suite_version", "latest_version", "parameter", "hardware",
// "config" (the other parameters), "config_key" (the bad side's), "before"/"after" ({"value",
// "verdict", "signature", "trial", "sweep", "config_key"}: the good and the bad value), "untested"
// (declared values between them), "first_bad" (the bad value when none is between, else null),
// "at", "bisection" (null, or {"id", "state", "good", "bad", "first_bad", "interval", "trials"}: the
// latest bisection of that suite version, config, hardware and parameter whose good..bad range holds
// both values), "start" (null, or {"request": a POST /api/v1/bisect body, "command": the `gauntlet
// bisect` line}: offered when values are untested, no bisection covers them and the cells are of the
// latest suite version), "detail"}]}. A point is one cell's latest verdict: passed is good, another
// verdict that counts as a run (core/pass_rate.h) is bad; flaky cells and verdicts that say nothing
// about the config are left out. Reads only; thread-safe. Internal on a store error. `budget` (may be
// null: unbounded) bounds the cells read and the time (its Answer when it ends the query).
Result<nlohmann::json> OrderedRegressions(Store& store, const std::optional<std::string>& suite,
                                          QueryBudget* budget = nullptr);

// One gap of OrderedRegressions' answer, as automatic bisection weighs it.
struct RegressionGap {
  std::string hardware, good_key, bad_key;  // the class, and the config keys of the good and the bad side
  bool covered = false;                     // a bisection covers it
  std::optional<BisectRequest> start;       // the bisection it offers (its start.request), if any
};
// The "ordered" items of `regressions` (OrderedRegressions' answer) as gaps, in its order; an offered
// start that is no bisection request is none. Pure.
std::vector<RegressionGap> RegressionGaps(const nlohmann::json& regressions);

}  // namespace gauntlet::store
