// The immutable half of a Classifier: the Aho-Corasick automaton over every built-in needle, the
// classifier's own needles and the suite's literals, and the compiled suite rules. One engine per
// distinct rule set is shared by every Classifier in the process. Thread-safe once built.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/signature_rule.h"
#include "core/user_regex.h"
#include "classifier/aho_corasick.h"
#include "classifier/builtin_rules.h"

namespace gauntlet::classifier {

struct CompiledRule {
  SignatureRule rule;
  std::optional<UserRegex> re;
  bool every_line = false;  // regex without a provable literal: tried on every line
  uint32_t needle = 0;
  std::string signature;
};

// Immutable per Classifier: the automaton and the compiled suite rules.
struct Engine {
  const BuiltinRules* builtin = &DefaultBuiltinRules();
  std::vector<CompiledRule> suite;
  std::optional<AhoCorasick> ac;
  uint32_t builtin_count = 0;
  uint32_t traceback_needle = 0;
  uint32_t spawn_needle = 0;
  uint32_t root_cause_needle = 0;
  // The test runners' needles (test_runner.h), ids [runner_base, runner_base + runner_of.size()):
  // runner_of[id - runner_base] is the runner's index in TestRunners().
  uint32_t runner_base = 0;
  std::vector<uint32_t> runner_of;
  bool any_every_line = false;
};

// The engine for these rules, built once and cached (at most 32 rule sets); shared ownership.
std::shared_ptr<const Engine> SharedEngine(std::vector<SignatureRule> suite_rules);

}  // namespace gauntlet::classifier
