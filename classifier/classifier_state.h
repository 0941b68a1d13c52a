// The streaming classifier's state (classifier.cc feeds it line by line, classifier_decide.cc
// decides from it at Finish): per-rank incidents by tier, test runners' reports, the suite's rule
// hits. Internal to the classifier library; not thread-safe (one Classifier's own).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classifier/classifier.h"
#include "classifier/engine.h"
#include "classifier/log_line.h"
#include "classifier/rank_triage.h"
#include "classifier/runner_set.h"
#include "classifier/traceback.h"
#include "core/verdict.h"

namespace gauntlet::classifier::state_detail {

inline constexpr size_t kMaxLine = 64 * 1024;     // longer lines are cut (same cut whatever the chunking)
inline constexpr size_t kMaxRuleScan = 4096;      // rules read the first 4 KiB of a candidate line
inline constexpr size_t kMaxRanks = 1024;         // distinct writers tracked; the rest share one slot
inline constexpr size_t kLastLineBytes = 512;
inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

struct Incident {
  Verdict verdict = Verdict::kCrashed;
  std::string signature;
  std::string evidence;
  bool keyed = false;      // a fixed-key fact (no kernel image, OOM...), not an exception's own words
  bool exception = false;  // came from the exception line that ended a traceback
  std::string rank = {};   // the writer's key (RankState::key)
  bool test = false;       // one test's outcome in a test runner's report (pytest "E" / "FAILED" lines)
  Basis basis = Basis::kMessage;  // what the incident was read from (core/basis.h)
};

struct RankState {
  std::string key;        // "rank1", "tp3", "" (no prefix), ...
  bool watchdog = false;  // reported an NCCL watchdog timeout
  TracebackTracker tb;
  uint64_t first[5] = {kNever, kNever, kNever, kNever, kNever};  // first line of each tier
  std::optional<Incident> last[5];                                 // last incident of each tier
};

inline bool IsCrashSignal(int sig) { return sig == 11 || sig == 4 || sig == 7 || sig == 8; }

// Among specific facts from one rank, causes outrank consequences (VerdictInfo::cause_rank).
inline int CausePriority(Verdict verdict) { return Info(verdict).cause_rank; }

}  // namespace gauntlet::classifier::state_detail

namespace gauntlet::classifier {
using namespace state_detail;

struct Classifier::State {
  std::shared_ptr<const Engine> engine;
  std::string partial;
  bool partial_overflow = false;
  uint64_t line_no = 0;
  std::unordered_map<std::string, RankState> ranks;
  std::string last_opener_rank;
  int open_tracebacks = 0;
  // Rank triage (rank_triage.h): torchrun-prefixed ranks seen at all (hung ranks print no error),
  // unprefixed lines a launcher reprints for a rank, and the launcher's own report.
  std::vector<uint8_t> seen_ranks;
  std::string redirect_rank;  // after "-- Process N terminated with the following error:"
  bool redirect_opened = false;
  int redirect_wait = 0;  // lines seen since the marker while no traceback has opened
  RootCauseReader root;
  std::string launcher_rank;  // the rank a launcher says failed (spawn's process N, torchrun's root cause)
  std::vector<std::optional<Incident>> suite_hits;  // first match of each suite rule
  std::optional<Incident> first_strong;
  std::optional<Incident> killed_line;
  std::string last_line;
  // The last non-blank line seen, as a view into the caller's chunk; copied into last_line once per
  // Feed (CommitLastLine) instead of once per line.
  std::string_view last_line_view;
  bool last_line_pending = false;

  void CommitLastLine() {
    if (last_line_pending) last_line.assign(last_line_view.substr(0, kLastLineBytes));
    last_line_pending = false;
  }
  // Test runners' own reports (docs/CLASSIFIER.md "Test runners"), and the suite's rules to judge
  // their cases with.
  RunnerSet runners;
  std::vector<SignatureRule> rules;
  std::optional<TestReport> Tests(bool complete_only) const;
  // Scratch for one line's needle hits, and its lowercased text.
  std::vector<uint8_t> hit;
  std::string lower_buf;
  std::vector<uint32_t> touched;

  void ProcessLine(std::string_view line);
  void SlowPath(std::string_view line, bool any_needle);
  bool RunSuiteRules(std::string_view line, const LogLine& parsed, const std::string& rank);
  void SpawnExitIncident(const SpawnExit& e, std::string_view line);
  Classification Attribute(const Incident& i, bool consequence) const;
  Classification DecideInner(const ExitInfo& exit) const;
  void ExceptionIncident(RankState& rs, std::string_view line, const LogLine& parsed);
  RankState& Rank(const std::string& key);
  void Record(RankState& rs, Tier tier, Incident inc);
  std::optional<Incident> Pick(int lo, int hi) const;
  Classification Decide(const ExitInfo& exit) const;
};

}  // namespace gauntlet::classifier
