// The built-in failure rules: which log lines mean unsupported, crashed, oom, timeout, wrong_output
// or infra_error, and with which signature key. Each rule names the substrings (needles) that make
// a line a candidate; only candidate lines run the rule's predicate. Table and keys:
// docs/CLASSIFIER.md. Immutable after construction; Match is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/basis.h"
#include "core/verdict.h"
#include "classifier/log_line.h"
#include "classifier/traceback.h"

namespace gauntlet::classifier {

// How much a hit says about the root cause; higher wins within a rank.
enum class Tier : int {
  kSecondary = 1,  // consequences: watchdog timeouts, wrapper exceptions, SIGABRT after a C++ throw
  kNccl = 2,       // NCCL WARN lines: real, but often echoed by peers of the failing rank
  kGeneric = 3,    // an uncaught exception or a fatal signal with no more specific rule
  kSpecific = 4,   // a specific fact: no kernel image, illegal memory access, CUDA OOM, arch gate...
};

struct RuleHit {
  std::string_view rule;     // rule name (tests and docs)
  Verdict verdict = Verdict::kCrashed;  // docs/DESIGN.md "Trial lifecycle"
  std::string key;           // the signature on a plain line, and always when `keyed`
  Tier tier = Tier::kSpecific;
  bool keyed = true;           // false: on an exception line the signature is Type:message@frame
  bool strong = false;         // evidence even when the process exited 0 (see docs)
  bool needs_sigkill = false;  // shell "Killed": only evidence when the process died of SIGKILL
  Basis basis = Basis::kMessage;  // a status code's name, or the tool's documented words
};

// What a rule sees of one candidate line.
struct LineContext {
  std::string_view raw;       // the whole line
  std::string_view lower;     // raw, ASCII-lowercased (capped)
  const LogLine* parsed;      // prefixes split off
  const ExceptionLine* exc;   // set when this line ends a Python traceback
  mutable signed char advisory = -1;  // the line's IsAdvisory, computed once (-1: not yet)
};

class BuiltinRules {
 public:
  BuiltinRules();
  // Needles for the prefilter, ids 0..size()-1 (ASCII case-insensitive).
  const std::vector<std::string>& needles() const { return needles_; }
  // First rule (in priority order) that one of the line's needles (`hit_ids`, any order,
  // duplicates allowed; ids >= needles().size() are ignored) names and whose predicate holds.
  std::optional<RuleHit> Match(const std::vector<uint32_t>& hit_ids, const LineContext& ctx) const;

 private:
  struct Rule {
    std::string name;
    std::vector<uint32_t> needle_ids;
    std::function<std::optional<RuleHit>(const LineContext&)> predicate;
    Basis basis = Basis::kMessage;
  };
  // `basis`: what a hit of the rule is read from (core/basis.h), set on every hit it returns.
  void Add(std::string name, std::vector<std::string> needles,
           std::function<std::optional<RuleHit>(const LineContext&)> predicate, Basis basis = Basis::kMessage);
  // The constructor's groups of rules, each adding its own in priority order.
  void AddCompileRules();
  void AddMemoryRules();
  void AddRefusalAndNodeRules();
  void AddMissingToolRule();  // missing_tool_rule.cc
  void AddStatusRule();
  void AddCheckAndCrashRules();
  std::vector<std::string> needles_;
  std::vector<uint32_t> needle_rule_;  // needle id -> index of the rule that owns it
  std::vector<Rule> rules_;
};

// Shared instance (built once, immutable).
const BuiltinRules& DefaultBuiltinRules();

}  // namespace gauntlet::classifier
