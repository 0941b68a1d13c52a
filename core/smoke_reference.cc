#include "core/smoke_reference.h"

#include <cmath>

namespace gauntlet {
using nlohmann::json;

json SmokePrompts(const json& stage) {
  if (!stage.is_object() || !stage.contains("smoke")) return json::array();
  const json& sm = stage["smoke"];
  if (sm.is_array()) return sm;
  if (sm.is_object() && sm.contains("prompts") && sm["prompts"].is_array()) return sm["prompts"];
  return json::array();
}

namespace {

const ParamSpec* FindParam(const std::vector<ParamSpec>* params, const std::string& name) {
  if (!params) return nullptr;
  for (auto& p : *params)
    if (p.name == name) return &p;
  return nullptr;
}

Status CheckTolerance(const json& t, const std::string& f, double* out) {
  if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0)
    return Status::Invalid("a logprob tolerance is a number >= 0", f);
  *out = t.get<double>();
  return Status::Ok();
}

}  // namespace

Result<SmokeReference> ParseSmokeReference(const json& ref, const std::string& stage_name,
                                           const std::vector<ParamSpec>* params, const std::string& f) {
  SmokeReference r;
  r.stage = stage_name;
  if (!ref.is_object()) return Status::Invalid("reference is an object", f);
  for (auto& [k, v] : ref.items())
    if (k != "config" && k != "top_k" && k != "tolerance_by" && k != "logprob_tolerance" && k != "comment")
      return Status::Invalid("unknown field (expected one of config, top_k, tolerance_by, logprob_tolerance, comment)",
                             f + "." + k);
  if (!ref.contains("config") || !ref["config"].is_object() || ref["config"].empty())
    return Status::Invalid("config is a non-empty object of parameter values", f + ".config");
  for (auto& [k, v] : ref["config"].items()) {
    auto s = ScalarString(v);
    if (!s) return Status::Invalid("a parameter value is a string, number or boolean", f + ".config." + k);
    if (params) {
      const ParamSpec* p = FindParam(params, k);
      if (!p) return Status::Invalid("names no parameter", f + ".config." + k);
      if (!p->Accepts(*s)) return Status::Invalid("value '" + *s + "' is not declared for " + k, f + ".config." + k);
    }
    r.config[k] = *s;
  }
  if (ref.contains("top_k")) {
    const json& k = ref["top_k"];
    if (!k.is_number_integer() || k.get<int>() < 1 || k.get<int>() > 20)
      return Status::Invalid("top_k is an integer from 1 to 20", f + ".top_k");
    r.top_k = k.get<int>();
  }
  if (ref.contains("tolerance_by")) {
    if (!ref["tolerance_by"].is_string()) return Status::Invalid("tolerance_by names a parameter", f + ".tolerance_by");
    r.tolerance_by = ref["tolerance_by"];
    if (params && !FindParam(params, r.tolerance_by))
      return Status::Invalid("tolerance_by names no parameter", f + ".tolerance_by");
  }
  if (ref.contains("logprob_tolerance")) {
    const json& t = ref["logprob_tolerance"];
    const std::string ft = f + ".logprob_tolerance";
    if (t.is_object()) {
      if (r.tolerance_by.empty())
        return Status::Invalid("a tolerance per value needs tolerance_by (the parameter it is keyed on)", ft);
      for (auto& [k, v] : t.items()) {
        double d = 0;
        if (Status s = CheckTolerance(v, ft + "." + k, &d); !s.ok()) return s;
        if (k == "*") {
          r.default_tolerance = d;
          continue;
        }
        const ParamSpec* p = FindParam(params, r.tolerance_by);
        if (params && p && !p->Accepts(k))
          return Status::Invalid("value '" + k + "' is not declared for " + r.tolerance_by, ft + "." + k);
        r.tolerance[k] = d;
      }
    } else {
      double d = 0;
      if (Status s = CheckTolerance(t, ft, &d); !s.ok()) return s;
      r.default_tolerance = d;
    }
  }
  return r;
}

std::optional<SmokeReference> SuiteSmokeReference(const json& definition) {
  if (!definition.is_object() || !definition.contains("stages") || !definition["stages"].is_array())
    return std::nullopt;
  for (auto& st : definition["stages"]) {
    if (!st.is_object() || st.value("kind", "") != "server" || !st.contains("smoke") || !st["smoke"].is_object() ||
        !st["smoke"].contains("reference"))
      continue;
    auto r = ParseSmokeReference(st["smoke"]["reference"], st.value("name", ""), nullptr, "");
    if (r.ok()) return std::move(*r);
    return std::nullopt;
  }
  return std::nullopt;
}

Config ReferenceConfigFor(const SmokeReference& r, const Config& c) {
  Config out = c;
  for (auto& [k, v] : r.config) out[k] = v;
  return out;
}

bool IsReferenceConfig(const SmokeReference& r, const Config& c) {
  for (auto& [k, v] : r.config) {
    auto it = c.find(k);
    if (it == c.end() || it->second != v) return false;
  }
  return true;
}

ToleranceChoice ChooseTolerance(const SmokeReference& r, const Config& c) {
  const std::string dtype_param = r.tolerance_by.empty() ? "dtype" : r.tolerance_by;
  auto it = c.find(dtype_param);
  if (!r.tolerance_by.empty() && it != c.end())
    if (auto t = r.tolerance.find(it->second); t != r.tolerance.end()) return {t->second, "suite"};
  if (r.default_tolerance) return {*r.default_tolerance, "suite"};
  // The reference is the trial's own config with the reference's values put in: it has the trial's
  // dtype unless it sets the dtype parameter to another value.
  auto set = r.config.find(dtype_param);
  const bool same = set == r.config.end() || (it != c.end() && it->second == set->second);
  return same ? ToleranceChoice{kSameDtypeTolerance, "default: same dtype"}
              : ToleranceChoice{kCrossDtypeTolerance, "default: other dtype"};
}

double ToleranceFor(const SmokeReference& r, const Config& c) { return ChooseTolerance(r, c).value; }

}  // namespace gauntlet
