#include "core/verdict.h"

namespace gauntlet {

const std::vector<VerdictInfo>& Verdicts() {
  // The order is DESIGN.md's. Severity and roles: see VerdictInfo.
  static const std::vector<VerdictInfo> k = {
      //  name            label            family   sev  judged reported rule
      {"passed",       "passed",        "ok",    0,  true,  true,  true},
      {"unsupported",  "unsupported",   "warn",  2,  true,  true,  true},
      {"crashed",      "crashed",       "bad",   3,  true,  true,  true},
      {"wrong_output", "wrong output",  "bad",   3,  true,  true,  true},
      {"timeout",      "timeout",       "infra", 1,  false, true,  true},
      {"oom",          "out of memory", "bad",   3,  true,  true,  true},
      {"infra_error",  "infra error",   "infra", 1,  false, true,  true},
      {"cancelled",    "cancelled",     "none",  -1, false, true,  false},
      {"skipped",      "skipped",       "none",  -1, false, false, false},
  };
  return k;
}

const VerdictInfo* FindVerdict(std::string_view name) {
  for (const auto& v : Verdicts())
    if (v.name == name) return &v;
  return nullptr;
}

bool IsVerdict(std::string_view name) { return FindVerdict(name) != nullptr; }

int VerdictSeverity(std::string_view name) {
  const VerdictInfo* v = FindVerdict(name);
  return v ? v->severity : -1;
}

bool Supersedes(const Observation& next, const Observation& shown) {
  if (next.verdict.empty()) return false;
  if (shown.verdict.empty()) return true;
  const bool real = VerdictSeverity(next.verdict) >= 0, had_real = VerdictSeverity(shown.verdict) >= 0;
  if (real != had_real) return real;
  return next.at != shown.at ? next.at > shown.at : next.trial > shown.trial;
}

std::vector<std::string> VerdictNames(bool (*pick)(const VerdictInfo&)) {
  std::vector<std::string> out;
  for (const auto& v : Verdicts())
    if (!pick || pick(v)) out.emplace_back(v.name);
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

nlohmann::json VocabularyJson() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : Verdicts())
    list.push_back({{"name", v.name},
                    {"label", v.label},
                    {"family", v.family},
                    {"severity", v.severity},
                    {"judged", v.judged},
                    {"reported", v.reported},
                    {"rule", v.rule}});
  return {{"verdicts", list}};
}

}  // namespace gauntlet
