// The suite model (docs/DESIGN.md "Suite format"): parsing and validation of a suite definition.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/user_regex.h"

namespace gauntlet {

// Every function here is pure and thread-safe.

// One parameter a suite declares.
struct ParamSpec {
  std::string name;
  std::vector<std::string> values;     // declared values, in order; may be empty when pattern is set
  std::optional<std::string> pattern;  // a regex (core/user_regex.h) a free value must fully match
  std::optional<UserRegex> compiled;   // `pattern` compiled, set by ParseSuite
  std::optional<std::string> def;      // default when a sweep omits the parameter
  // `values` by position, for lookups in constant time (ParseSuite fills it; left empty, the lookups
  // below scan `values`). A suite may declare 100,000 values: a scan per lookup was quadratic.
  std::unordered_map<std::string, int> positions;
  // True if `v` is declared or fully matches the pattern (`compiled`, else compiled on this call; a
  // pattern that does not compile accepts nothing). Values over kMaxPatternValue never match.
  bool Accepts(const std::string& v) const;
  // `v`'s position in `values`, or -1 when it is not declared.
  int IndexOf(const std::string& v) const;
};

// What a suite (or a sweep target) asks of a node.
struct Requirements {
  int gpus = 0;                         // 0: runs on any node, CPU-only included
  std::vector<std::string> arch;        // "sm_90", "sm_120"; empty: any
  double min_memory_gb = 0;             // per GPU
  std::map<std::string, std::string> labels;
};

// The longest a stage's timeout_s may be: a year.
inline constexpr int kMaxStageTimeoutS = 365 * 24 * 3600;

// One stage of a suite, as parsed; the worker reads the rest from `spec`.
struct Stage {
  std::string name;
  std::string kind;  // "command", "server" or "probe"
  int timeout_s = 3600;
  std::vector<std::string> gate_on;
  std::vector<std::string> argv;
  nlohmann::json spec;  // the whole stage object (ready, smoke, bench, env...) for the worker
};

// A parsed, valid suite.
struct Suite {
  int64_t id = 0;  // store id of this version; 0 before it is stored
  std::string name;
  int version = 1;
  std::string description;
  Requirements requires_;
  std::vector<ParamSpec> params;  // in name order (JSON objects keep their keys sorted), not as written
  std::vector<Stage> stages;
  nlohmann::json definition;      // the canonical definition as given
  std::string source_dir;         // folder the suite was loaded from ({suite_dir}); empty if PUT
  std::string bundle;             // SHA-256 of its files' bundle (core/bundle.h); empty if none

  // The parameter called `name`, or nullptr; points into `params` (valid while they are unchanged).
  const ParamSpec* Param(const std::string& name) const;
};

// Placeholders every argv may use besides parameter names (static storage).
inline const std::vector<std::string>& BuiltinPlaceholders() {
  static const std::vector<std::string> k = {"port", "suite_dir", "workdir", "trial_id", "gpus", "node"};
  return k;
}

// A JSON scalar as the string parameters are stored as ("1", "0.5", "true"); nullopt for arrays,
// objects and null.
std::optional<std::string> ScalarString(const nlohmann::json& v);

// Parses and validates a suite; errors name the field at fault (e.g. "stages[1].kind"). The result
// keeps `j` as its definition; id and source_dir are left for the store to fill.
Result<Suite> ParseSuite(const nlohmann::json& j);

// Parses the requirements object shared by suites ("requires") and sweep targets into *out (arch
// values are appended); errors name `field` and the key at fault.
Status ParseRequirements(const nlohmann::json& j, const std::string& field, Requirements* out);

// Returns the placeholder names in an argv element ("{a}-{b}" -> a, b). Only "{identifier}" is a
// placeholder; every other brace is literal text, doubled ones too (an inline JSON line such as
// {"metrics": {"x": {"value": 1}}} stays exactly as written).
std::vector<std::string> PlaceholdersIn(const std::string& s);

// Substitutes "{name}" where `vars` has name; every other character, brace or not, is kept as
// written. Never goes through a shell. Pure.
std::string Substitute(const std::string& s, const std::map<std::string, std::string>& vars);

}  // namespace gauntlet
