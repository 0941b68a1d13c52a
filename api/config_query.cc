#include "api/config_query.h"

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

}  // namespace gauntlet::api
