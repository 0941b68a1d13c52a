// Declared against observed: PUT/GET /api/v1/suites/{name}/declared (a published support table's
// claims, core/declared.h) and GET /api/v1/drift (where the runs disagree, core/drift.h), in JSON
// and as markdown for an upstream issue. docs/API.md "Declared support and drift".
#include "api/codec.h"
#include "api/config_query.h"
#include "api/handlers.h"
#include "api/matrix_layers.h"
#include "core/drift.h"
#include "core/launch_line.h"
#include "store/declared_support.h"
#include "store/suite_runs.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

json RuleJson(const DeclaredRule& r) {
  json when = json::object();
  for (auto& [k, vs] : r.when) when[k] = json(std::vector<std::string>(vs.begin(), vs.end()));
  std::string hw;
  for (auto& h : r.hardware) hw += (hw.empty() ? "" : "|") + h;
  return {{"when", when}, {"hardware", hw}, {"supported", r.supported}, {"note", r.note}};
}

json ClaimJson(const FrameworkClaim& claim, DriftKind kind) {
  return {{"supported", claim.supported}, {"reason", claim.reason}, {"framework", claim.framework},
          {"version", claim.version}, {"trial", claim.trial}, {"kind", DriftKindName(kind)}};
}

json ItemJson(const Suite& suite, const DriftItem& it) {
  const ConfigRuns& c = *it.runs;
  json verdicts = json::object();
  for (auto& [v, n] : c.verdicts) verdicts[std::string(Name(v))] = n;
  json metric = nullptr;
  if (auto m = Summarize(c.metric))
    metric = {{"name", c.metric_name}, {"unit", c.metric_unit}, {"mean", m->mean}, {"low", m->low}, {"high", m->high}, {"n", m->n}};
  const LaunchLine line = LaunchFor(suite, c.config);
  return {{"kind", DriftKindName(it.kind)}, {"hardware", c.hardware}, {"config_key", c.config_key},
          {"config", ConfigJson(c.config)}, {"flags", line.flags}, {"env", line.env},
          {"declared", it.rule ? RuleJson(*it.rule) : json(nullptr)}, {"declared_kind", DriftKindName(it.table)},
          {"framework", c.claim ? ClaimJson(*c.claim, it.framework) : json(nullptr)},
          {"observed",
           {{"runs", c.runs}, {"passed", c.passed}, {"reused", c.reused}, {"verdicts", verdicts},
            {"passes", PassesWithConfidence(c)}, {"metric", metric},
            {"latest", {{"verdict", Name(c.latest)}, {"signature", c.latest_signature}, {"trial", c.latest_trial},
                        {"fingerprint", c.fingerprint}}}}},
          {"evidence", EvidenceName(it.evidence)}};
}

std::string Flags(const json& i) {
  std::string s;
  for (auto& e : i["env"]) s += (s.empty() ? "" : " ") + e.get<std::string>();
  for (auto& f : i["flags"]) s += (s.empty() ? "" : " ") + f.get<std::string>();
  return s.empty() ? i["config_key"].get<std::string>() : s;
}

// For an upstream issue: the source and its version, then one line per disagreement naming the
// hardware, the config's flags, what was claimed, what ran (signature or metric), the fingerprint
// and the trial.
std::string DriftMarkdown(const json& j) {
  std::string out = "**Declared support of `" + j["suite"].get<std::string>() + "` disagrees with runs on real hardware**\n\n";
  if (j["source"].is_object())
    out += "Source: " + j["source"]["url"].get<std::string>() +
           (j["source"]["version"].get<std::string>().empty() ? "" : " (version " + j["source"]["version"].get<std::string>() + ")") +
           "\n\n";
  if (j["framework_claims"].get<int64_t>() > 0)
    out += "The framework's own answers: a probe stage asked it about each configuration (" +
           j["framework_claims"].dump() + " answered).\n\n";
  int n = 0;
  for (auto& i : j["items"]) {
    const std::string kind = i["kind"];
    if (kind == "agrees") continue;
    const json& o = i["observed"];
    const json& l = o["latest"];
    // Who made the claim the runs contradict: the table, the framework's own answer, or both.
    const json& fw = i["framework"];
    const bool by_fw = fw.is_object() && fw["kind"] == kind;
    const bool by_table = i["declared_kind"] == kind;
    const std::string who = by_fw ? std::string(by_table ? "declared and " : "") + "declared by " +
                                        (fw["framework"].get<std::string>().empty() ? std::string("the framework")
                                                                                    : fw["framework"].get<std::string>() +
                                                                                          (fw["version"].get<std::string>().empty() ? "" : " " + fw["version"].get<std::string>()))
                                  : "declared";
    std::string what;
    if (kind == "supported_but_failing")
      what = who + " supported, but " + l["verdict"].get<std::string>() +
             (l["signature"].get<std::string>().empty() ? "" : " (`" + l["signature"].get<std::string>() + "`)");
    else if (kind == "unsupported_but_passing")
      what = who + " unsupported, but passed " + o["passed"].dump() + "/" + o["runs"].dump() + " runs" +
             (o["metric"].is_null() ? "" : " at " + o["metric"]["mean"].dump() + " " + o["metric"]["unit"].get<std::string>());
    else
      what = "not declared; observed " + l["verdict"].get<std::string>();
    out += "- " + i["hardware"].get<std::string>() + ": `" + Flags(i) + "`: " + what + "; fingerprint `" +
           l["fingerprint"].get<std::string>() + "`, trial " + l["trial"].dump() +
           (by_fw && !fw["reason"].get<std::string>().empty() ? "; the framework said: " + fw["reason"].get<std::string>().substr(0, 300) : "") +
           "\n";
    ++n;
  }
  if (n == 0) out += "No disagreement: every observed configuration is declared and behaves as declared.\n";
  return out;
}

