// A server stage's differential reference (SUITE_FORMAT.md "Differential validation"): the config
// whose smoke answers every other config of the suite is compared with, the top-k depth of that
// comparison and the logprob tolerance, which may depend on one parameter (the dtype).
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/suite.h"
#include "core/sweep.h"

namespace gauntlet {

// Every function here is pure and thread-safe.

// `smoke.reference` of a server stage, parsed. A plain value.
struct SmokeReference {
  std::string stage;  // the server stage that declares it
  Config config;      // parameter -> value: what the reference config sets; the rest is the trial's
  int top_k = 5;      // logprobs asked for per position, and the depth a divergence is excused at
  std::string tolerance_by;             // a parameter name, or empty: one tolerance for all
  std::map<std::string, double> tolerance;  // tolerance_by's value -> |Δ logprob| allowed
  // For values not in `tolerance` ("*" in the suite, or the plain number); unset: the defaults below.
  std::optional<double> default_tolerance;
};

// The logprob tolerances a suite gets when it names none (SUITE_FORMAT.md "Differential
// validation"). Against a reference of the trial's own dtype the two backends compute the same
// function at the same precision, so only accumulation order differs: SGLang's own model tests hold
// HF and SGLang logprobs to 5e-2 in bf16. Across dtypes (a bf16 trial against an fp32 reference)
// rounding alone moves logprobs by tenths.
inline constexpr double kSameDtypeTolerance = 0.05;
inline constexpr double kCrossDtypeTolerance = 0.5;

// The tolerance a trial is held to and where it came from: "suite" (logprob_tolerance names it),
// "default: same dtype" or "default: other dtype".
struct ToleranceChoice {
  double value = kSameDtypeTolerance;
  std::string basis;
};

// The smoke prompts of a server stage: `smoke` itself when it is a list, `smoke.prompts` when it is
// an object (the form that can carry a reference); an empty list otherwise.
nlohmann::json SmokePrompts(const nlohmann::json& stage);

// Validates `smoke.reference` (field `f`) against the suite's parameters (`params`; nullptr skips
// the checks that need them, as on a worker that has the definition only).
Result<SmokeReference> ParseSmokeReference(const nlohmann::json& ref, const std::string& stage_name,
                                           const std::vector<ParamSpec>* params, const std::string& f);

// The reference of a suite definition (its one server stage that declares one), or nullopt when it
// declares none or the declaration does not parse (the daemon refused such suites already).
std::optional<SmokeReference> SuiteSmokeReference(const nlohmann::json& definition);

// `c` with the reference's values put in: the config whose trial on the same hardware class is the
// reference for a trial of config `c`.
Config ReferenceConfigFor(const SmokeReference& r, const Config& c);
// True when `c` is a reference config itself (every value the reference sets matches).
bool IsReferenceConfig(const SmokeReference& r, const Config& c);
// The logprob tolerance for a trial of config `c`: the suite's for c's value of tolerance_by, else
// its "*" (or plain number); with none, kSameDtypeTolerance when the reference has c's own dtype
// (the reference config leaves the dtype parameter alone or sets c's value; the dtype parameter is
// tolerance_by, else one named "dtype"), kCrossDtypeTolerance when it sets another.
ToleranceChoice ChooseTolerance(const SmokeReference& r, const Config& c);
// ChooseTolerance(r, c).value.
double ToleranceFor(const SmokeReference& r, const Config& c);

}  // namespace gauntlet
