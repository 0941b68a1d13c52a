// The runs of a suite version as ConfigRuns (core/config_runs.h), one per config × hardware class:
// what GET /api/v1/recommend and /check judge. Reads trials, never writes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/config_runs.h"
#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

struct SuiteRunsQuery {
  int64_t suite_id = 0;                    // the suite version (SuiteRow::id)
  std::optional<std::string> hardware;     // one hardware class, or all
  std::optional<std::string> fingerprint;  // trials under exactly this fingerprint (canonical JSON)
  std::string metric;     // the metric to rank by; empty: each trial's key metric
  int64_t max_trials = 200000;  // the query's cost bound: more done trials than this is Invalid
};

// Every done trial of the query, oldest first, folded into one ConfigRuns per config × hardware
// (sorted by hardware, then config key). A reused result counts in `reused` only; `metric` names
// the metric read from each trial's latest result (a number or {"value", "unit"}). Errors: Invalid
// (field "hardware") when more than max_trials trials match, Internal. Takes `store` for the call
// only; thread-safe.
Result<std::vector<ConfigRuns>> LoadSuiteRuns(Store& store, const SuiteRunsQuery& q);

}  // namespace gauntlet::store
