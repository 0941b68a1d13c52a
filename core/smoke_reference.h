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
  double default_tolerance = 0.5;       // for values not in `tolerance` ("*" in the suite)
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
// The logprob tolerance for a trial of config `c`.
double ToleranceFor(const SmokeReference& r, const Config& c);

}  // namespace gauntlet
