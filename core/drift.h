// Declared against observed: where a suite's real runs (core/config_runs.h) disagree with what its
// declared support (core/declared.h) claims. Pure; thread-safe.
#pragma once
#include <vector>

#include "core/config_runs.h"
#include "core/declared.h"

namespace gauntlet {

enum class DriftKind {
  kSupportedButFailing,    // declared supported; real runs that do not pass with confidence
  kUnsupportedButPassing,  // declared unsupported; passes with confidence
  kUndeclared,             // ran, and no rule says anything about it
  kAgrees,                 // the runs say what the rule says
};
const char* DriftKindName(DriftKind k);  // "supported_but_failing", ... (static storage)

struct DriftItem {
  const ConfigRuns* runs = nullptr;      // points into the cells given
  const DeclaredRule* rule = nullptr;    // points into the declaration; nullptr when undeclared
  DriftKind kind = DriftKind::kUndeclared;
};

// Every config × hardware of `cells` with real runs, judged against `d`; disagreements first
// (supported-but-failing, unsupported-but-passing, undeclared, agrees), then by hardware and config.
// Both arguments must outlive the answer.
std::vector<DriftItem> Drift(const std::vector<ConfigRuns>& cells, const Declared& d);

}  // namespace gauntlet
