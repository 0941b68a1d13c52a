// Broke versus flaky, by the order of a config's outcomes (docs/SCHEDULING.md "Broke or flaky"):
// over its latest kOrderWindow judged runs on one hardware class, in finish order and whatever the
// software fingerprint, outcomes that changed once and stayed changed are a change (a break when it
// now fails, a fix when it now passes); outcomes that went back and forth (at least two changes,
// so at least three runs) are flaky. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/verdict.h"

namespace gauntlet {

inline constexpr int kOrderWindow = 8;  // the latest runs the rule reads

enum class OutcomeOrder { kStable, kChanged, kInterleaved };

// `verdicts` in finish order (oldest first); only judged verdicts count (VerdictInfo::judged), each
// as passed or failed. Reads the latest kOrderWindow of them.
OutcomeOrder ReadOutcomeOrder(const std::vector<Verdict>& verdicts);

}  // namespace gauntlet

namespace gauntlet {

// One judged run of a config on one hardware class, as the matrix cell's `flaky` flag reads it.
struct OrderedRun {
  int64_t at = 0;      // when it finished
  int64_t batch = 0;   // the sweep it ran in: runs of one sweep ran side by side, so their order says nothing
  bool passed = false;
  bool flaky = false;  // its own trial failed and then passed a confirming attempt
};

// Sorts `runs` by finish time (stable, so equal times keep their order) and keeps the latest
// kOrderWindow.
void KeepLatestRuns(std::vector<OrderedRun>* runs);

// True when the latest kOrderWindow of `runs` (any order) show a flaky config: their outcomes in
// finish order went back and forth (kInterleaved), two runs of one sweep disagree (repeats and
// confirming attempts ran together: disagreement is flakiness whatever the order), or a run's own
// trial was flaky. A config that passed and then failed every later sweep is not flaky: it broke.
bool RunsAreFlaky(std::vector<OrderedRun> runs);

}  // namespace gauntlet
