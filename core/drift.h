// Declared against observed: where a suite's real runs (core/config_runs.h) disagree with what its
// declared support claims, from a published table (core/declared.h) or from the framework itself
// (a probe stage's answer, ConfigRuns::claim). The one judgement that GET /api/v1/drift, the
// matrix's drift and evidence layers and the check share. Pure; thread-safe.
#pragma once
#include <vector>

#include "core/config_runs.h"
#include "core/declared.h"

namespace gauntlet {

enum class DriftKind {
  kSupportedButFailing,    // declared supported; real runs that do not pass with confidence
  kUnsupportedButPassing,  // declared unsupported; passes with confidence
  kUndeclared,             // ran, and nothing says anything about it
  kAgrees,                 // the runs say what the claim says
};
const char* DriftKindName(DriftKind k);  // "supported_but_failing", ... (static storage)

// One claim held against the runs: what `supported` says beside whether they pass with confidence.
DriftKind Against(bool supported, const ConfigRuns& c);

struct DriftItem {
  const ConfigRuns* runs = nullptr;    // points into the cells given
  const DeclaredRule* rule = nullptr;  // the table's rule; nullptr when the table says nothing
  DriftKind table = DriftKind::kUndeclared;      // the runs against the table's rule
  DriftKind framework = DriftKind::kUndeclared;  // the runs against runs->claim
  // The item's kind: the more severe of the two that declared anything (a disagreement before
  // agreement), undeclared when neither did.
  DriftKind kind = DriftKind::kUndeclared;
  Evidence evidence = Evidence::kNone;  // EvidenceOf(*runs, rule != nullptr)
};

// `c` judged against `d` (nullptr: no table) and its own framework claim. Both must outlive it.
DriftItem JudgeDrift(const ConfigRuns& c, const Declared* d);

// Every config × hardware of `cells` with real runs, judged by JudgeDrift; disagreements first
// (supported-but-failing, unsupported-but-passing, undeclared, agrees), then by hardware and
// config. Both arguments must outlive the answer.
std::vector<DriftItem> Drift(const std::vector<ConfigRuns>& cells, const Declared* d);

}  // namespace gauntlet
