// Trials: filter and page, show one, read its log, cancel it.
#include <algorithm>
#include <cstdint>
#include <set>

#include "api/codec.h"
#include "api/handlers.h"
#include "core/field_limits.h"
#include "core/json_text.h"
#include "core/verdict.h"

#include "store/labels.h"
namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

// GET /api/v1/trials: the filters (one unknown is a 400, an unknown value a 422), a page, and
// JSON or CSV.
Response ListTrials(Context& c, Request& r) {
  store::TrialFilter f;
  for (auto& [k, v] : r.query) {
    if (k == "sweep") {
      auto id = ParseId(v);
      if (!id) return http::Problem(400, "Bad Request", "sweep is a sweep id", "sweep");
      f.sweep = *id;
    } else if (k == "suite") f.suite = v;
    else if (k == "state") {
      // An unknown value would match nothing and look like an empty answer: say so instead.
      f.state = ParseTrialState(v);
      if (!f.state)
        return http::Problem(422, "Unprocessable Entity", "state '" + v + "' is not one of queued, leased, running, done", "state");
    } else if (k == "verdict") {
      f.verdict = ParseVerdict(v);
      if (!f.verdict)
        return http::Problem(422, "Unprocessable Entity", "verdict '" + v + "' is not one of " + JoinNames(VerdictNames()), "verdict");
    } else if (k == "order") {
      if (v != "newest" && v != "oldest")
        return http::Problem(422, "Unprocessable Entity", "order is newest or oldest", "order");
      f.descending = v == "newest";  // of any sort key, as desc=1
    } else if (k == "sort") {
      const auto& keys = store::TrialSortKeys();
      if (std::find(keys.begin(), keys.end(), v) == keys.end())
        return http::Problem(422, "Unprocessable Entity", "sort '" + v + "' is not one of " + JoinNames(keys), "sort");
      f.sort = v;
    } else if (k == "desc") {
      if (v != "1" && v != "0" && v != "true" && v != "false" && !v.empty())
        return http::Problem(400, "Bad Request", "desc is 1 or 0", "desc");
      f.descending = v == "1" || v == "true";
    } else if (k == "hardware") f.hardware = v;
    else if (k == "signature") f.signature = v;
    else if (k.rfind("param.", 0) == 0 && k.size() > 6) {
      // Each filter is a term of one SQL statement: past SQLite's expression bounds a list of
      // thousands was a 500 (issue 31). A config has far fewer parameters than this.
      if (f.params.size() >= limits::kParamFilters)
        return http::Problem(422, "Unprocessable Entity",
                             "at most " + std::to_string(limits::kParamFilters) + " param.NAME filters in one query",
                             "param.");
      f.params.emplace_back(k.substr(6), v);
    }
    else if (k == "after") {
      auto id = ParseId(v);
      if (!id) return http::Problem(400, "Bad Request", "after is a trial id (from next)", "after");
      f.after = *id;
    } else if (k == "limit") {
      auto n = ParseId(v);
      if (!n || *n < 1) return http::Problem(400, "Bad Request", "limit is a positive integer", "limit");
      f.limit = static_cast<int>(std::min<int64_t>(*n, 10000));
    } else if (k != "format") {
      return http::Problem(400, "Bad Request", "unknown filter '" + k + "'", k);
    }
  }
  // A suite no one uploaded is a typo, not a suite without trials: said, never an empty list.
  if (f.suite)
    if (auto s = c.store.GetSuite(*f.suite); !s.ok()) return FromStatus(s.status());
  const int limit = f.limit;
  f.limit = limit + 1;
  store::QueryBudget budget = c.store.NewQuery();
  auto rows = c.store.ListTrials(f, &budget);
  if (!rows.ok()) return FromStatus(rows.status());
  const bool more = static_cast<int>(rows->size()) > limit;
  if (more) rows->pop_back();
  json next = more ? json(rows->back().id) : json();
  if (WantsCsv(r)) {
    // Parameters as columns: the union of config keys, in name order.
    std::set<std::string> params;
    for (auto& t : *rows)
      for (auto& [k, v] : t.config.items()) params.insert(k);
    std::vector<std::string> head = {"id", "sweep", "suite", "state", "verdict", "signature", "hardware", "node",
                                     "attempt"};
    for (auto& p : params) head.push_back("param." + p);
    std::string csv = CsvLine(head);
    for (auto& t : *rows) {
      std::vector<std::string> row = {std::to_string(t.id), std::to_string(t.sweep_id), t.suite, std::string(Name(t.state)),
                                      std::string(NameOr(t.verdict)), t.signature.value_or(""), t.hardware.value_or(""),
                                      t.node.value_or(""), std::to_string(t.attempt)};
      for (auto& p : params) row.push_back(t.config.contains(p) ? JsonText(t.config[p]) : "");
      csv += CsvLine(row);
    }
    Response out = http::Text(200, "text/csv; charset=utf-8", csv);
    if (more) out.headers.emplace_back("Link", "<?after=" + std::to_string(rows->back().id) + ">; rel=\"next\"");
    return out;
  }
  json items = json::array();
  for (auto& t : *rows) items.push_back(TrialJson(t));
  return http::Json({{"items", items}, {"next", next}});
}

}  // namespace

