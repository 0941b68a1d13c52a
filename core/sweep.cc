#include "core/sweep.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace gauntlet {
using nlohmann::json;

namespace {

Status ParseConfigList(const json& j, const std::string& f, std::vector<Config>* out) {
  if (!j.is_array()) return Status::Invalid("must be a list of objects", f);
  for (size_t i = 0; i < j.size(); ++i) {
    std::string fi = f + "[" + std::to_string(i) + "]";
    if (!j[i].is_object() || j[i].empty()) return Status::Invalid("must be a non-empty object", fi);
    Config c;
    for (auto& [k, v] : j[i].items()) {
      auto s = ScalarString(v);
      if (!s) return Status::Invalid("values are strings or numbers", fi + "." + k);
      c[k] = *s;
    }
    out->push_back(std::move(c));
  }
  return Status::Ok();
}

bool Matches(const Config& c, const Config& partial) {
  for (auto& [k, v] : partial) {
    auto it = c.find(k);
    if (it == c.end() || it->second != v) return false;
  }
  return true;
}
}  // namespace

Result<SweepRequest> ParseSweepRequest(const json& j) {
  SweepRequest r;
  if (!j.is_object()) return Status::Invalid("a sweep is a JSON object", "");
  static const std::set<std::string> kFields = {"suite", "name", "parameters", "include", "exclude", "targets",
                                                "repeats", "priority", "prune", "reuse", "max_trials", "max_attempts",
                                                "confirm_failures", "order", "auto_bisect"};
  for (auto& [k, v] : j.items())
    if (!kFields.count(k)) return Status::Invalid("unknown field", k);
  if (!j.contains("suite") || !j["suite"].is_string() || j["suite"].get<std::string>().empty())
    return Status::Invalid("suite is required", "suite");
  r.suite = j["suite"];
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().size() > 200)
      return Status::Invalid("name is a string of at most 200 characters", "name");
    r.name = j["name"];
  }
  if (j.contains("parameters")) {
    if (!j["parameters"].is_object()) return Status::Invalid("parameters is an object", "parameters");
    for (auto& [k, v] : j["parameters"].items()) {
      std::string f = "parameters." + k;
      json arr = v.is_array() ? v : json::array({v});
      if (arr.empty()) return Status::Invalid("value list is empty", f);
      std::vector<std::string> vals;
      for (size_t i = 0; i < arr.size(); ++i) {
        auto s = ScalarString(arr[i]);
        if (!s) return Status::Invalid("values are strings or numbers", f + "[" + std::to_string(i) + "]");
        if (std::find(vals.begin(), vals.end(), *s) == vals.end()) vals.push_back(*s);
      }
      r.parameters[k] = std::move(vals);
    }
  }
  if (j.contains("include"))
    if (Status s = ParseConfigList(j["include"], "include", &r.include); !s.ok()) return s;
  if (j.contains("exclude"))
    if (Status s = ParseConfigList(j["exclude"], "exclude", &r.exclude); !s.ok()) return s;
  if (j.contains("targets")) {
    if (!j["targets"].is_array()) return Status::Invalid("targets is a list", "targets");
    for (size_t i = 0; i < j["targets"].size(); ++i) {
      std::string f = "targets[" + std::to_string(i) + "]";
      json t = j["targets"][i];
      if (!t.is_object()) return Status::Invalid("a target is an object", f);
      Target target;
      target.raw = t;
      if (t.contains("gpu_name")) {
        if (!t["gpu_name"].is_string()) return Status::Invalid("gpu_name is a string (glob)", f + ".gpu_name");
        target.gpu_name = t["gpu_name"];
        t.erase("gpu_name");
      }
      if (t.contains("cost_per_gpu_hour")) {
        const json& c = t["cost_per_gpu_hour"];
        // Finite: parsed text cannot say infinity or NaN, but a request built in code can.
        if (!c.is_number() || !std::isfinite(c.get<double>()) || c.get<double>() <= 0)
          return Status::Invalid("cost_per_gpu_hour is a finite number greater than 0 (a relative price)",
                                 f + ".cost_per_gpu_hour");
        target.cost_per_gpu_hour = c.get<double>();
        t.erase("cost_per_gpu_hour");
      }
      if (Status s = ParseRequirements(t, f, &target.req); !s.ok()) return s;
      r.targets.push_back(std::move(target));
    }
  }
  if (r.targets.empty()) {
    Target any;
    any.raw = json::object();
    r.targets.push_back(std::move(any));
  }
  auto int_field = [&](const char* k, int64_t lo, int64_t hi, auto* out) -> Status {
    if (!j.contains(k)) return Status::Ok();
    if (!j[k].is_number_integer() || j[k].get<int64_t>() < lo || j[k].get<int64_t>() > hi)
      return Status::Invalid(std::string(k) + " is an integer from " + std::to_string(lo) + " to " + std::to_string(hi), k);
    *out = static_cast<std::remove_reference_t<decltype(*out)>>(j[k].get<int64_t>());
    return Status::Ok();
  };
  if (Status s = int_field("repeats", 1, 1000, &r.repeats); !s.ok()) return s;
  if (Status s = int_field("priority", -1000, 1000, &r.priority); !s.ok()) return s;
  if (Status s = int_field("max_trials", 1, kTrialLimit, &r.max_trials); !s.ok()) return s;
  if (Status s = int_field("max_attempts", 1, 20, &r.max_attempts); !s.ok()) return s;
  if (Status s = int_field("confirm_failures", 0, 10, &r.confirm_failures); !s.ok()) return s;
  for (const char* k : {"prune", "reuse", "auto_bisect"}) {
    if (!j.contains(k)) continue;
    if (!j[k].is_boolean()) return Status::Invalid(std::string(k) + " is true or false", k);
    const std::string name = k;
    (name == "prune" ? r.prune : name == "reuse" ? r.reuse : r.auto_bisect) = j[k].get<bool>();
  }
  if (j.contains("order")) {
    if (!j["order"].is_string() || (j["order"] != "settle" && j["order"] != "grid"))
      return Status::Invalid("order is 'settle' (the trials that settle the most first) or 'grid'", "order");
    r.settle_first = j["order"] == "settle";
  }
  return r;
}

