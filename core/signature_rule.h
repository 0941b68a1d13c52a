// A suite's signature rules (docs/DESIGN.md "Suite format", "signatures"): the one parser and validator,
// run by the daemon when a suite is registered and by the worker before it classifies, so the
// daemon never accepts a rule that the worker would then refuse or drop.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/status.h"
#include "core/verdict.h"

namespace gauntlet {

// One entry of a suite's "signatures" array. `match` is a case-sensitive substring, or an
// ECMAScript regex searched in each line when `regex` is set. An empty `signature` means
// "<verdict>:<match>". Verdict kPassed marks matching lines as benign (built-in rules skip them).
struct SignatureRule {
  std::string match;
  bool regex = false;
  Verdict verdict = Verdict::kCrashed;  // always one whose VerdictInfo::rule is set
  std::string signature;
};

// Parses a suite's "signatures" value (null: no rules). Invalid names the field at fault
// ("signatures[2].verdict") with the reason. Pure; thread-safe.
Result<std::vector<SignatureRule>> ParseSignatureRules(const nlohmann::json& arr);

}  // namespace gauntlet
