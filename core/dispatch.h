// A stage's dispatch expectations (SUITE_FORMAT.md "dispatch"): which kernels each parameter value
// must produce, `"dispatch": {"backend": {"flash": "RE2 over kernel names", ...}}`, and the check of
// a recorded run against them. The check is what turns a run that passed on the wrong backend into
// the verdict `fallback`.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/kernel_record.h"
#include "core/status.h"
#include "core/suite.h"

namespace gauntlet {

// Pure and thread-safe.

// Validates a stage's "dispatch" (field name `field`, e.g. "stages[0].dispatch") against the
// suite's parameters: an object of parameter -> object of value -> RE2 pattern; an unknown
// parameter, a value the parameter does not accept, or a pattern that does not compile is Invalid
// naming the field ("stages[0].dispatch.backend.flsh").
Status CheckDispatchSpec(const nlohmann::json& dispatch, const std::string& field, const Suite& suite);

// What the check found for one trial's stage.
struct DispatchCheck {
  enum class Kind { kNone, kVerified, kFallback, kUnverified };
  Kind kind = Kind::kNone;  // kNone: no expectation applies to this config
  std::string param, value, pattern;  // the expectation judged (the failing one for a fallback)
  std::string matched;  // verified: the first kernel (by time) that matched
  std::string family;   // the family that carried the run (fallback; also set when verified)
  std::string reason;   // unverified: why the record cannot decide
};

// Checks `record` against `dispatch` for `config`. Every expectation that applies (the config's
// value of a declared parameter has a pattern) must be met by at least one recorded kernel name
// (RE2 search). A match anywhere is proof even in an incomplete record; an absence is proof only
// in a complete one (KernelRecord::Complete): otherwise kUnverified ("dispatch unverified"), never
// kFallback. A pattern that does not compile (the suite was validated, so only a definition that
// bypassed it) is kUnverified too.
DispatchCheck JudgeDispatch(const nlohmann::json& dispatch, const std::map<std::string, std::string>& config,
                            const KernelRecord& record);
// "verified", "fallback", "unverified", "none". Static storage.
std::string_view Name(DispatchCheck::Kind k);
// The stage summary's "dispatch" entry: {"status", "param", "value", "pattern", "matched"|"family"|"reason"}.
nlohmann::json DispatchCheckJson(const DispatchCheck& c);

}  // namespace gauntlet