namespace {

// How many configs the sweep can hold at most, without building one: the grid less what the
// excludes remove (counted over value indices, no maps), plus what each include adds. An upper
// bound (an include may repeat a grid config), exact without includes. The counting itself is
// bounded: a grid too large to check against its excludes is refused.
Result<double> CountSweep(const Suite& suite, const SweepRequest& req, const std::vector<std::vector<std::string>>& axes) {
  double grid = 1;
  for (auto& a : axes) grid *= static_cast<double>(a.size());
  double included = 0;
  for (auto& inc : req.include) {
    double n = 1;
    for (size_t i = 0; i < axes.size(); ++i)
      if (!inc.count(suite.params[i].name)) n *= static_cast<double>(axes[i].size());
    included += n;
  }
  if (req.exclude.empty() || grid == 0) return grid + included;
  if (grid > static_cast<double>(kTrialLimit) * 10)
    return Status::Invalid("the grid is too large to expand (" + std::to_string(static_cast<int64_t>(grid)) +
                               " configs before exclude)",
                           "parameters");
  // Each exclude as (axis, value index) pairs; one whose value is not on an axis removes nothing.
  std::vector<std::vector<std::pair<size_t, size_t>>> ex;
  for (auto& e : req.exclude) {
    std::vector<std::pair<size_t, size_t>> pins;
    bool possible = true;
    for (size_t i = 0; i < axes.size() && possible; ++i) {
      auto it = e.find(suite.params[i].name);
      if (it == e.end()) continue;
      auto v = std::find(axes[i].begin(), axes[i].end(), it->second);
      if (v == axes[i].end()) possible = false;
      else pins.emplace_back(i, static_cast<size_t>(v - axes[i].begin()));
    }
    if (possible) ex.push_back(std::move(pins));
  }
  if (grid * static_cast<double>(ex.size() + 1) > 2e8)
    return Status::Invalid("the grid is too large to check against its " + std::to_string(ex.size()) + " excludes",
                           "exclude");
  double kept = 0;
  std::vector<size_t> idx(axes.size(), 0);
  for (;;) {
    bool gone = false;
    for (auto& pins : ex) {
      bool all = true;
      for (auto& [axis, value] : pins) all = all && idx[axis] == value;
      if (all) {
        gone = true;
        break;
      }
    }
    kept += gone ? 0 : 1;
    size_t d = axes.size();
    while (d > 0 && ++idx[d - 1] == axes[d - 1].size()) idx[--d] = 0;
    if (d == 0) break;
  }
  return kept + included;
}

// Checks every named parameter and value of `req` against `suite`, fills `axes` (one list of values
// per suite parameter, in the suite's order) and returns how many configs the grid holds at most
// (CountSweep), refused past max_trials. Nothing is materialized.
Result<double> PrepareSweep(const Suite& suite, const SweepRequest& req, std::vector<std::vector<std::string>>* axes) {
  // Validate every named parameter and value first: a typo must not silently shrink the grid.
  auto check_config = [&](const Config& c, const std::string& f) -> Status {
    for (auto& [k, v] : c) {
      const ParamSpec* p = suite.Param(k);
      if (!p) return Status::Invalid("unknown parameter '" + k + "'", f + "." + k);
      if (!p->Accepts(v)) return Status::Invalid("value '" + v + "' is not declared for " + k, f + "." + k);
    }
    return Status::Ok();
  };
  for (auto& [k, vals] : req.parameters) {
    const ParamSpec* p = suite.Param(k);
    if (!p) return Status::Invalid("unknown parameter '" + k + "' (suite " + suite.name + ")", "parameters." + k);
    for (auto& v : vals)
      if (!p->Accepts(v))
        return Status::Invalid(p->pattern && p->values.empty()
                                   ? "value '" + v + "' does not match pattern " + *p->pattern
                                   : "value '" + v + "' is not declared for " + k,
                               "parameters." + k);
  }
  for (size_t i = 0; i < req.include.size(); ++i)
    if (Status s = check_config(req.include[i], "include[" + std::to_string(i) + "]"); !s.ok()) return s;
  for (size_t i = 0; i < req.exclude.size(); ++i)
    if (Status s = check_config(req.exclude[i], "exclude[" + std::to_string(i) + "]"); !s.ok()) return s;
  for (auto& p : suite.params) {
    auto it = req.parameters.find(p.name);
    if (it != req.parameters.end()) axes->push_back(it->second);
    else if (p.def) axes->push_back({*p.def});
    else axes->push_back(p.values);
  }
  // Size check before anything is materialized: a request for 10^12 configs, or a huge grid that
  // excludes trim, or includes that each re-expand it, must fail fast without allocating.
  const int64_t per_config = static_cast<int64_t>(req.targets.size()) * req.repeats;
  auto size = CountSweep(suite, req, *axes);
  if (!size.ok()) return size.status();
  if (*size * static_cast<double>(per_config) > static_cast<double>(req.max_trials))
    return Status::Invalid("the sweep has " + std::to_string(static_cast<int64_t>(*size * per_config)) +
                               " trials, over max_trials " + std::to_string(req.max_trials),
                           "max_trials");
  return *size;
}

}  // namespace

