// The results index: what the matrix, history and regressions read. FinishTrial and FinishMany keep
// it in the same transaction as the trial's own row, so it is never out of step with the trials.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/verdict.h"
#include "store/sqlite.h"

namespace gauntlet::store {

// One named measurement of a result ("output_tok_s@c8": 1234.5 tok/s).
struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

// The metric a cell shows: the suite's "key_metric" if the result has it (nullopt if that value is
// not a number or {value, unit}); else output_tok_s* at the highest @cN concurrency, then tflops,
// gbps, tok_s, ms_p50, ms, then the first numeric metric by name. Pure; thread-safe.
std::optional<Metric> KeyMetric(const std::string& key_metric, const nlohmann::json& metrics);
// {"name", "value", "unit"} of `m`, or null for none: how answers and webhooks write a metric. Pure.
nlohmann::json MetricJson(const std::optional<Metric>& m);


// A finished trial as its results-index cell (suite, config_key, hardware) records it.
struct CellUpdate {
  std::string suite, config_key, hardware, config_json;
  Verdict verdict = Verdict::kPassed;
  std::string signature, fingerprint;
  int64_t trial = 0, at = 0;
  std::optional<Metric> metric;
  int64_t suite_version = 1;
  bool flaky = false;  // the trial itself failed and then passed a confirming attempt: the cell is flaky
  bool reused = false;  // filed by reuse: counted in the cell's `reused`, never as a run, and shown by no verdict
};

// Records a finished trial in its cell (suite version, config, hardware class), inside the write that
// finishes it (on the Store's writer, so under its write lock); throws sql::Error. A cancelled trial
// or one without hardware is ignored. A skipped one opens a cell where none exists, else only
// counts: it never hides a real verdict. A real verdict replaces the cell's; the replaced one
// becomes "previous" (for regressions) if real. A judged verdict is also filed under its
// fingerprint (`judged`) and among the cell's latest runs (`recent`), whose order says whether the
// cell is flaky (core/outcome_order.h RunsAreFlaky: outcomes back and forth, runs of one sweep that
// disagree, or a run of a flaky trial, `u.flaky`); passes then failures since are a break, not
// flaky. A reused result (u.reused) only adds one to the cell's
// `reused`: a copy of an earlier verdict is no run, and shows nothing the cell does not already hold.
void UpsertCell(sql::Db& db, const CellUpdate& u);

}  // namespace gauntlet::store
