#include "core/bisect_request.h"

#include <set>
#include <utility>

#include "core/suite.h"

namespace gauntlet {
using nlohmann::json;

Result<BisectRequest> ParseBisectRequest(const json& body) {
  if (!body.is_object()) return Status::Invalid("a bisection is a JSON object", "");
  static const std::set<std::string> kFields = {"suite", "config", "target", "parameter", "good", "bad",
                                                "name", "priority", "confirm_failures", "max_attempts"};
  for (auto& [k, v] : body.items())
    if (!kFields.count(k)) return Status::Invalid("unknown field (expected one of suite, config, target, parameter, good, bad, name, priority, confirm_failures, max_attempts)", k);
  for (const char* k : {"suite", "parameter"})
    if (!body.contains(k) || !body[k].is_string() || body[k].get<std::string>().empty())
      return Status::Invalid(std::string(k) + " is required", k);
  BisectRequest r;
  using Field = std::pair<const char*, std::string*>;
  for (auto [k, out] : {Field{"good", &r.good}, Field{"bad", &r.bad}}) {
    auto v = body.contains(k) ? ScalarString(body[k]) : std::nullopt;
    if (!v) return Status::Invalid(std::string(k) + " is required: a value of the parameter", k);
    *out = *v;
  }
  r.config = body.value("config", json::object());
  if (!r.config.is_object()) return Status::Invalid("config is an object: parameter -> value", "config");
  r.suite = body["suite"].get<std::string>();
  r.parameter = body["parameter"].get<std::string>();
  if (r.config.contains(r.parameter))
    return Status::Invalid("config names the parameter being bisected", "config." + r.parameter);
  if (body.contains("target")) r.target = body["target"];
  // get<> throws for a non-string name, as the request's value("name", ...) always did.
  if (body.contains("name")) r.name = body["name"].get<std::string>();
  for (auto [k, out] : {std::pair{"priority", &r.priority}, std::pair{"confirm_failures", &r.confirm_failures},
                        std::pair{"max_attempts", &r.max_attempts}})
    if (body.contains(k)) *out = body[k];
  return r;
}

}  // namespace gauntlet
