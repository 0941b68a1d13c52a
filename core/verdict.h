// The verdict vocabulary (docs/DESIGN.md "Trial lifecycle"): the one list of verdicts, in display order,
// with each one's severity and role. Every C++ layer reads it from here and the daemon serves it to
// the dashboard (GET /web/js/vocabulary.js), so no other file spells the list out.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

// Every function here is thread-safe: the list is immutable static data.

// The verdicts as a type. Strings exist only at the SQL and JSON edges (Name/ParseVerdict); every
// comparison inside the program is on this enum. The enumerators are in display order.
enum class Verdict : uint8_t {
  kPassed, kUnsupported, kCrashed, kWrongOutput, kFallback, kTimeout, kOom, kInfraError, kCancelled, kSkipped,
};
inline constexpr int kVerdictCount = 10;

// A trial's lifecycle: queued -> leased -> running -> done (a lost lease goes back to queued).
enum class TrialState : uint8_t { kQueued, kLeased, kRunning, kDone };
// A node's state (docs/API.md "Nodes"): online takes leases; draining finishes what it holds and
// takes none; offline stopped heartbeating; quarantined was taken out (by the infra streak or a
// person) until a person resumes it. The enumerators are in display order.
enum class NodeState : uint8_t { kOnline, kDraining, kOffline, kQuarantined };
inline constexpr int kNodeStateCount = 4;
// A sweep's state as lists filter by it: running (a trial not done, or trials still being stored),
// finished (every trial done), cancelled (by a user, whatever its trials' states).
enum class SweepState : uint8_t { kRunning, kFinished, kCancelled };
// What a sweep is: a grid expands every configuration when it is submitted; a bisection is a search
// that adds its trials one at a time (daemon/coordinator_bisect.cc).
enum class SweepKind : uint8_t { kGrid, kBisect };

struct VerdictInfo {
  Verdict verdict;
  std::string_view name;    // "wrong_output"
  std::string_view label;   // "wrong output": how a person reads it
  std::string_view family;  // ok | warn | bad | infra | none: the dashboard's colour family
  // How bad it is, for "got worse" (regressions) and for choosing among verdicts:
  // passed 0 < timeout, infra_error 1 < unsupported 2 < crashed, wrong_output, oom 3.
  // -1: says nothing about the config (cancelled, skipped).
  int severity;
  bool judged;      // a deterministic finding about the config on its hardware: reusable, prunes
  bool reported;    // a worker may report it as a trial's result
  bool rule;        // a suite's signature rule may assign it (the scheduler's own never)
  // Among specific findings from one process, which verdict is the cause: a GPU that lacks the
  // code (unsupported) or the memory (oom) makes later launches fail, never the other way round.
  // Higher wins; the classifier reads this instead of keeping a ranking of its own. 0: never a cause.
  int cause_rank;
};

// The entry of `v` in Verdicts(). Thread-safe: static data.
const VerdictInfo& Info(Verdict v);
// "wrong_output": the SQL/JSON spelling of `v`; static storage.
std::string_view Name(Verdict v);
// The verdict spelled `name`, or nullopt for anything else (including "").
std::optional<Verdict> ParseVerdict(std::string_view name);
// Name(*v), or "" for none (a trial not done yet): for the JSON and CSV that write "" there.
inline std::string_view NameOr(const std::optional<Verdict>& v) { return v ? Name(*v) : std::string_view(); }
// "queued", "leased", "running", "done": the SQL/JSON spelling of `s`; static storage.
std::string_view Name(TrialState s);
// The state spelled `name`, or nullopt.
std::optional<TrialState> ParseTrialState(std::string_view name);
// "online", "draining", "offline", "quarantined": the SQL/JSON spelling of `s`; static storage.
std::string_view Name(NodeState s);
// The node state spelled `name`, or nullopt.
std::optional<NodeState> ParseNodeState(std::string_view name);
// "running", "finished", "cancelled": the SQL/JSON spelling of `s`; static storage.
std::string_view Name(SweepState s);
// The sweep state spelled `name`, or nullopt.
std::optional<SweepState> ParseSweepState(std::string_view name);
// "grid", "bisect": the SQL/JSON spelling of `k`; static storage.
std::string_view Name(SweepKind k);
// The sweep kind spelled `name`, or nullopt.
std::optional<SweepKind> ParseSweepKind(std::string_view name);
// Every node state, in display order. Static storage.
const std::vector<NodeState>& NodeStates();
// nlohmann would write an enum as its number: the JSON edge spells a verdict or state with Name()
// and reads it with Parse*, so converting one implicitly does not compile.
void to_json(nlohmann::json&, Verdict) = delete;
void to_json(nlohmann::json&, TrialState) = delete;
void to_json(nlohmann::json&, NodeState) = delete;
void to_json(nlohmann::json&, SweepState) = delete;
void to_json(nlohmann::json&, SweepKind) = delete;
void from_json(const nlohmann::json&, Verdict&) = delete;
void from_json(const nlohmann::json&, TrialState&) = delete;
void from_json(const nlohmann::json&, NodeState&) = delete;
void from_json(const nlohmann::json&, SweepState&) = delete;
void from_json(const nlohmann::json&, SweepKind&) = delete;
// GoogleTest prints a verdict or state by its name (found by ADL). Writes to *os; thread-safe.
void PrintTo(Verdict v, std::ostream* os);
void PrintTo(TrialState s, std::ostream* os);
void PrintTo(NodeState s, std::ostream* os);
void PrintTo(SweepState s, std::ostream* os);
void PrintTo(SweepKind k, std::ostream* os);

// Every verdict, in the order tables, columns and legends show them. Never empty; static storage.
const std::vector<VerdictInfo>& Verdicts();
// The verdict called `name` (a pointer into Verdicts(), valid for the whole run), or nullptr.
const VerdictInfo* FindVerdict(std::string_view name);
// True if `name` is a verdict.
bool IsVerdict(std::string_view name);
// Severity of `name` as in VerdictInfo; -1 for an unknown or empty name.
int VerdictSeverity(std::string_view name);
// One observation of a config on one hardware class: its verdict (none yet: nullopt), when it
// finished (ms) and its trial.
struct Observation {
  std::optional<Verdict> verdict;
  int64_t at = 0, trial = 0;
};
// True if `next` is the verdict to show for the config instead of `shown`: a real verdict over a
// skip or cancel, else the later one by finish time, then by trial id. Every view of "a config's
// latest verdict" (the cells index, the matrix over trials) decides by this one rule, so they agree
// whatever order the results were reported in.
bool Supersedes(const Observation& next, const Observation& shown);
// Names of the verdicts for which `pick` is true (all when null), in display order.
std::vector<std::string> VerdictNames(bool (*pick)(const VerdictInfo&) = nullptr);
// "a, b, c": for error messages that list the allowed values.
std::string JoinNames(const std::vector<std::string>& names);
// The whole vocabulary as JSON (what the dashboard loads): {"verdicts": [{name, label, family,
// severity, judged, reported, rule, cause_rank}, ...]}.
nlohmann::json VocabularyJson();

}  // namespace gauntlet
