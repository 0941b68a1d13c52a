// The read side that answers "which configurations pass on which hardware, since when, how fast":
// the matrix pivot, one config's history, failure clusters and regressions. Thread-safe (reads).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

struct MatrixQuery {
  std::string suite;                       // may be empty when `sweep` is set (the sweep names it)
  std::vector<std::string> rows;           // one or two parameters; empty: the first two declared
  std::string cols = "hardware";           // "hardware" or a parameter
  std::optional<int64_t> sweep;
  std::optional<std::string> fingerprint;  // canonical JSON, as results store it
  std::optional<int> suite_version;        // unset: the latest; 0: all versions (a sweep: its own)
};

// Each takes the Store for the call only. Errors: NotFound (suite, sweep), Invalid (field at fault),
// Internal (store).
// {"suite", "hardware", "fingerprints", "suite_version", "rows", "cols", "hidden", "key_metric", "row_keys", "col_keys",
// "cells": [{"row", "col", "state", "verdict", "signature", "counts", "reused", "pass_rate", "configs",
// "passed", "metric", "metric_min", "metric_max", "breakdown"?, "flaky"?, "last_seen", "trial"}]}; see
// docs/API.md. `counts` and `pass_rate` count runs only; `reused` the results filed by reuse.
// `hardware`: the classes of the configs shown; `fingerprints`: [{"fingerprint", "results"}] of the
// results shown, most first, at most 10.
// A cell's `state`: passed (every config passed), failed (every config failed one way), mixed (its
// configs disagree: `breakdown` says which values of the hidden parameters go with each verdict),
// flaky (a config's runs went back and forth or disagreed within a sweep: core/outcome_order.h
// RunsAreFlaky), pending, skipped.
// `budget` (may be null: unbounded) bounds the rows read and folded (trials, cells, each cell's
// configs) and the time: its end is its Answer (422 naming sweep/suite, 503); over 100,000 cells is
// Invalid naming rows. A breakdown lists at most 50 values of a hidden parameter per verdict (the
// rest counted in "values_more": {param: n}) and a cell at most 20 flaky configs ("flaky_count": all).
Result<nlohmann::json> Matrix(Store& store, const MatrixQuery& q, QueryBudget* budget = nullptr);
// The (hardware class, node id) pairs of `suite`'s done trials (only `sweep`'s when given), sorted
// and distinct: which nodes ran the results a matrix shows. Errors: Internal (store).
Result<std::vector<std::pair<std::string, int64_t>>> ResultNodes(Store& store, const std::string& suite,
                                                                 std::optional<int64_t> sweep);
// One config's verdicts over time, per hardware class and fingerprint.
Result<nlohmann::json> History(Store& store, const std::string& suite, const std::string& config_key);
// Failure clusters with the parameter value (or pair of values, where two together explain it
// better than any one) that explains each (per hardware), over the latest 200,000 done trials that
// ran (a reused trial is not counted again).
Result<nlohmann::json> Signatures(Store& store, const std::optional<std::string>& suite, std::optional<int64_t> sweep);
// The flaky cells of `suite` (one config on one hardware class that both passed and failed under
// one fingerprint, or failed and then passed its confirmation) at `version` (unset: the latest; 0:
// all): {"suite", "suite_version", "items": [{"config_key", "config", "hardware", "suite_version",
// "verdict", "signature", "trial", "last_seen", "counts", "reused", "verdicts_by_fingerprint", "pass_rate"}]},
// the lowest pass rate first. NotFound for an unknown suite.
Result<nlohmann::json> FlakyCells(Store& store, const std::string& suite, std::optional<int> version);

}  // namespace gauntlet::store
