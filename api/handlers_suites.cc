// GET /api/v1/suites, GET/PUT /api/v1/suites/{name}, PUT/GET /api/v1/bundles/{sha256}.
#include "api/codec.h"
#include "api/handlers.h"
#include "core/bundle.h"
#include "core/suite.h"
#include "core/yaml_json.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

// The suite's files: `?bundle=SHA256` must name a stored bundle; without it, the latest version's
// bundle, if it has one. A suite with neither that uses
// {suite_dir} is refused: the placeholder would name no folder on the worker (it ran as an empty
// string once, and every trial crashed). Returns the problem, or nullopt with *sha set.
std::optional<Response> SuiteBundle(Context& c, Request& r, const json& body, std::string* sha) {
  if (auto b = r.Query("bundle"); b && !b->empty()) {
    if (!IsSha256Hex(*b)) return http::Problem(422, "Unprocessable Entity", "bundle is a SHA-256 in lower-case hex", "bundle");
    if (!c.store.HasBundle(*b))
      return http::Problem(422, "Unprocessable Entity",
                           "no suite bundle " + *b + " is stored: PUT /api/v1/bundles/" + *b + " first", "bundle");
    *sha = *b;
    return std::nullopt;
  }
  // A definition sent alone keeps the files of the suite's latest version, if it has any: editing
  // a stage through the API must not lose the scripts it runs.
  if (auto latest = c.store.GetSuite(r.params["name"]); latest.ok() && !latest->bundle.empty()) {
    *sha = latest->bundle;
    return std::nullopt;
  }
  if (std::string f = FieldUsingSuiteDir(body); !f.empty())
    return http::Problem(422, "Unprocessable Entity",
                         "{suite_dir} names the suite's folder, and this suite was sent without its files: register it "
                         "with `gauntlet suites push FILE` (which sends the file's folder), or PUT the folder's bundle "
                         "and give ?bundle=SHA256",
                         f);
  return std::nullopt;
}

}  // namespace

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
         std::string bundle;
         if (auto problem = SuiteBundle(c, r, body, &bundle)) return *problem;
         bool created = false;
         auto row = c.store.PutSuite(suite->name, body, "", &created, DeclaredKeys(r.body, "parameters"), bundle);
         if (!row.ok()) return FromStatus(row.status());
         return http::Json(created ? 201 : 200, SuiteJson(*row, false));
       }},
      // A suite's files (core/bundle.h), addressed by their SHA-256: the body must hash to the path's
      // and be a well-formed bundle within the limit (the server reads at most kMaxBundleBytes here).
      {"PUT", "/api/v1/bundles/{sha256}", Role::kAdmin,
       [&c](Request& r) -> Response {
         const std::string sha = r.params["sha256"];
         if (!IsSha256Hex(sha)) return http::Problem(422, "Unprocessable Entity", "the path names a SHA-256 in lower-case hex", "sha256");
         if (r.body.size() > kMaxBundleBytes)
           return http::Problem(413, "Payload Too Large",
                                "a suite bundle is at most " + std::to_string(kMaxBundleBytes) + " bytes", "body");
         if (BundleSha256(r.body) != sha)
           return http::Problem(422, "Unprocessable Entity", "the body's SHA-256 is " + BundleSha256(r.body) + ", not the path's", "sha256");
         auto files = ReadBundle(r.body);
         if (!files.ok()) return FromStatus(files.status());
         bool created = false;
         if (Status s = c.store.PutBundle(sha, r.body, files->size(), &created); !s.ok()) return FromStatus(s);
         return http::Json(created ? 201 : 200, {{"sha256", sha}, {"size", r.body.size()}, {"files", files->size()}});
       }},
      {"GET", "/api/v1/bundles/{sha256}", Role::kWorker,
       [&c](Request& r) -> Response {
         auto b = c.store.GetBundle(r.params["sha256"]);
         if (!b.ok()) return FromStatus(b.status());
         return http::Text(200, "application/octet-stream", std::move(*b));
       }},
  };
}

}  // namespace gauntlet::api
