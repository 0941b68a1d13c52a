// Sweep requests (docs/DESIGN.md "Sweep request"): validation against a suite and expansion into trials.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/suite.h"
#include "core/status.h"

namespace gauntlet {

// Every function here is pure and thread-safe.

using Config = std::map<std::string, std::string>;  // parameter -> value (ordered: canonical)

// One entry of a request's "targets": which hardware the sweep runs on.
struct Target {
  Requirements req;      // gpus (0 = the suite's), arch, min_memory_gb, labels
  std::string gpu_name;  // glob on the GPU model name, e.g. "NVIDIA H200*"
  // What one GPU-hour of this target's hardware costs, relative to the sweep's other targets (any
  // unit, finite and > 0); unset counts as 1. Orders probes cheapest first (docs/SCHEDULING.md).
  std::optional<double> cost_per_gpu_hour;
  nlohmann::json raw;    // as submitted, for display
  double Price() const { return cost_per_gpu_hour.value_or(1.0); }  // the price, 1 when unset
};

// A parsed request (docs/DESIGN.md "Sweep request" gives each field's meaning).
struct SweepRequest {
  std::string suite;
  std::string name;
  std::map<std::string, std::vector<std::string>> parameters;
  std::vector<Config> include, exclude;
  std::vector<Target> targets;  // never empty after parsing: {} means any matching node
  int repeats = 1;
  int priority = 0;
  bool prune = true;
  bool reuse = true;
  int64_t max_trials = 10000;
  int max_attempts = 3;
  int confirm_failures = 0;  // 0-10: re-runs of a crashed, wrong_output or timeout trial before it stands
  bool settle_first = true;  // "order": "settle" (default) or "grid"
  bool auto_bisect = false;  // a regression between two values of an ordered parameter starts a bisection
};

// Upper bound on max_trials a request may ask for.
inline constexpr int64_t kTrialLimit = 1000000;

// Parses the request's shape (types, ranges); does not need the suite. Errors name the field.
Result<SweepRequest> ParseSweepRequest(const nlohmann::json& j);

// Validates values against `suite` and expands the grid into distinct configs in a stable order (the
// suite's params order, each axis in its given order; then what `include` adds). Exclude drops
// grid configs, never an include. Trial count = configs x targets x repeats, checked against
// max_trials; Invalid if nothing is left.
Result<std::vector<Config>> ExpandSweep(const Suite& suite, const SweepRequest& req);
// The number of trials ExpandSweep's configs make (configs x targets x repeats), with the same
// checks and errors, without building the configs when the request has no include (the grid less
// its excludes is counted over value indices). A big sweep is answered with it before it is expanded.
Result<int64_t> SweepTrialCount(const Suite& suite, const SweepRequest& req);

// "a=x&b=y" in parameter-name order: the key that reuse, history and the matrix group by.
std::string ConfigKey(const Config& c);
// `c` as a JSON object of strings.
nlohmann::json ConfigJson(const Config& c);

}  // namespace gauntlet