std::vector<http::Route> TrialRoutes(Context& c) {
  return {
      {"GET", "/api/v1/trials", Role::kRead,
       [&c](Request& r) -> Response { return ListTrials(c, r); }},
      {"GET", "/api/v1/trials/{id}", Role::kRead,
       [&c](Request& r) -> Response {
         auto id = ParseId(r.params["id"]);
         if (!id) return http::Problem(404, "Not Found", "no trial '" + r.params["id"] + "'", "id");
         auto t = c.store.GetTrial(*id);
         if (!t.ok()) return FromStatus(t.status());
         json out = TrialJson(*t);
         // The per-test outcomes its test runner reported (docs/API.md "Trial" `tests`).
         auto tests = c.store.GetTrialTests(*id);
         if (!tests.ok()) return FromStatus(tests.status());
         out["tests"] = TrialTestsJson(*tests);
         // What triage labels changed (store/labels.h), oldest first.
         auto audit = store::TrialAudit(c.store, *id);
         if (!audit.ok()) return FromStatus(audit.status());
         json changes = json::array();
         for (const store::VerdictChange& a : *audit)
           changes.push_back({{"label", a.label}, {"from", {{"verdict", a.from_verdict}, {"signature", a.from_signature}}},
                              {"to", {{"verdict", a.to_verdict}, {"signature", a.to_signature}}}, {"by", a.by}, {"at", a.at}});
         out["audit"] = std::move(changes);
         return http::Json(out);
       }},
      {"GET", "/api/v1/trials/{id}/log", Role::kRead,
       [&c](Request& r) -> Response {
         auto id = ParseId(r.params["id"]);
         if (!id) return http::Problem(404, "Not Found", "no trial '" + r.params["id"] + "'", "id");
         int64_t offset = 0, max = 1 << 20;
         if (auto o = r.Query("offset")) {
           auto v = ParseId(*o);
           if (!v) return http::Problem(400, "Bad Request", "offset is a byte offset", "offset");
           offset = *v;
         }
         if (auto m = r.Query("limit")) max = std::clamp<int64_t>(ParseId(*m).value_or(max), 1, 8 << 20);
         std::string text;
         int64_t size = 0, next = 0;
         if (Status s = c.store.ReadLog(*id, offset, max, &text, &size, &next); !s.ok()) return FromStatus(s);
         auto t = c.store.GetTrial(*id);
         const bool done = t.ok() && t->state == TrialState::kDone;
         if (r.Query("format") == "json")
           return http::Json({{"trial", *id}, {"offset", offset}, {"next", next}, {"size", size}, {"done", done},
                              {"text", text}});
         Response out = http::Text(200, "text/plain; charset=utf-8", std::move(text));
         out.headers.emplace_back("X-Log-Size", std::to_string(size));
         out.headers.emplace_back("X-Next-Offset", std::to_string(next));
         out.headers.emplace_back("X-Trial-Done", done ? "true" : "false");
         return out;
       }},
      {"POST", "/api/v1/trials/{id}/cancel", Role::kSubmit,
       [&c](Request& r) -> Response {
         auto id = ParseId(r.params["id"]);
         if (!id) return http::Problem(404, "Not Found", "no trial '" + r.params["id"] + "'", "id");
         if (Status s = c.coord.CancelTrial(*id); !s.ok()) return FromStatus(s);
         auto t = c.store.GetTrial(*id);
         if (!t.ok()) return FromStatus(t.status());
         return http::Json(TrialJson(*t));
       }},
  };
}

}  // namespace gauntlet::api
