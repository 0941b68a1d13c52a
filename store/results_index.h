// The results index: what the matrix, history and regressions read. FinishTrial and FinishMany keep
// it in the same transaction as the trial's own row, so it is never out of step with the trials.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "store/sqlite.h"

namespace gauntlet {

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

// The metric a cell shows: the suite's "key_metric" if the result has it; else output tokens/s at
// the highest concurrency, then TFLOP/s, GB/s, then the first metric by name.
std::optional<Metric> KeyMetric(const std::string& key_metric, const nlohmann::json& metrics);

// How bad a verdict is, for regressions: VerdictSeverity (core/verdict.h); -1 for verdicts that say
// nothing about the config (skipped, cancelled).
int Severity(const std::string& verdict);

struct CellUpdate {
  std::string suite, config_key, hardware, config_json, verdict, signature, fingerprint;
  int64_t trial = 0, at = 0;
  std::optional<Metric> metric;
  int64_t suite_version = 1;
};

// Records a finished trial in its cell (suite version, config, hardware class). A skipped or
// cancelled trial only counts; it never hides a real verdict. The verdict it replaces becomes the
// cell's "previous" (for regressions). A judged verdict is also filed under its fingerprint: the
// cell turns flaky once one fingerprint has two different judged verdicts. Call inside a write.
void UpsertCell(sql::Db& db, const CellUpdate& u);

}  // namespace gauntlet
