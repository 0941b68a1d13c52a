// The matrix's fold (store/matrix.cc): every (config, hardware) a matrix reads, folded into one
// flat record of integers. Strings (config keys, hardware, signatures, fingerprints, metric names
// and units, count keys, each parameter's values) are interned once, first seen first, so a sweep
// of 200,000 trials is a few arrays, not 200,000 map nodes of strings and vectors to build, look up
// and free (docs/BENCHMARKS.md "Issue 31: the matrix fold over interned ids").
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/verdict.h"
#include "store/query_budget.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace gauntlet::store {
struct MatrixQuery;
}

namespace gauntlet::store::matrix {

inline constexpr uint32_t kNoEntry = 0xffffffffu;

// Distinct strings as dense ids (0, 1, ... in the order first seen) and back. Open addressing over
// one byte buffer: no node or string per entry. Not thread-safe.
class Interner {
 public:
  // The id of `s`, added if new (`s` must not point into this interner).
  uint32_t Id(std::string_view s);
  // The text of `id` (< size()); valid until the next Id().
  std::string_view Text(uint32_t id) const { return {bytes_.data() + entries_[id].at, entries_[id].len}; }
  size_t size() const { return entries_.size(); }
  // Room for `n` strings of `bytes` bytes in all, so reading them moves nothing.
  void Reserve(size_t n, size_t bytes);

 private:
  struct Entry {
    uint64_t hash, at;
    uint32_t len;
  };
  // A slot holds id + 1 (0: free) and the hash's high half, so a probe past other strings reads
  // no entry (with 200,000 keys, each entry read is a cache miss).
  struct Slot {
    uint32_t id1 = 0, tag = 0;
  };
  void Rehash(size_t slots);
  std::string bytes_;
  std::vector<Entry> entries_;
  std::vector<Slot> slots_;  // a power of two, at most half full
};

// One config on one hardware class: the latest verdict it got (a skip never hides a real one),
// every trial counted, and whether one fingerprint saw it both ways. Ids are into Fold's interners.
struct Config {
  int64_t trial = 0, at = -1;
  int64_t reused = 0;  // results filed by reuse: said beside the runs, never counted as one
  double metric_value = 0;
  uint64_t text_at = 0;  // the config as first read: Fold::texts[text_at, text_at + text_len)
  uint32_t text_len = 0;
  uint32_t hardware = 0;                    // in Fold::hardware
  uint32_t signature = 0, fingerprint = 0;  // of the result shown, in Fold::strings (0 is "")
  uint32_t metric_name = 0, metric_unit = 0;
  uint32_t counts = kNoEntry;  // first of its Fold::counts entries
  uint32_t runs = kNoEntry;    // first of its Fold::runs entries (trial rows)
  int8_t verdict = -1;         // -1: none yet (only pending trials, or cancelled ones)
  bool metric_set = false, flaky = false;
  std::optional<Verdict> Shown() const {
    return verdict < 0 ? std::nullopt : std::optional<Verdict>(static_cast<Verdict>(verdict));
  }
};

// Trials (or cells) by verdict or state, a list per config in one pool.
struct CountEntry {
  uint32_t key;   // in Fold::count_keys
  uint32_t next;  // kNoEntry ends the list
  int64_t n;
};
// A judged run of a config (trial rows), for the order rule; nearly always one per config.
struct RunEntry {
  int64_t at, sweep;
  uint32_t next;
  bool passed, flaky;
};

// The configs a matrix reads, folded. `params` are the suite's parameters: each config's value of
// params[p] is values[config * params.size() + p], an id in param_values[p] ("" where absent).
struct Fold {
  explicit Fold(std::vector<std::string> suite_params);

  std::vector<std::string> params;
  Interner keys;  // config_key + '\x1f' + hardware: a config's id is its key's
  std::vector<Config> configs;
  std::vector<uint32_t> values;
  std::vector<Interner> param_values;
  Interner hardware, strings, count_keys;  // count_keys: each verdict (by enum), then each state, "", then others
  std::vector<CountEntry> counts;
  std::vector<RunEntry> runs;
  std::string texts;

  // The count key of a verdict, of a trial state, and of "" (a done trial without a verdict).
  static uint32_t VerdictKey(Verdict v) { return static_cast<uint32_t>(v); }
  static uint32_t StateKey(TrialState s) { return kVerdictCount + static_cast<uint32_t>(s); }
  static constexpr uint32_t kEmptyKey = kVerdictCount + 4;

  // Room for `n` configs (a sweep's trial count: each may be one), so a big fold is not copied as it grows.
  void Reserve(size_t n);
  // The id of (config_key, hardware), added (reading its values from `config_text`) if new.
  // Throws nlohmann's parse_error for a config that is not JSON.
  uint32_t ConfigOf(std::string_view config_key, std::string_view hardware, std::string_view config_text);
  // Adds `n` to config `c`'s count of `key`.
  void AddCount(Config& c, uint32_t key, int64_t n);
  // Adds each integer member of the JSON object `text` to c's counts; `lenient`: text that is not
  // JSON adds nothing (else it throws nlohmann's parse_error).
  void AddCountsJson(Config& c, std::string_view text, bool lenient);
  // Records a run of `c` (a judged verdict, or a flaky trial's) for the order rule.
  void AddRun(Config& c, int64_t at, int64_t sweep, bool passed, bool flaky);
  // Sets each config's `flaky` from its runs (core/outcome_order.h RunsAreFlaky); call once, after
  // the last AddRun.
  void SettleRuns();

 private:
  std::string key_;                             // one buffer for every row's key
  std::vector<std::string_view> views_;         // one config's values, as read
  std::vector<std::pair<std::string_view, int64_t>> ints_;  // one counts object, as read
};

// Folds the trials `q` names (a sweep's, of `sweep_trials` trials as its row says, or a
// fingerprint's of suite `suite_id` when non-zero) into *f in id order, counting each row against
// `budget` (which throws through it when it ends the query).
void ReadTrials(sql::Db& db, const MatrixQuery& q, int64_t suite_id, int64_t sweep_trials, QueryBudget& budget,
                Fold* f);
// Folds the results index's cells of `q.suite` (of `version` when > 0) into *f, as ReadTrials.
void ReadCells(sql::Db& db, const MatrixQuery& q, int version, QueryBudget& budget, Fold* f);

// What the matrix reads of a sweep: its suite and version, as GetSweep names them, and its size,
// without the trial counts GetSweep adds (a GROUP BY over every trial of the sweep: a third of a
// 200,000-trial matrix's time, outside the query's bounds). Errors: NotFound; throws sql::Error.
struct SweepHead {
  std::string suite;
  int suite_version = 0;
  int64_t trial_count = 0;
};
Result<SweepHead> GetSweepHead(Store& store, int64_t id);

// The hardware classes of f's configs, sorted ("unassigned" for none): what a matrix whose columns
// are a parameter ran on, and what the Markdown export describes.
nlohmann::json HardwareSeen(const Fold& f);
// The software fingerprints of f's shown results, most configs first (then by text), at most 10,
// each with how many config × hardware results it judged.
nlohmann::json FingerprintsSeen(const Fold& f);

}  // namespace gauntlet::store::matrix