Result<int64_t> SweepTrialCount(const Suite& suite, const SweepRequest& req) {
  if (!req.include.empty()) {  // an include may repeat a grid config: only the expansion knows
    auto configs = ExpandSweep(suite, req);
    if (!configs.ok()) return configs.status();
    return static_cast<int64_t>(configs->size()) * static_cast<int64_t>(req.targets.size()) * req.repeats;
  }
  std::vector<std::vector<std::string>> axes;
  auto size = PrepareSweep(suite, req, &axes);
  if (!size.ok()) return size.status();
  if (*size < 1) return Status::Invalid("no configuration is left after exclude", "exclude");
  return static_cast<int64_t>(*size) * static_cast<int64_t>(req.targets.size()) * req.repeats;
}

Result<std::vector<Config>> ExpandSweep(const Suite& suite, const SweepRequest& req) {
  std::vector<std::vector<std::string>> axes;
  if (auto size = PrepareSweep(suite, req, &axes); !size.ok()) return size.status();
  const int64_t per_config = static_cast<int64_t>(req.targets.size()) * req.repeats;
  double grid = 1;
  for (auto& a : axes) grid *= static_cast<double>(a.size());

  std::vector<Config> out;
  std::set<std::string> seen;
  // Exclude trims the grid; an explicit include is added back even where an exclude matches it.
  auto add = [&](Config c, bool included) {
    if (!included)
      for (auto& ex : req.exclude)
        if (Matches(c, ex)) return;
    if (seen.insert(ConfigKey(c)).second) out.push_back(std::move(c));
  };
  std::vector<size_t> idx(axes.size(), 0);
  if (grid >= 1) {
    while (true) {
      Config c;
      for (size_t i = 0; i < axes.size(); ++i) c[suite.params[i].name] = axes[i][idx[i]];
      add(std::move(c), false);
      size_t d = axes.size();
      while (d > 0) {
        --d;
        if (++idx[d] < axes[d].size()) break;
        idx[d] = 0;
        if (d == 0) { d = SIZE_MAX; break; }
      }
      if (d == SIZE_MAX || axes.empty()) break;
    }
  }
  // An include entry fixes some parameters; the rest take the sweep's values (their defaults if omitted).
  for (auto& inc : req.include) {
    std::vector<Config> partial = {inc};
    for (size_t i = 0; i < axes.size(); ++i) {
      const std::string& name = suite.params[i].name;
      if (inc.count(name)) continue;
      std::vector<Config> next;
      for (auto& c : partial)
        for (auto& v : axes[i]) {
          Config c2 = c;
          c2[name] = v;
          next.push_back(std::move(c2));
        }
      partial = std::move(next);
    }
    for (auto& c : partial) add(std::move(c), true);
  }
  if (out.empty()) return Status::Invalid("no configuration is left after exclude", "exclude");
  const int64_t trials = static_cast<int64_t>(out.size()) * per_config;
  if (trials > req.max_trials)
    return Status::Invalid("the sweep has " + std::to_string(trials) + " trials, over max_trials " +
                               std::to_string(req.max_trials),
                           "max_trials");
  return out;
}

std::string ConfigKey(const Config& c) {
  std::string k;
  for (auto& [name, v] : c) {
    if (!k.empty()) k += '&';
    k += name;
    k += '=';
    k += v;
  }
  return k;
}

json ConfigJson(const Config& c) {
  json j = json::object();
  for (auto& [k, v] : c) j[k] = v;
  return j;
}

}  // namespace gauntlet
