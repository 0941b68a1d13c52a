// Declared support: what a framework's docs or code claim about which parameter values work on
// which hardware (a published support table), kept beside a suite so that its runs can be held
// against it (core/drift.h). Pure; thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/suite.h"
#include "core/sweep.h"

namespace gauntlet {

// One claim: configs whose parameters take one of the `when` values, on hardware matching one of
// `hardware`'s alternatives, are (not) supported.
struct DeclaredRule {
  std::map<std::string, std::set<std::string>> when;  // parameter -> accepted values; empty: every config
  std::vector<std::string> hardware;                   // alternatives ("sm_90", "H200", "*")
  bool supported = true;
  std::string note;
};

struct Declared {
  std::string url, version;  // where the claims come from (docs page, source file) and of which release
  std::vector<DeclaredRule> rules;
};

// Bounds of a declaration (docs/API.md "Declared support"): refused above them.
inline constexpr size_t kMaxDeclaredRules = 2000;
inline constexpr size_t kMaxDeclaredText = 2048;  // url, version, note, a hardware pattern

// Parses {"source": {"url", "version"}, "rules": [{"when": {P: V | [V...]}, "hardware": "sm_90|*",
// "supported": bool, "note"}]} against `suite`: every `when` name is a parameter and every value one
// it accepts. Errors are Invalid naming the field ("rules[3].when.backend").
Result<Declared> ParseDeclared(const nlohmann::json& j, const Suite& suite);
nlohmann::json DeclaredJson(const Declared& d);  // the canonical form ParseDeclared reads

// True when `pattern` (one alternative) matches hardware class `hardware`: "*" matches every class;
// otherwise the pattern appears in the class text, case-insensitively ("sm_90" in "NVIDIA H200 ×1
// (sm_90)", "h200" too).
bool HardwareMatches(const std::string& pattern, const std::string& hardware);

// The first rule that covers `config` on `hardware`, or nullptr (first match wins, as in a
// support table read top to bottom). Points into `d`.
const DeclaredRule* MatchDeclared(const Declared& d, const Config& config, const std::string& hardware);

}  // namespace gauntlet
