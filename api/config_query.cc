#include "api/config_query.h"

#include "api/codec.h"

namespace gauntlet::api {

Result<Config> ConfigFromQuery(const Suite& suite, const std::string& suite_name, const http::Request& r,
                               const std::string& prefix, bool check_values) {
  Config cfg;
  for (auto& [k, v] : r.query)
    if (k.rfind(prefix, 0) == 0) {
      const std::string name = k.substr(prefix.size());
      const ParamSpec* p = suite.Param(name);
      if (!p) return Status::Invalid("'" + name + "' is not a parameter of " + suite_name, k);
      if (check_values && !p->Accepts(v)) {
        std::string known;
        for (size_t i = 0; i < p->values.size() && i < 12; ++i) known += (i ? ", " : "") + p->values[i];
        return Status::Invalid("'" + v + "' is not a value of " + name + (known.empty() ? "" : " (" + known + ")"), k);
      }
      cfg[name] = v;
    }
  if (cfg.empty()) return Status::Invalid(prefix + "NAME=VALUE for the config's parameters is required", prefix);
  for (const auto& p : suite.params)
    if (!cfg.count(p.name)) {
      if (!p.def) return Status::Invalid(prefix + p.name + " is required: the answer is about one whole config", prefix + p.name);
      cfg[p.name] = *p.def;
    }
  return cfg;
}

Result<Suite> SuiteOfQuery(store::Store& store, const http::Request& r) {
  auto name = r.Query("suite");
  if (!name || name->empty()) return Status::Invalid("suite is required", "suite");
  std::optional<int> version;
  if (auto v = r.Query("version")) {
    auto n = ParseId(*v);
    if (!n || *n < 1 || *n > 1000000) return Status::Invalid("a suite version (1, 2, ...)", "version");
    version = static_cast<int>(*n);
  }
  auto row = store.GetSuite(*name, version);
  if (!row.ok()) return row.status();
  auto parsed = ParseSuite(row->definition);
  if (!parsed.ok()) return parsed.status();
  parsed->id = row->id;
  parsed->version = row->version;
  return parsed;
}

std::optional<http::Response> UnknownQueryKey(const http::Request& r, const std::set<std::string>& allowed, const std::string& prefix) {
  for (auto& [k, v] : r.query) {
    if (allowed.count(k) || (!prefix.empty() && k.rfind(prefix, 0) == 0)) continue;
    std::string list;
    for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    if (!prefix.empty()) list += ", " + prefix + "NAME";
    return http::Problem(400, "Bad Request", "unknown query parameter (allowed: " + list + ")", k);
  }
  return std::nullopt;
}

std::vector<std::string> SplitQueryList(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

Result<std::string> FormatOfQuery(const http::Request& r, const std::set<std::string>& formats) {
  const std::string f = r.Query("format").value_or("json");
  if (!formats.count(f)) {
    std::string list;
    for (auto& x : formats) list += (list.empty() ? "" : ", ") + x;
    return Status::Invalid("format is one of " + list, "format");
  }
  return f;
}

}  // namespace gauntlet::api
