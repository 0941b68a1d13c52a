#include "core/declared.h"

#include <algorithm>

namespace gauntlet {
using nlohmann::json;

namespace {

Result<std::string> BoundedText(const json& v, const std::string& field, bool required) {
  if (v.is_null() && !required) return std::string();
  if (!v.is_string()) return Status::Invalid("must be a string", field);
  std::string s = v.get<std::string>();
  if (required && s.empty()) return Status::Invalid("must not be empty", field);
  if (s.size() > kMaxDeclaredText)
    return Status::Invalid("is longer than " + std::to_string(kMaxDeclaredText) + " bytes", field);
  return s;
}

Status ParseWhen(const json& w, const Suite& suite, const std::string& field, DeclaredRule* r) {
  if (!w.is_object()) return Status::Invalid("must be an object of parameter: value or [values]", field);
  for (auto& [name, v] : w.items()) {
    const ParamSpec* p = suite.Param(name);
    if (!p) return Status::Invalid("'" + name + "' is not a parameter of " + suite.name, field + "." + name);
    std::vector<json> values = v.is_array() ? std::vector<json>(v.begin(), v.end()) : std::vector<json>{v};
    if (values.empty()) return Status::Invalid("names no value", field + "." + name);
    for (const auto& x : values) {
      auto s = ScalarString(x);
      if (!s || !p->Accepts(*s))
        return Status::Invalid("'" + (s ? *s : x.dump()) + "' is not a value of " + name, field + "." + name);
      r->when[name].insert(*s);
    }
  }
  return Status::Ok();
}

Result<DeclaredRule> ParseRule(const json& j, const Suite& suite, const std::string& f) {
  if (!j.is_object()) return Status::Invalid("must be an object", f);
  for (auto& [k, v] : j.items())
    if (k != "when" && k != "hardware" && k != "supported" && k != "note")
      return Status::Invalid("unknown field (when, hardware, supported, note)", f + "." + k);
  DeclaredRule r;
  if (j.contains("when"))
    if (auto s = ParseWhen(j["when"], suite, f + ".when", &r); !s.ok()) return s;
  auto hw = BoundedText(j.value("hardware", json("*")), f + ".hardware", true);
  if (!hw.ok()) return hw.status();
  size_t i = 0;
  while (i <= hw->size()) {
    size_t bar = hw->find('|', i);
    if (bar == std::string::npos) bar = hw->size();
    if (bar == i) return Status::Invalid("has an empty alternative", f + ".hardware");
    r.hardware.push_back(hw->substr(i, bar - i));
    i = bar + 1;
  }
  if (!j.contains("supported") || !j["supported"].is_boolean()) return Status::Invalid("true or false is required", f + ".supported");
  r.supported = j["supported"].get<bool>();
  auto note = BoundedText(j.value("note", json()), f + ".note", false);
  if (!note.ok()) return note.status();
  r.note = *note;
  return r;
}

}  // namespace

Result<Declared> ParseDeclared(const json& j, const Suite& suite) {
  if (!j.is_object()) return Status::Invalid("must be an object with source and rules", "");
  for (auto& [k, v] : j.items())
    if (k != "source" && k != "rules") return Status::Invalid("unknown field (source, rules)", k);
  Declared d;
  const json src = j.value("source", json());
  if (!src.is_object()) return Status::Invalid("an object with the url (and version) the claims come from is required", "source");
  auto url = BoundedText(src.value("url", json()), "source.url", true);
  if (!url.ok()) return url.status();
  auto version = BoundedText(src.value("version", json()), "source.version", false);
  if (!version.ok()) return version.status();
  d.url = *url;
  d.version = *version;
  const json rules = j.value("rules", json());
  if (!rules.is_array()) return Status::Invalid("an array of rules is required", "rules");
  if (rules.size() > kMaxDeclaredRules)
    return Status::Invalid("more than " + std::to_string(kMaxDeclaredRules) + " rules", "rules");
  for (size_t i = 0; i < rules.size(); ++i) {
    auto r = ParseRule(rules[i], suite, "rules[" + std::to_string(i) + "]");
    if (!r.ok()) return r.status();
    d.rules.push_back(std::move(*r));
  }
  return d;
}

json DeclaredJson(const Declared& d) {
  json rules = json::array();
  for (const auto& r : d.rules) {
    json when = json::object();
    for (auto& [k, vs] : r.when) when[k] = json(std::vector<std::string>(vs.begin(), vs.end()));
    std::string hw;
    for (auto& h : r.hardware) hw += (hw.empty() ? "" : "|") + h;
    json rule = {{"when", when}, {"hardware", hw}, {"supported", r.supported}};
    if (!r.note.empty()) rule["note"] = r.note;
    rules.push_back(std::move(rule));
  }
  return {{"source", {{"url", d.url}, {"version", d.version}}}, {"rules", rules}};
}

bool HardwareMatches(const std::string& pattern, const std::string& hardware) {
  if (pattern == "*") return true;
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  return lower(hardware).find(lower(pattern)) != std::string::npos;
}

const DeclaredRule* MatchDeclared(const Declared& d, const Config& config, const std::string& hardware) {
  for (const auto& r : d.rules) {
    bool hw = false;
    for (const auto& h : r.hardware) hw = hw || HardwareMatches(h, hardware);
    if (!hw) continue;
    bool all = true;
    for (const auto& [name, values] : r.when) {
      auto it = config.find(name);
      all = all && it != config.end() && values.count(it->second);
    }
    if (all) return &r;
  }
  return nullptr;
}

}  // namespace gauntlet
