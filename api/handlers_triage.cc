// The triage loop (docs/API.md "Triage"): GET /api/v1/triage lists the failures no tool explained
// (judged from the exit status alone), grouped by signature and the line the classifier would have
// used, the most trials first; POST /api/v1/labels (admin) labels one, re-judging every stored trial
// it matches and every later one; POST /api/v1/labels/{id}/withdraw takes a label back.
#include "api/codec.h"
#include "api/config_query.h"
#include "api/handlers.h"
#include "core/cell_reason.h"
#include "store/labels.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

json LabelJson(const store::Label& l) {
  return {{"id", l.id},
          {"signature", l.signature},
          {"match", l.match},
          {"suite", l.suite ? json(*l.suite) : json()},
          {"verdict", Name(l.verdict)},
          {"new_signature", store::LabelSignature(l)},
          {"note", l.note},
          {"created_by", l.created_by},
          {"created_at", l.created_at},
          {"withdrawn_at", l.withdrawn_at ? json(*l.withdrawn_at) : json()},
          {"withdrawn_by", l.withdrawn_at ? json(l.withdrawn_by) : json()},
          {"rejudged", l.rejudged}};
}

// The caller's name for the audit trail: the token's name, else its hash's first 12 hex digits.
std::string Caller(const Request& r) {
  const std::string who = OriginOf(r, "api").submitted_by;
  return who.empty() ? "anonymous" : who;
}

// The daemon applies the labels in force to every result reported from now on.
void Refresh(Context& c) {
  if (auto active = store::ActiveLabels(c.store); active.ok()) c.coord.SetLabels(std::move(*active));
}

Response TriageList(Context& c, Request& r) {
  if (auto bad = UnknownQueryKey(r, {"suite", "limit"}, "")) return *bad;
  std::optional<std::string> suite = r.Query("suite");
  if (suite && !c.store.GetSuite(*suite).ok()) return http::Problem(404, "Not Found", "no suite '" + *suite + "'", "suite");
  int limit = 100;
  if (auto q = r.Query("limit")) {
    auto n = ParseId(*q);
    if (!n || *n > 500) return http::Problem(422, "Unprocessable Entity", "limit is a number from 1 to 500", "limit");
    limit = static_cast<int>(*n);
  }
  auto items = store::Triage(c.store, suite, limit);
  if (!items.ok()) return FromStatus(items.status());
  json out = json::array();
  for (const store::TriageItem& it : *items)
    out.push_back({{"signature", it.signature},
                   {"reason", ReasonText("crashed", it.signature)},
                   {"evidence", it.evidence},
                   {"trials", it.trials},
                   {"example_trial", it.example_trial},
                   {"suites", it.suites},
                   {"basis", "exit_status"}});
  return http::Json({{"items", out}});
}

Response AddLabelAnswer(Context& c, Request& r) {
  json body = http::ParseJson(r.body);
  if (!body.is_object()) return http::Problem(400, "Bad Request", "the body is a JSON object", "body");
  for (auto& [k, v] : body.items())
    if (k != "signature" && k != "match" && k != "suite" && k != "verdict" && k != "note" && k != "new_signature")
      return http::Problem(422, "Unprocessable Entity",
                           "unknown field (allowed: signature, match, suite, verdict, note, new_signature)", k);
  auto str = [&](const char* k) { return body.contains(k) && body[k].is_string() ? body[k].get<std::string>() : ""; };
  store::Label l;
  l.signature = str("signature");
  l.match = str("match");
  l.note = str("note");
  l.new_signature = str("new_signature");
  l.created_by = Caller(r);
  if (body.contains("suite") && !body["suite"].is_null()) {
    l.suite = str("suite");
    if (!c.store.GetSuite(*l.suite).ok())
      return http::Problem(422, "Unprocessable Entity", "no suite '" + *l.suite + "' (leave suite out for every suite)", "suite");
  }
  const std::optional<Verdict> v = ParseVerdict(str("verdict"));
  if (!v) return http::Problem(422, "Unprocessable Entity", "verdict is one of the verdicts a signature rule gives", "verdict");
  l.verdict = *v;
  auto added = store::AddLabel(c.store, l);
  if (!added.ok()) return FromStatus(added.status());
  Refresh(c);
  return http::Json(201, LabelJson(*added));
}

}  // namespace

std::vector<http::Route> TriageRoutes(Context& c) {
  return {
      {"GET", "/api/v1/triage", Role::kRead, [&c](Request& r) -> Response { return TriageList(c, r); }},
      {"GET", "/api/v1/labels", Role::kRead,
       [&c](Request&) -> Response {
         auto all = store::ListLabels(c.store);
         if (!all.ok()) return FromStatus(all.status());
         json items = json::array();
         for (const store::Label& l : *all) items.push_back(LabelJson(l));
         return http::Json({{"items", items}});
       }},
      {"POST", "/api/v1/labels", Role::kAdmin, [&c](Request& r) -> Response { return AddLabelAnswer(c, r); }},
      {"POST", "/api/v1/labels/{id}/withdraw", Role::kAdmin,
       [&c](Request& r) -> Response {
         auto id = ParseId(r.params["id"]);
         if (!id) return http::Problem(404, "Not Found", "no label '" + r.params["id"] + "'", "id");
         auto l = store::WithdrawLabel(c.store, *id, Caller(r));
         if (!l.ok()) return FromStatus(l.status());
         Refresh(c);
         return http::Json(LabelJson(*l));
       }},
  };
}

}  // namespace gauntlet::api
