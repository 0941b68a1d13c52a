#include "core/dispatch.h"

#include <algorithm>
#include <vector>

#include "core/kernel_families.h"
#include "core/user_regex.h"

namespace gauntlet {
using nlohmann::json;

Status CheckDispatchSpec(const json& dispatch, const std::string& field, const Suite& suite) {
  if (!dispatch.is_object() || dispatch.empty())
    return Status::Invalid("dispatch is an object of parameter -> {value: kernel-name pattern}", field);
  for (auto& [param, values] : dispatch.items()) {
    const std::string pf = field + "." + param;
    const ParamSpec* p = suite.Param(param);
    if (!p) return Status::Invalid("names no parameter of the suite", pf);
    if (!values.is_object() || values.empty())
      return Status::Invalid("an object of value -> RE2 pattern over kernel names", pf);
    for (auto& [value, pattern] : values.items()) {
      const std::string vf = pf + "." + value;
      if (!p->Accepts(value)) return Status::Invalid("value '" + value.substr(0, 64) + "' is not declared for " + param, vf);
      if (!pattern.is_string() || pattern.get<std::string>().empty())
        return Status::Invalid("a non-empty RE2 pattern over kernel names", vf);
      auto re = UserRegex::Compile(pattern.get<std::string>());
      if (!re.ok()) return Status::Invalid(re.status().message(), vf);
    }
  }
  return Status::Ok();
}

std::string_view Name(DispatchCheck::Kind k) {
  switch (k) {
    case DispatchCheck::Kind::kVerified: return "verified";
    case DispatchCheck::Kind::kFallback: return "fallback";
    case DispatchCheck::Kind::kUnverified: return "unverified";
    case DispatchCheck::Kind::kNone: break;
  }
  return "none";
}

namespace {

// The record's kernel names by GPU time, most first (so "matched" names the kernel that mattered).
std::vector<std::string> NamesByTime(const KernelRecord& rec) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (auto& [name, k] : rec.kernels) v.emplace_back(-k.total_ns, name);
  std::sort(v.begin(), v.end());
  std::vector<std::string> out;
  for (auto& [ns, name] : v) out.push_back(name);
  return out;
}

std::string WhyIncomplete(const KernelRecord& rec) {
  if (rec.processes == 0) return "no kernel record (no process initialised CUDA under the recorder)";
  if (!rec.problems.empty()) return rec.problems.front();
  if (rec.incomplete > 0) return std::to_string(rec.incomplete) + " process(es) ended before writing a complete record";
  if (rec.dropped > 0) return "CUPTI dropped " + std::to_string(rec.dropped) + " record(s)";
  if (rec.names_dropped > 0) return std::to_string(rec.names_dropped) + " launch(es) past the kernel-name cap";
  return "";
}

}  // namespace

DispatchCheck JudgeDispatch(const json& dispatch, const std::map<std::string, std::string>& config,
                            const KernelRecord& record) {
  DispatchCheck out;
  if (!dispatch.is_object()) return out;
  const std::vector<std::string> names = NamesByTime(record);
  const std::string family = CarryingFamily(record.kernels);
  DispatchCheck verified;
  for (auto& [param, values] : dispatch.items()) {
    auto c = config.find(param);
    if (c == config.end() || !values.is_object() || !values.contains(c->second) || !values[c->second].is_string())
      continue;
    DispatchCheck d;
    d.param = param;
    d.value = c->second;
    d.pattern = values[c->second].get<std::string>();
    d.family = family;
    auto re = UserRegex::Compile(d.pattern);
    if (!re.ok()) {
      d.kind = DispatchCheck::Kind::kUnverified;
      d.reason = "pattern does not compile: " + re.status().message();
      return d;
    }
    for (auto& n : names)
      if (re->Search(n)) {
        d.matched = n;
        break;
      }
    if (!d.matched.empty()) {
      d.kind = DispatchCheck::Kind::kVerified;
      if (verified.kind == DispatchCheck::Kind::kNone) verified = d;
      continue;
    }
    // No match: only a complete record proves the expected kernels never ran.
    if (!record.Complete()) {
      d.kind = DispatchCheck::Kind::kUnverified;
      d.reason = WhyIncomplete(record);
      return d;
    }
    d.kind = DispatchCheck::Kind::kFallback;
    if (d.family.empty()) d.family = "no kernels";
    return d;
  }
  return verified;
}

json DispatchCheckJson(const DispatchCheck& c) {
  json j = {{"status", Name(c.kind)}};
  if (c.kind == DispatchCheck::Kind::kNone) return j;
  j["param"] = c.param;
  j["value"] = c.value;
  j["pattern"] = c.pattern;
  if (!c.matched.empty()) j["matched"] = c.matched;
  if (!c.family.empty()) j["family"] = c.family;
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

}  // namespace gauntlet
