// The sweeps' plain values as the Store reads and writes them (store/store.h): a sweep's row, its
// new trials, its origin, a listing's filter, and what a restart resumes of one still expanding.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "core/verdict.h"

namespace gauntlet::store {

struct NewTrial {
  std::string config_json;  // {"param": "value", ...}
  std::string config_key;   // canonical key (ConfigKey)
  int target_index = 0;
  int repeat_index = 0;
  int64_t id = 0;  // AddSweepTrials only: the id reserved for it (CreateSweep and AddTrial pick their own)
};

struct SweepRow {
  int64_t id = 0;
  int64_t suite_id = 0;
  std::string suite;
  int suite_version = 0;
  std::string name;
  nlohmann::json request;
  int priority = 0;
  int64_t trial_count = 0;
  int64_t created_at = 0;
  std::optional<int64_t> cancelled_at;
  nlohmann::json by_state = nlohmann::json::object();    // state -> count
  nlohmann::json by_verdict = nlohmann::json::object();  // verdict -> count
  int64_t reused = 0;  // done trials that took an earlier trial's verdict (counted in by_verdict too)
  std::optional<int64_t> rerun_of;  // the sweep this one reruns trials of
  std::string submitted_by;         // the token's name (or its role); "" where no token is needed
  std::string source = "api";       // cli | api | rerun | dashboard
  SweepKind kind = SweepKind::kGrid;  // a grid, or a bisection: a search that adds its trials one at a time
  nlohmann::json search;      // a bisection's state (core/bisect.h BisectionJson); null for a grid
  // A sweep begun with BeginSweep stores its trials after its answer: how many are stored while
  // that is not all of them (nullopt: all are). Expanding() until the last, unless it was cancelled
  // first (then it keeps the ones stored, and no more come).
  std::optional<int64_t> materialized;
  int64_t first_trial = 0;  // the first id of its trials (consecutive); 0 for a sweep stored before ids were reserved
  bool Expanding() const { return materialized && !cancelled_at; }
  int64_t Stored() const { return materialized.value_or(trial_count); }  // its trials in the store now
};

// A sweep whose trials are still being stored (BeginSweep): what a restart resumes.
struct ExpandingSweep {
  int64_t sweep = 0;
  int64_t first_trial = 0;
  int64_t materialized = 0;
};

// Which sweeps a listing keeps; unset fields keep all.
struct SweepFilter {
  std::optional<std::string> suite;         // by name
  std::optional<SweepState> state;
  std::optional<std::string> submitted_by;  // exactly
  std::optional<std::string> source;        // cli, api, rerun, dashboard
};

// Where a new sweep came from (SweepRow's rerun_of, submitted_by, source).
struct SweepOrigin {
  std::optional<int64_t> rerun_of;
  std::string submitted_by;
  std::string source = "api";
};

}  // namespace gauntlet::store
