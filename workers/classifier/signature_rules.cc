// ParseSignatureRules: validation of a suite's "signatures" array (declared in classifier.h).
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include "workers/classifier/classifier.h"

namespace gauntlet {
namespace {

// Verdicts a rule may assign. "passed" marks benign lines; "cancelled" and "skipped" belong to the
// scheduler, never to a log line.
const std::set<std::string>& RuleVerdicts() {
  static const std::set<std::string> v = {"passed", "unsupported", "crashed", "wrong_output",
                                          "timeout", "oom", "infra_error"};
  return v;
}

[[noreturn]] void Bad(size_t i, const std::string& field, const std::string& why) {
  std::string where = "signatures[" + std::to_string(i) + "]";
  if (!field.empty()) where += "." + field;
  throw std::invalid_argument(where + ": " + why);
}

}  // namespace

std::vector<SignatureRule> ParseSignatureRules(const nlohmann::json& arr) {
  std::vector<SignatureRule> out;
  if (arr.is_null()) return out;
  if (!arr.is_array()) throw std::invalid_argument("signatures: must be an array");
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& e = arr[i];
    if (!e.is_object()) Bad(i, "", "must be an object");
    for (const auto& [k, v] : e.items()) {
      if (k != "match" && k != "regex" && k != "verdict" && k != "signature" && k != "description" &&
          k != "comment")
        Bad(i, k, "unknown field (expected match, regex, verdict, signature, description)");
    }
    SignatureRule r;
    if (!e.contains("match") || !e["match"].is_string()) Bad(i, "match", "required string");
    r.match = e["match"].get<std::string>();
    if (r.match.empty()) Bad(i, "match", "must not be empty");
    if (e.contains("regex")) {
      if (!e["regex"].is_boolean()) Bad(i, "regex", "must be a boolean");
      r.regex = e["regex"].get<bool>();
    }
    if (!e.contains("verdict") || !e["verdict"].is_string()) Bad(i, "verdict", "required string");
    r.verdict = e["verdict"].get<std::string>();
    if (!RuleVerdicts().count(r.verdict))
      Bad(i, "verdict",
          "'" + r.verdict + "' is not one of passed, unsupported, crashed, wrong_output, timeout, oom, infra_error");
    if (e.contains("signature")) {
      if (!e["signature"].is_string()) Bad(i, "signature", "must be a string");
      r.signature = e["signature"].get<std::string>();
      if (r.signature.size() > 200) Bad(i, "signature", "longer than 200 characters");
    }
    if (r.regex) {
      try {
        std::regex re(r.match, std::regex::ECMAScript);
      } catch (const std::regex_error& err) {
        Bad(i, "match", std::string("invalid regex: ") + err.what());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gauntlet
