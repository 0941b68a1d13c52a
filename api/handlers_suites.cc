// GET /api/v1/suites, GET/PUT /api/v1/suites/{name}.
#include "api/codec.h"
#include "api/handlers.h"
#include "core/suite.h"
#include "core/yaml_json.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

std::vector<http::Route> SuiteRoutes(Context& c) {
  return {
      {"GET", "/api/v1/suites", Role::kRead,
       [&c](Request&) -> Response {
         auto rows = c.store.ListSuites();
         if (!rows.ok()) return FromStatus(rows.status());
         json items = json::array();
         for (auto& s : *rows) items.push_back(SuiteJson(s, false));
         return http::Json({{"items", items}});
       }},
      {"GET", "/api/v1/suites/{name}", Role::kRead,
       [&c](Request& r) -> Response {
         std::optional<int> version;
         if (auto v = r.Query("version")) {
           auto id = ParseId(*v);
           if (!id) return http::Problem(400, "Bad Request", "version is a positive integer", "version");
           version = static_cast<int>(*id);
         }
         auto s = c.store.GetSuite(r.params["name"], version);
         if (!s.ok()) return FromStatus(s.status());
         return http::Json(SuiteJson(*s, true));
       }},
      {"PUT", "/api/v1/suites/{name}", Role::kAdmin,
       [&c](Request& r) -> Response {
         // JSON, or YAML as people write suites (Content-Type application/yaml, or a body that is not
         // a JSON object); both become the same JSON, so validation exists once.
         const size_t first = r.body.find_first_not_of(" \t\r\n");
         const bool yaml = r.Header("content-type").find("yaml") != std::string::npos ||
                           (first != std::string::npos && r.body[first] != '{');
         json body;
         if (yaml) {
           auto y = YamlToJson(r.body);
           if (!y.ok()) return http::Problem(400, "Bad Request", "the body is neither JSON nor YAML: " + y.status().message(), "body");
           body = *y;
         } else {
           body = http::ParseJson(r.body);
         }
         if (body.is_object() && !body.contains("name")) body["name"] = r.params["name"];
         auto suite = ParseSuite(body);
         if (!suite.ok()) return FromStatus(suite.status());
         if (suite->name != r.params["name"])
           return http::Problem(422, "Unprocessable Entity", "the body's name differs from the path's", "name");
         bool created = false;
         auto row = c.store.PutSuite(suite->name, body, "", &created, DeclaredKeys(r.body, "parameters"));
         if (!row.ok()) return FromStatus(row.status());
         return http::Json(created ? 201 : 200, SuiteJson(*row, false));
       }},
  };
}

}  // namespace gauntlet::api
