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

std::vector<DriftItem> Drift(const std::vector<ConfigRuns>& cells, const Declared& d) {
  std::vector<DriftItem> out;
  for (const auto& c : cells) {
    if (c.runs == 0) continue;  // reused or unjudged only: nothing observed
    DriftItem it{&c, MatchDeclared(d, c.config, c.hardware), DriftKind::kUndeclared};
    if (it.rule) {
      const bool passes = PassesWithConfidence(c);
      if (it.rule->supported && !passes) it.kind = DriftKind::kSupportedButFailing;
      else if (!it.rule->supported && passes) it.kind = DriftKind::kUnsupportedButPassing;
      else it.kind = DriftKind::kAgrees;
    }
    out.push_back(it);
  }
  std::stable_sort(out.begin(), out.end(), [](const DriftItem& a, const DriftItem& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.runs->hardware != b.runs->hardware) return a.runs->hardware < b.runs->hardware;
    return a.runs->config_key < b.runs->config_key;
  });
  return out;
}

}  // namespace gauntlet
