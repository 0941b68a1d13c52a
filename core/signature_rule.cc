#include "core/signature_rule.h"

#include "core/user_regex.h"
#include "core/verdict.h"

namespace gauntlet {
namespace {

Status Bad(size_t i, const std::string& field, const std::string& why) {
  std::string where = "signatures[" + std::to_string(i) + "]";
  if (!field.empty()) where += "." + field;
  return Status::Invalid(why, where);
}

Result<SignatureRule> ParseRule(size_t i, const nlohmann::json& e) {
  if (!e.is_object()) return Bad(i, "", "must be an object");
  for (const auto& [k, v] : e.items())
    if (k != "match" && k != "regex" && k != "verdict" && k != "signature" && k != "description" && k != "comment")
      return Bad(i, k, "unknown field (expected match, regex, verdict, signature, description)");
  SignatureRule r;
  if (!e.contains("match") || !e["match"].is_string()) return Bad(i, "match", "required string");
  r.match = e["match"].get<std::string>();
  if (r.match.empty()) return Bad(i, "match", "must not be empty");
  if (e.contains("regex")) {
    if (!e["regex"].is_boolean()) return Bad(i, "regex", "must be a boolean");
    r.regex = e["regex"].get<bool>();
  }
  static const std::vector<std::string> allowed = VerdictNames([](const VerdictInfo& v) { return v.rule; });
  if (!e.contains("verdict") || !e["verdict"].is_string())
    return Bad(i, "verdict", "required string, one of " + JoinNames(allowed));
  const std::string name = e["verdict"].get<std::string>();
  const std::optional<Verdict> v = ParseVerdict(name);
  if (!v || !Info(*v).rule) return Bad(i, "verdict", "'" + name + "' is not one of " + JoinNames(allowed));
  r.verdict = *v;
  if (e.contains("signature")) {
    if (!e["signature"].is_string()) return Bad(i, "signature", "must be a string");
    r.signature = e["signature"].get<std::string>();
    if (r.signature.size() > 200) return Bad(i, "signature", "longer than 200 characters");
  }
  if (r.regex) {
    if (auto re = UserRegex::Compile(r.match); !re.ok()) return Bad(i, "match", re.status().message());
  }
  return r;
}

}  // namespace

Result<std::vector<SignatureRule>> ParseSignatureRules(const nlohmann::json& arr) {
  std::vector<SignatureRule> out;
  if (arr.is_null()) return out;
  if (!arr.is_array()) return Status::Invalid("must be an array", "signatures");
  for (size_t i = 0; i < arr.size(); ++i) {
    auto r = ParseRule(i, arr[i]);
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace gauntlet
