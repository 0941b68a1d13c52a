// Answers people act on: GET /api/v1/recommend (what to run on each hardware class) and GET
// /api/v1/check (will this configuration work here). Both judge a suite version's real runs
// (store/suite_runs.h) by core/recommend.h and core/preflight.h; docs/API.md "Recommend and check".
#include <set>

#include "api/advice_views.h"
#include "api/codec.h"
#include "api/config_query.h"
#include "api/handlers.h"
#include "store/suite_runs.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace advice_handlers {

// The suite version a query names (?suite=, ?version=), parsed.
Result<Suite> SuiteOf(Store& store, const Request& r) {
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

// 400 naming the first query key not in `allowed` (a key starting with `prefix` is allowed when
// `prefix` is not empty).
std::optional<Response> UnknownKey(const Request& r, const std::set<std::string>& allowed, const std::string& prefix) {
  for (auto& [k, v] : r.query) {
    if (allowed.count(k) || (!prefix.empty() && k.rfind(prefix, 0) == 0)) continue;
    std::string list;
    for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    if (!prefix.empty()) list += ", " + prefix + "NAME";
    return http::Problem(400, "Bad Request", "unknown query parameter (allowed: " + list + ")", k);
  }
  return std::nullopt;
}

std::vector<std::string> SplitList(const std::string& s) {
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

Result<std::string> FormatOf(const Request& r, const std::set<std::string>& formats) {
  const std::string f = r.Query("format").value_or("json");
  if (!formats.count(f)) {
    std::string list;
    for (auto& x : formats) list += (list.empty() ? "" : ", ") + x;
    return Status::Invalid("format is one of " + list, "format");
  }
  return f;
}

Response RecommendAnswer(Context& c, Request& r) {
  if (auto bad = UnknownKey(r, {"suite", "version", "hardware", "fingerprint", "by", "metric", "format"}, "")) return *bad;
  auto format = FormatOf(r, {"json", "markdown", "shell"});
  if (!format.ok()) return FromStatus(format.status());
  auto suite = SuiteOf(c.store, r);
  if (!suite.ok()) return FromStatus(suite.status());
  std::vector<std::string> by = SplitList(r.Query("by").value_or(""));
  for (const auto& p : by)
    if (!suite->Param(p)) return FromStatus(Status::Invalid("'" + p + "' is not a parameter of " + suite->name, "by"));
  SuiteRunsQuery q{suite->id, r.Query("hardware"), r.Query("fingerprint"), r.Query("metric").value_or("")};
  auto runs = LoadSuiteRuns(c.store, q);
  if (!runs.ok()) return FromStatus(runs.status());
  if (!q.metric.empty()) {
    bool seen = false;
    for (auto& cr : *runs) seen = seen || !cr.metric.empty();
    if (!seen && !runs->empty())
      return FromStatus(Status::Invalid("no passed run of " + suite->name + " measured '" + q.metric + "'", "metric"));
  }
  const json j = RecommendJson(*suite, by, q.metric, gauntlet::Recommend(*runs, by));
  if (*format == "markdown") return http::Text(200, "text/markdown; charset=utf-8", RecommendMarkdown(j));
  if (*format == "shell") return http::Text(200, "text/plain; charset=utf-8", RecommendShell(j));
  return http::Json(j);
}

Response CheckAnswer(Context& c, Request& r) {
  if (auto bad = UnknownKey(r, {"suite", "version", "hardware", "fingerprint", "format"}, "config.")) return *bad;
  auto format = FormatOf(r, {"json", "markdown"});
  if (!format.ok()) return FromStatus(format.status());
  auto suite = SuiteOf(c.store, r);
  if (!suite.ok()) return FromStatus(suite.status());
  auto config = ConfigFromQuery(*suite, suite->name, r, "config.", true);
  if (!config.ok()) return FromStatus(config.status());
  SuiteRunsQuery q{suite->id, r.Query("hardware"), r.Query("fingerprint"), ""};
  auto runs = LoadSuiteRuns(c.store, q);
  if (!runs.ok()) return FromStatus(runs.status());
  std::string hardware = q.hardware.value_or("");
  if (!q.hardware) {
    // Without ?hardware= the answer is about the one class the suite ran on, if there is one.
    std::set<std::string> classes;
    for (auto& cr : *runs) classes.insert(cr.hardware);
    if (classes.size() != 1) {
      std::string list;
      for (auto& h : classes) list += (list.empty() ? "" : "; ") + h;
      return FromStatus(Status::Invalid(
          "hardware is required" + (classes.empty() ? std::string(": " + suite->name + " has no results yet")
                                                    : ": " + suite->name + " ran on " + list),
          "hardware"));
    }
    hardware = *classes.begin();
  }
  const json j = CheckJson(*suite, hardware, *config, gauntlet::Check(*runs, *config));
  if (*format == "markdown") return http::Text(200, "text/markdown; charset=utf-8", CheckMarkdown(j));
  return http::Json(j);
}

}  // namespace advice_handlers

std::vector<http::Route> AdviceRoutes(Context& c) {
  return {
      {"GET", "/api/v1/recommend", Role::kRead, [&c](Request& r) -> Response { return advice_handlers::RecommendAnswer(c, r); }},
      {"GET", "/api/v1/check", Role::kRead, [&c](Request& r) -> Response { return advice_handlers::CheckAnswer(c, r); }},
  };
}

}  // namespace gauntlet::api
