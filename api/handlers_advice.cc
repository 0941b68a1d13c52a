// Answers people act on: GET /api/v1/recommend (what to run on each hardware class) and GET
// /api/v1/check (will this configuration work here). Both judge a suite version's real runs
// (store/suite_runs.h) by core/recommend.h and core/preflight.h; docs/API.md "Recommend and check".
#include <set>

#include "api/advice_views.h"
#include "api/codec.h"
#include "api/config_query.h"
#include "api/handlers.h"
#include "api/matrix_layers.h"
#include "core/drift.h"
#include "store/suite_runs.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

Response RecommendAnswer(Context& c, Request& r) {
  if (auto bad = UnknownQueryKey(r, {"suite", "version", "hardware", "fingerprint", "by", "metric", "format"}, "")) return *bad;
  auto format = FormatOfQuery(r, {"json", "markdown", "shell"});
  if (!format.ok()) return FromStatus(format.status());
  auto suite = SuiteOfQuery(c.store, r);
  if (!suite.ok()) return FromStatus(suite.status());
  std::vector<std::string> by = SplitQueryList(r.Query("by").value_or(""));
  for (const auto& p : by)
    if (!suite->Param(p)) return FromStatus(Status::Invalid("'" + p + "' is not a parameter of " + suite->name, "by"));
  store::SuiteRunsQuery q{suite->id, r.Query("hardware"), r.Query("fingerprint"), r.Query("metric").value_or("")};
  auto runs = store::LoadSuiteRuns(c.store, q);
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
  if (auto bad = UnknownQueryKey(r, {"suite", "version", "hardware", "fingerprint", "format"}, "config.")) return *bad;
  auto format = FormatOfQuery(r, {"json", "markdown"});
  if (!format.ok()) return FromStatus(format.status());
  auto suite = SuiteOfQuery(c.store, r);
  if (!suite.ok()) return FromStatus(suite.status());
  auto config = ConfigFromQuery(*suite, suite->name, r, "config.", true);
  if (!config.ok()) return FromStatus(config.status());
  store::SuiteRunsQuery q{suite->id, r.Query("hardware"), r.Query("fingerprint"), ""};
  auto runs = store::LoadSuiteRuns(c.store, q);
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
  json j = CheckJson(*suite, hardware, *config, gauntlet::Check(*runs, *config));
  // What a published support table claims about it (PUT .../declared) and what the framework
  // itself answered (a probe stage), beside what ran: the evidence is core/drift.h's judgement, the
  // one the drift answer and the matrix's evidence layer give, and the only word there is about a
  // config that never ran here.
  j["declared"] = nullptr;
  j["framework"] = nullptr;
  json source = nullptr;
  auto declared = DeclaredFor(c.store, *suite, &source);
  if (!declared.ok() && declared.status().code() != Code::kConflict) return FromStatus(declared.status());
  const Declared* d = declared.ok() && *declared ? &**declared : nullptr;
  ConfigRuns own;  // the config's runs here, or none: a claim may still say something of it
  own.config = *config;
  own.config_key = ConfigKey(*config);
  own.hardware = hardware;
  for (const auto& cr : *runs)
    if (cr.config_key == own.config_key && cr.hardware == hardware) own = cr;
  const DriftItem judged = JudgeDrift(own, d);
  if (judged.rule)
    j["declared"] = {{"supported", judged.rule->supported}, {"note", judged.rule->note},
                     {"source", {{"url", source["url"]}, {"version", source["version"]}}}, {"kind", DriftKindName(judged.table)}};
  if (own.claim)
    j["framework"] = {{"supported", own.claim->supported}, {"reason", own.claim->reason}, {"framework", own.claim->framework},
                      {"version", own.claim->version}, {"trial", own.claim->trial}, {"kind", DriftKindName(judged.framework)}};
  j["drift"] = DriftKindName(judged.kind);
  j["evidence"] = EvidenceName(judged.evidence);
  if (*format == "markdown") return http::Text(200, "text/markdown; charset=utf-8", CheckMarkdown(j));
  return http::Json(j);
}

}  // namespace

std::vector<http::Route> AdviceRoutes(Context& c) {
  return {
      {"GET", "/api/v1/recommend", Role::kRead, [&c](Request& r) -> Response { return RecommendAnswer(c, r); }},
      {"GET", "/api/v1/check", Role::kRead, [&c](Request& r) -> Response { return CheckAnswer(c, r); }},
  };
}

}  // namespace gauntlet::api