Response PutDeclaration(Context& c, Request& r) {
  auto row = c.store.GetSuite(r.params["name"]);
  if (!row.ok()) return FromStatus(row.status());
  auto suite = ParseSuite(row->definition);
  if (!suite.ok()) return FromStatus(suite.status());
  auto d = ParseDeclared(http::ParseJson(r.body), *suite);
  if (!d.ok()) return FromStatus(d.status());
  const json canonical = DeclaredJson(*d);
  if (auto s = store::PutDeclared(c.store, suite->name, canonical); !s.ok()) return FromStatus(s);
  json out = canonical;
  out["suite"] = suite->name;
  out["rules_count"] = d->rules.size();
  return http::Json(out);
}

Response GetDeclaration(Context& c, Request& r) {
  auto d = store::GetDeclared(c.store, r.params["name"]);
  if (!d.ok()) return FromStatus(d.status());
  if (!*d) return http::Problem(404, "Not Found", "suite '" + r.params["name"] + "' has no declared support", "name");
  json out = **d;
  out["suite"] = r.params["name"];
  return http::Json(out);
}

Response DriftAnswer(Context& c, Request& r) {
  if (auto bad = UnknownQueryKey(r, {"suite", "version", "hardware", "fingerprint", "agrees", "format"}, "")) return *bad;
  auto format = FormatOfQuery(r, {"json", "markdown"});
  if (!format.ok()) return FromStatus(format.status());
  auto suite = SuiteOfQuery(c.store, r);
  if (!suite.ok()) return FromStatus(suite.status());
  json source = nullptr;
  auto declared = DeclaredFor(c.store, *suite, &source);
  if (!declared.ok()) return FromStatus(declared.status());
  auto runs = store::LoadSuiteRuns(c.store, {suite->id, r.Query("hardware"), r.Query("fingerprint"), ""});
  if (!runs.ok()) return FromStatus(runs.status());
  int64_t claims = 0;
  for (const auto& cr : *runs) claims += cr.claim ? 1 : 0;
  if (!*declared && claims == 0)
    return http::Problem(404, "Not Found",
                         "suite '" + suite->name + "' has no declared support: PUT /api/v1/suites/" + suite->name +
                             "/declared, or give it a probe stage that asks the framework",
                         "suite");
  const Declared* d = *declared ? &**declared : nullptr;
  const bool agrees = r.Query("agrees").value_or("0") == "1";
  json summary = {{"supported_but_failing", 0}, {"unsupported_but_passing", 0}, {"undeclared", 0}, {"agrees", 0}};
  json items = json::array();
  for (const auto& it : Drift(*runs, d)) {
    summary[DriftKindName(it.kind)] = summary[DriftKindName(it.kind)].get<int64_t>() + 1;
    if (it.kind != DriftKind::kAgrees || agrees) items.push_back(ItemJson(*suite, it));
  }
  const json j = {{"suite", suite->name}, {"version", suite->version},
                  {"source", d ? json{{"url", d->url}, {"version", d->version}} : json(nullptr)},
                  {"updated_at", source.is_object() ? source["updated_at"] : json(nullptr)}, {"framework_claims", claims},
                  {"summary", summary}, {"items", items}};
  if (*format == "markdown") return http::Text(200, "text/markdown; charset=utf-8", DriftMarkdown(j));
  return http::Json(j);
}

}  // namespace

std::vector<http::Route> DeclaredRoutes(Context& c) {
  return {
      {"PUT", "/api/v1/suites/{name}/declared", Role::kAdmin, [&c](Request& r) -> Response { return PutDeclaration(c, r); }},
      {"GET", "/api/v1/suites/{name}/declared", Role::kRead, [&c](Request& r) -> Response { return GetDeclaration(c, r); }},
      {"GET", "/api/v1/drift", Role::kRead, [&c](Request& r) -> Response { return DriftAnswer(c, r); }},
  };
}

}  // namespace gauntlet::api
