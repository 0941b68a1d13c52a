#include "api/codec.h"

#include "core/basis.h"

#include "core/bisect.h"
#include "core/verdict.h"
#include "http/auth.h"

#include <spdlog/spdlog.h>

#include <charconv>

namespace gauntlet::api {
using nlohmann::json;

namespace {
json Opt(const std::optional<std::string>& v) { return v ? json(*v) : json(); }
json Opt(const std::optional<int64_t>& v) { return v ? json(*v) : json(); }
}  // namespace

json SuiteJson(const store::SuiteRow& s, bool full) {
  json j = {{"name", s.name}, {"version", s.version}, {"created_at", s.created_at},
            {"description", s.definition.value("description", "")}};
  json params = json::object();
  if (s.definition.contains("parameters"))
    for (auto& [k, v] : s.definition["parameters"].items()) params[k] = v;
  j["parameters"] = params;
  j["parameter_order"] = s.param_order;  // as the suite declared them: a JSON object keeps no order
  j["requires"] = s.definition.value("requires", json::object());
  if (!s.shadowed.empty()) j["conflict"] = s.shadowed;
  if (!s.bundle.empty()) j["bundle"] = s.bundle;  // the SHA-256 of the suite's files
  json stages = json::array();
  for (auto& st : s.definition.value("stages", json::array()))
    stages.push_back({{"name", st.value("name", "")}, {"kind", st.value("kind", "")}});
  j["stages"] = stages;
  if (full) {
    j["definition"] = s.definition;
    j["source_dir"] = s.source_dir;
  }
  return j;
}

json SweepJson(const store::SweepRow& s) {
  int64_t done = s.by_state.value(std::string(Name(TrialState::kDone)), int64_t{0});
  return {{"id", s.id},
          {"suite", s.suite},
          {"suite_version", s.suite_version},
          {"name", s.name},
          {"priority", s.priority},
          {"trials", s.trial_count},
          // A big sweep is answered before its trials are stored: how many are, and whether more are
          // coming (a sweep cancelled while expanding keeps what was stored; no more come).
          {"materialized", s.Stored()},
          {"expanding", s.Expanding()},
          {"done", done},
          // A search is finished when it has ended, not whenever its one probe is done.
          {"finished", !s.Expanding() && done == s.Stored() &&
                           (!s.search.is_object() || s.search.value("state", "") != Name(BisectState::kRunning))},
          {"kind", Name(s.kind)},
          {"created_at", s.created_at},
          {"cancelled_at", Opt(s.cancelled_at)},
          {"by_state", s.by_state},
          {"by_verdict", s.by_verdict},
          {"reused", s.reused},
          {"rerun_of", Opt(s.rerun_of)},
          {"submitted_by", s.submitted_by},
          {"source", s.source},
          {"url", SweepUrl(s.id)},
          {"dashboard_url", SweepDashboardUrl(s.id)},
          {"request", s.request},
          {"search", s.search}};
}

namespace {
// `j` with every list longer than 10 replaced by {"count", "first": its first 3}, at any depth.
json Summarised(const json& j) {
  constexpr size_t kMaxListed = 10, kFirst = 3;
  if (j.is_array()) {
    if (j.size() <= kMaxListed) {
      json out = json::array();
      for (auto& x : j) out.push_back(Summarised(x));
      return out;
    }
    json first = json::array();
    for (size_t i = 0; i < kFirst; ++i) first.push_back(Summarised(j[i]));
    return {{"count", j.size()}, {"first", first}};
  }
  if (!j.is_object()) return j;
  json out = json::object();
  for (auto& [k, v] : j.items()) out[k] = Summarised(v);
  return out;
}
}  // namespace

json SweepListJson(const store::SweepRow& s) {
  json j = SweepJson(s);
  j.erase("request");
  j["request_summary"] = Summarised(s.request);
  j["search"] = Summarised(s.search);
  return j;
}

store::SweepOrigin OriginOf(const http::Request& r, const std::string& source) {
  store::SweepOrigin o;
  o.source = source;
  const std::string client = r.Header("x-gauntlet-client");
  if (source == "api" && (client == "cli" || client == "dashboard")) o.source = client;
  // The token's name; a token listed without one is named by its hash's first 12 hex digits, as
  // the tokens file lists it.
  if (!r.caller.empty())
    o.submitted_by = r.caller;
  else if (auto token = http::BearerToken(r.Header("authorization")))
    o.submitted_by = "sha256:" + http::Sha256Hex(*token).substr(0, 12);
  return o;
}

std::string SweepUrl(int64_t id) { return "/api/v1/sweeps/" + std::to_string(id); }
std::string SweepDashboardUrl(int64_t id) { return "/#/sweeps/" + std::to_string(id); }

json TrialJson(const store::TrialRow& t) {
  json j = {{"id", t.id},
            {"sweep", t.sweep_id},
            {"suite", t.suite},
            {"suite_version", t.suite_version},
            {"config", t.config},
            {"config_key", t.config_key},
            {"target", t.target_index},
            {"repeat", t.repeat_index},
            {"state", Name(t.state)},
            {"verdict", t.verdict ? json(Name(*t.verdict)) : json()},
            {"signature", Opt(t.signature)},
            {"hardware", Opt(t.hardware)},
            {"node", Opt(t.node)},
            {"node_id", Opt(t.node_id)},
            {"gpus", Opt(t.gpus)},
            {"attempt", t.attempt},
            {"max_attempts", t.max_attempts},
            {"evidence_trial", Opt(t.evidence_trial)},
            {"cancel_requested", t.cancel_requested},
            {"created_at", t.created_at},
            {"started_at", Opt(t.started_at)},
            {"finished_at", Opt(t.finished_at)},
            {"log_size", t.log_size}};
  if (!t.result.is_null()) j["result"] = t.result;
  // What the verdict was judged from, and whether it is a guess (core/basis.h): a failure judged from
  // the exit status alone is unclassified, its evidence the line the classifier would have used.
  if (t.result.is_object() && t.verdict) {
    const std::optional<Basis> b = ParseBasis(t.result.value("basis", ""));
    j["basis"] = b ? json(Name(*b)) : json();
    // A result stored before bases existed says it through its signature.
    j["unclassified"] = b ? Unclassified(*t.verdict, *b)
                          : Info(*t.verdict).severity > 0 && UnclassifiedSignature(t.signature.value_or(""));
  }
  // What the kernel recorder saw (issue 30): top kernels by time, totals, dropped records.
  if (t.result.is_object() && t.result.contains("kernels") && !t.result["kernels"].is_null())
    j["kernels"] = t.result["kernels"];
  return j;
}

http::Response FromStatus(const Status& s) {
  switch (s.code()) {
    case Code::kNotFound: return http::Problem(404, "Not Found", s.message(), s.field());
    case Code::kInvalid: return http::Problem(422, "Unprocessable Entity", s.message(), s.field());
    case Code::kConflict: return http::Problem(409, "Conflict", s.message(), s.field());
    case Code::kUnavailable: {
      // Every 503 is worth a retry (a full disk freed, a commit that failed, a restart): say when.
      http::Response r = http::Problem(503, "Service Unavailable", s.message());
      r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterS));
      return r;
    }
    case Code::kForbidden: return http::Problem(403, "Forbidden", s.message());
    default:
      spdlog::error("internal error: {}", s.message());
      return http::Problem(500, "Internal Server Error", "the server failed to answer; see its log");
  }
}

bool WantsCsv(const http::Request& r) {
  auto f = r.Query("format");
  if (f) return *f == "csv";
  return r.Header("accept").find("text/csv") != std::string::npos;
}

std::optional<int64_t> ParseId(const std::string& s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

json TrialTestsJson(const store::TrialTests& t) {
  json counts = json::object(), cases = json::array();
  for (const store::TestCaseRow& c : t.cases) {
    const std::string v(Name(c.verdict));
    counts[v] = counts.value(v, 0) + 1;
    json e = {{"stage", c.stage}, {"name", c.name}, {"outcome", c.outcome}, {"verdict", v}};
    if (!c.signature.empty()) e["signature"] = c.signature;
    if (!c.evidence.empty()) e["evidence"] = c.evidence;
    e["seconds"] = c.seconds ? json(*c.seconds) : json();
    cases.push_back(std::move(e));
  }
  const int64_t stored = static_cast<int64_t>(t.cases.size());
  return {{"attempt", t.attempt}, {"counts", counts}, {"total", stored + t.not_stored}, {"stored", stored},
          {"not_stored", t.not_stored}, {"cases", cases}};
}

}  // namespace gauntlet::api
