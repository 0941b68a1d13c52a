#include "core/verdict.h"

#include <ostream>

#include "core/enum_names.h"
#include "core/pass_rate.h"

namespace gauntlet {

const std::vector<VerdictInfo>& Verdicts() {
  // The order is docs/DESIGN.md's. Severity and roles: see VerdictInfo.
  static const std::vector<VerdictInfo> k = {
      //  verdict                name            label            family   sev judged reported rule cause
      {Verdict::kPassed,      "passed",       "passed",        "ok",    0,  true,  true,  true,  0},
      {Verdict::kUnsupported, "unsupported",  "unsupported",   "warn",  2,  true,  true,  true,  5},
      {Verdict::kCrashed,     "crashed",      "crashed",       "bad",   3,  true,  true,  true,  1},
      {Verdict::kWrongOutput, "wrong_output", "wrong output",  "bad",   3,  true,  true,  true,  2},
      // Ran and answered, but not with the kernels the stage's dispatch expectation asked for
      // (docs/KERNELS.md "Kernel recorder"): only the worker's dispatch check assigns it.
      {Verdict::kFallback,    "fallback",     "fallback",      "warn",  2,  true,  true,  false, 0},
      {Verdict::kTimeout,     "timeout",      "timeout",       "infra", 1,  false, true,  true,  0},
      {Verdict::kOom,         "oom",          "out of memory", "bad",   3,  true,  true,  true,  4},
      {Verdict::kInfraError,  "infra_error",  "infra error",   "infra", 1,  false, true,  true,  3},
      {Verdict::kCancelled,   "cancelled",    "cancelled",     "none",  -1, false, true,  false, 0},
      {Verdict::kSkipped,     "skipped",      "skipped",       "none",  -1, false, false, false, 0},
  };
  return k;
}

// Verdicts() is indexed by the enum: the table above lists them in enumerator order.
const VerdictInfo& Info(Verdict v) { return Verdicts()[static_cast<size_t>(v)]; }

std::string_view Name(Verdict v) { return Info(v).name; }

std::optional<Verdict> ParseVerdict(std::string_view name) {
  const VerdictInfo* v = FindVerdict(name);
  if (!v) return std::nullopt;
  return v->verdict;
}

namespace {
constexpr std::string_view kStateNames[] = {"queued", "leased", "running", "done"};
}

std::string_view Name(TrialState s) { return NameIn(kStateNames, s); }
std::optional<TrialState> ParseTrialState(std::string_view name) { return ParseIn<TrialState>(kStateNames, name); }

namespace {
constexpr std::string_view kNodeStateNames[] = {"online", "draining", "offline", "quarantined"};
static_assert(std::size(kNodeStateNames) == kNodeStateCount);
}  // namespace

std::string_view Name(NodeState s) { return NameIn(kNodeStateNames, s); }
std::optional<NodeState> ParseNodeState(std::string_view name) { return ParseIn<NodeState>(kNodeStateNames, name); }

namespace {
constexpr std::string_view kSweepStateNames[] = {"running", "finished", "cancelled"};
constexpr std::string_view kSweepKindNames[] = {"grid", "bisect"};
}  // namespace

std::string_view Name(SweepState s) { return NameIn(kSweepStateNames, s); }
std::optional<SweepState> ParseSweepState(std::string_view name) { return ParseIn<SweepState>(kSweepStateNames, name); }
std::string_view Name(SweepKind k) { return NameIn(kSweepKindNames, k); }
std::optional<SweepKind> ParseSweepKind(std::string_view name) { return ParseIn<SweepKind>(kSweepKindNames, name); }

const std::vector<NodeState>& NodeStates() {
  static const std::vector<NodeState> k = {NodeState::kOnline, NodeState::kDraining, NodeState::kOffline,
                                           NodeState::kQuarantined};
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
  if (!next.verdict) return false;
  if (!shown.verdict) return true;
  const bool real = Info(*next.verdict).severity >= 0, had_real = Info(*shown.verdict).severity >= 0;
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
                    {"rule", v.rule},
                    {"cause_rank", v.cause_rank},
                    // A trial with this verdict was a run of its config (core/pass_rate.h CountsAsRun):
                    // what "N runs" counts, in the API and the dashboard alike.
                    {"run", CountsAsRun(v.verdict)}});
  return {{"verdicts", list}};
}

void PrintTo(Verdict v, std::ostream* os) { *os << Name(v); }
void PrintTo(TrialState s, std::ostream* os) { *os << Name(s); }
void PrintTo(NodeState s, std::ostream* os) { *os << Name(s); }
void PrintTo(SweepState s, std::ostream* os) { *os << Name(s); }
void PrintTo(SweepKind k, std::ostream* os) { *os << Name(k); }

}  // namespace gauntlet
