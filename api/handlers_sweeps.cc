// Sweeps: submit, bisect, list, show, cancel, retry.
#include "api/codec.h"
#include "api/handlers.h"
#include "api/requests.h"
#include "api/views.h"
#include "core/bisect_request.h"
#include "core/verdict.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {
int Limit(const Request& r, int def = 100) {
  auto v = r.Query("limit");
  if (!v) return def;
  auto n = ParseId(*v);
  return n ? static_cast<int>(std::clamp<int64_t>(*n, 1, 1000)) : def;
}
// 201 for a new sweep, with where to read it and see it. The sweep is durable; `expanding`: its
// trials are still being stored (GET shows how many are).
Response Created(const daemon::SubmitResult& res, std::optional<int64_t> rerun_of) {
  json j = {{"id", res.sweep}, {"trials", res.trials}, {"expanding", res.expanding}, {"url", SweepUrl(res.sweep)},
            {"dashboard_url", SweepDashboardUrl(res.sweep)}};
  if (rerun_of) j["rerun_of"] = *rerun_of;
  Response out = http::Json(201, j);
  out.headers.emplace_back("Location", SweepUrl(res.sweep));
  return out;
}
// GET /api/v1/sweeps as CSV: a line per listed sweep; "failed" is what finished neither passed,
// skipped nor cancelled.
std::string SweepsCsv(const json& items) {
  std::string csv = CsvLine({"id", "name", "suite", "trials", "done", "passed", "failed", "created_at"});
  for (auto& j : items) {
    int64_t passed = j["by_verdict"].value(std::string(Name(Verdict::kPassed)), int64_t{0});
    int64_t skipped = j["by_verdict"].value(std::string(Name(Verdict::kSkipped)), int64_t{0});
    int64_t cancelled = j["by_verdict"].value(std::string(Name(Verdict::kCancelled)), int64_t{0});
    int64_t done = j["done"].get<int64_t>();
    csv += CsvLine({std::to_string(j["id"].get<int64_t>()), j["name"], j["suite"], std::to_string(j["trials"].get<int64_t>()),
                    std::to_string(done), std::to_string(passed), std::to_string(done - passed - skipped - cancelled),
                    std::to_string(j["created_at"].get<int64_t>())});
  }
  return csv;
}
}  // namespace

std::vector<http::Route> SweepRoutes(Context& c) {
  auto with_sweep = [&c](Request& r, auto fn) -> Response {
    auto id = ParseId(r.params["id"]);
    if (!id) return http::Problem(404, "Not Found", "no sweep '" + r.params["id"] + "'", "id");
    return fn(*id);
  };
  return {
      {"POST", "/api/v1/sweeps", Role::kSubmit,
       [&c](Request& r) -> Response {
         auto sub = ParseSweepSubmission(http::ParseJson(r.body));
         if (!sub.ok()) return FromStatus(sub.status());
         auto res = c.coord.Submit(*sub, OriginOf(r, "api"));
         if (!res.ok()) return FromStatus(res.status());
         return Created(*res, std::nullopt);
       }},
      {"POST", "/api/v1/bisect", Role::kSubmit,
       [&c](Request& r) -> Response {
         auto req = ParseBisectRequest(http::ParseJson(r.body));
         if (!req.ok()) return FromStatus(req.status());
         auto res = c.coord.Bisect(*req);
         if (!res.ok()) return FromStatus(res.status());
         Response out = http::Json(201, {{"id", res->sweep}, {"trials", res->trials}, {"kind", Name(SweepKind::kBisect)},
                                         {"url", "/api/v1/sweeps/" + std::to_string(res->sweep)}});
         out.headers.emplace_back("Location", "/api/v1/sweeps/" + std::to_string(res->sweep));
         return out;
       }},
      {"GET", "/api/v1/sweeps", Role::kRead,
       [&c](Request& r) -> Response {
         int64_t after = 0;
         if (auto a = r.Query("after")) after = ParseId(*a).value_or(0);
         int limit = Limit(r, 50);
         store::SweepFilter f;
         for (auto& [k, v] : r.query) {
           if (k == "suite") f.suite = v;
           else if (k == "submitted_by") f.submitted_by = v;
           else if (k == "source") f.source = v;
           else if (k == "state") {
             f.state = ParseSweepState(v);
             if (!f.state) return FromStatus(Status::Invalid("state is running, finished or cancelled", "state"));
           } else if (k != "after" && k != "limit" && k != "format")
             return http::Problem(400, "Bad Request",
                                  "unknown filter (allowed: suite, state, submitted_by, source, after, limit, format)", k);
         }
         auto rows = c.store.ListSweeps(after, limit + 1, f);
         if (!rows.ok()) return FromStatus(rows.status());
         json items = json::array();
         for (size_t i = 0; i < rows->size() && static_cast<int>(i) < limit; ++i) {
           json j = SweepListJson((*rows)[i]);
           j.update(SweepLiveJson(c.coord.SweepExtras((*rows)[i].id)));
           items.push_back(j);
         }
         json next = static_cast<int>(rows->size()) > limit ? json((*rows)[limit - 1].id) : json();
         if (WantsCsv(r)) return http::Text(200, "text/csv; charset=utf-8", SweepsCsv(items));
         return http::Json({{"items", items}, {"next", next}});
       }},
      {"GET", "/api/v1/sweeps/{id}", Role::kRead,
       [&c, with_sweep](Request& r) -> Response {
         return with_sweep(r, [&](int64_t id) -> Response {
           auto s = c.store.GetSweep(id);
           if (!s.ok()) return FromStatus(s.status());
           json j = SweepJson(*s);
           j.update(SweepLiveJson(c.coord.SweepExtras(id)));
           return http::Json(j);
         });
       }},
      {"POST", "/api/v1/sweeps/{id}/cancel", Role::kSubmit,
       [&c, with_sweep](Request& r) -> Response {
         return with_sweep(r, [&](int64_t id) -> Response {
           if (Status s = c.coord.CancelSweep(id); !s.ok()) return FromStatus(s);
           auto sw = c.store.GetSweep(id);
           if (!sw.ok()) return FromStatus(sw.status());
           return http::Json(SweepJson(*sw));
         });
       }},
      {"POST", "/api/v1/sweeps/{id}/rerun", Role::kSubmit,
       [&c, with_sweep](Request& r) -> Response {
         return with_sweep(r, [&](int64_t id) -> Response {
           auto sel = ParseRerunSelection(r.body.empty() ? json() : http::ParseJson(r.body));
           if (!sel.ok()) return FromStatus(sel.status());
           auto res = c.coord.Rerun(id, *sel, OriginOf(r, "rerun"));
           if (!res.ok()) return FromStatus(res.status());
           if (sel->dry_run) return http::Json({{"dry_run", true}, {"trials", res->trials}, {"rerun_of", id}});
           return Created(*res, id);
         });
       }},
      {"POST", "/api/v1/sweeps/{id}/retry", Role::kSubmit,
       [&c, with_sweep](Request& r) -> Response {
         return with_sweep(r, [&](int64_t id) -> Response {
           auto n = c.coord.RetrySweep(id);
           if (!n.ok()) return FromStatus(n.status());
           return http::Json({{"sweep", id}, {"requeued", *n}});
         });
       }},
  };
}

}  // namespace gauntlet::api
