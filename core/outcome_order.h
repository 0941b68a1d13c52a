// Broke versus flaky, by the order of a config's outcomes (docs/SCHEDULING.md "Broke or flaky"):
// over its latest kOrderWindow judged runs on one hardware class, in finish order and whatever the
// software fingerprint, outcomes that changed once and stayed changed are a change (a break when it
// now fails, a fix when it now passes); outcomes that went back and forth (at least two changes,
// so at least three runs) are flaky. Pure; thread-safe.
#pragma once

#include <vector>

#include "core/verdict.h"

namespace gauntlet {

inline constexpr int kOrderWindow = 8;  // the latest runs the rule reads

enum class OutcomeOrder { kStable, kChanged, kInterleaved };

// `verdicts` in finish order (oldest first); only judged verdicts count (VerdictInfo::judged), each
// as passed or failed. Reads the latest kOrderWindow of them.
OutcomeOrder ReadOutcomeOrder(const std::vector<Verdict>& verdicts);

}  // namespace gauntlet
