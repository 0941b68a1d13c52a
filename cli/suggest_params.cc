// "Did you mean" for parameter names and values (cli/suggest.h): `trials --param`, `matrix --rows/--cols`.
#include <algorithm>
#include <iostream>
#include <set>

#include "cli/cli_common.h"
#include "cli/suggest.h"
#include "core/suite.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

std::optional<json> GetJson(net::Client& client, const std::string& target) {
  auto r = client.Send("GET", target);
  if (!r.ok() || r->status != 200) return std::nullopt;
  json j = json::parse(r->body, nullptr, false);
  return j.is_object() ? std::optional<json>(j) : std::nullopt;
}

// A suite's "parameters" object (list, or {values|pattern, default}) into name -> declared values.
void AddParameters(const json& params, std::map<std::string, std::vector<std::string>>* out) {
  if (!params.is_object()) return;
  for (auto& [name, spec] : params.items()) {
    auto& values = (*out)[name];
    const json list = spec.is_array() ? spec : spec.is_object() && !spec.contains("pattern") ? spec.value("values", json()) : json();
    if (!list.is_array()) {
      values.clear();  // free values: nothing to check
      continue;
    }
    for (auto& v : list)
      if (auto s = ScalarString(v)) values.push_back(*s);
  }
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::optional<std::map<std::string, std::vector<std::string>>> SuiteParameters(net::Client& client,
                                                                              const std::string& suite, int64_t sweep) {
  std::map<std::string, std::vector<std::string>> out;
  std::string name = suite;
  if (name.empty() && sweep > 0) {
    auto s = GetJson(client, "/api/v1/sweeps/" + std::to_string(sweep));
    if (!s || !(*s)["suite"].is_string()) return std::nullopt;
    name = (*s)["suite"];
  }
  if (!name.empty()) {
    auto s = GetJson(client, "/api/v1/suites/" + http::UrlEncode(name));
    if (!s) return std::nullopt;
    AddParameters((*s)["parameters"], &out);
    return out;
  }
  auto all = GetJson(client, "/api/v1/suites");
  if (!all) return std::nullopt;
  // A name two suites share takes both suites' values; free values in either leave it unchecked.
  std::set<std::string> free;
  for (auto& i : (*all)["items"]) {
    std::map<std::string, std::vector<std::string>> one;
    AddParameters(i["parameters"], &one);
    for (auto& [k, v] : one) {
      if (v.empty()) free.insert(k);
      auto& into = out[k];
      into.insert(into.end(), v.begin(), v.end());
    }
  }
  for (auto& k : free) out[k].clear();
  return out;
}

bool CheckParamFilters(const std::vector<std::string>& filters,
                       const std::map<std::string, std::vector<std::string>>& params, const std::string& where) {
  std::vector<std::string> names;
  for (auto& [k, v] : params) names.push_back(k);
  for (auto& f : filters) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) continue;  // TrialsQuery says so
    const std::string name = f.substr(0, eq), value = f.substr(eq + 1);
    auto it = params.find(name);
    if (it == params.end()) {
      auto near = Nearest(name, names);
      std::cerr << "gauntlet: --param " << f << ": no parameter '" << name << "' in " << where
                << (near ? " (did you mean " + *near + "?)" : names.empty() ? "" : "; its parameters: " + Join(names)) << "\n";
      return false;
    }
    const auto& values = it->second;
    if (values.empty() || std::find(values.begin(), values.end(), value) != values.end()) continue;
    auto near = Nearest(value, values);
    std::cerr << "gauntlet: --param " << f << ": '" << value << "' is not a value of " << name
              << (near ? " (did you mean " + name + "=" + *near + "?)" : "; its values: " + Join(values)) << "\n";
    return false;
  }
  return true;
}

void SuggestParameterName(const std::string& flag, const std::string& words, std::vector<std::string> names) {
  size_t start = 0;
  while (start <= words.size()) {
    size_t end = words.find(',', start);
    if (end == std::string::npos) end = words.size();
    const std::string w = words.substr(start, end - start);
    if (!w.empty() && std::find(names.begin(), names.end(), w) == names.end()) {
      if (auto near = Nearest(w, names)) std::cerr << "gauntlet: did you mean " << flag << " " << *near << "?\n";
      return;
    }
    start = end + 1;
  }
}

}  // namespace gauntlet::cli
