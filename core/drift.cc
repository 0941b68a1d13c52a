#include "core/drift.h"

#include <algorithm>

namespace gauntlet {

const char* DriftKindName(DriftKind k) {
  switch (k) {
    case DriftKind::kSupportedButFailing: return "supported_but_failing";
    case DriftKind::kUnsupportedButPassing: return "unsupported_but_passing";
    case DriftKind::kUndeclared: return "undeclared";
    case DriftKind::kAgrees: return "agrees";
  }
  return "undeclared";
}

DriftKind Against(bool supported, const ConfigRuns& c) {
  const bool passes = PassesWithConfidence(c);
  if (supported && !passes) return DriftKind::kSupportedButFailing;
  if (!supported && passes) return DriftKind::kUnsupportedButPassing;
  return DriftKind::kAgrees;
}

DriftItem JudgeDrift(const ConfigRuns& c, const Declared* d) {
  DriftItem it;
  it.runs = &c;
  it.rule = d ? MatchDeclared(*d, c.config, c.hardware) : nullptr;
  if (it.rule) it.table = Against(it.rule->supported, c);
  if (c.claim) it.framework = Against(c.claim->supported, c);
  // Both kinds are kUndeclared only where nothing declared; otherwise the enum's order (most
  // severe first) picks, with kUndeclared of a silent source never outranking what the other said.
  if (!it.rule) it.kind = it.framework;
  else if (!c.claim) it.kind = it.table;
  else it.kind = std::min(it.table, it.framework);
  it.evidence = EvidenceOf(c, it.rule != nullptr);
  return it;
}

std::vector<DriftItem> Drift(const std::vector<ConfigRuns>& cells, const Declared* d) {
  std::vector<DriftItem> out;
  for (const auto& c : cells) {
    if (c.runs == 0) continue;  // reused or unjudged only: nothing observed
    out.push_back(JudgeDrift(c, d));
  }
  std::stable_sort(out.begin(), out.end(), [](const DriftItem& a, const DriftItem& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.runs->hardware != b.runs->hardware) return a.runs->hardware < b.runs->hardware;
    return a.runs->config_key < b.runs->config_key;
  });
  return out;
}

}  // namespace gauntlet
