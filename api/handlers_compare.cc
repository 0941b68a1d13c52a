// Comparing two runs: GET /api/v1/compare (JSON or CSV). The rule of what changed is the store's
// (store/compare.h), shared with the webhooks' regression.found.
#include <cstdlib>
#include <set>

#include "api/codec.h"
#include "api/handlers.h"
#include "store/compare.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

// Side `x` ("a" or "b") from ?x=SWEEP, or ?suite= with ?x_fingerprint= and/or ?x_version=.
Result<store::CompareSide> SideOf(const Request& r, const std::string& x) {
  store::CompareSide side;
  if (auto v = r.Query(x)) {
    auto id = ParseId(*v);
    if (!id) return Status::Invalid("a sweep id", x);
    side.sweep = *id;
    return side;
  }
  auto fp = r.Query(x + "_fingerprint");
  auto ver = r.Query(x + "_version");
  if (!fp && !ver)
    return Status::Invalid("name side " + x + ": ?" + x + "=SWEEP, or ?suite= with ?" + x + "_fingerprint= or ?" + x +
                               "_version=",
                           x);
  side.suite = r.Query("suite").value_or("");
  if (side.suite.empty()) return Status::Invalid("a fingerprint or version side needs ?suite=", "suite");
  if (fp) side.fingerprint = *fp;
  if (ver) {
    auto n = ParseId(*ver);
    if (!n || *n < 1 || *n > 1000000) return Status::Invalid("a suite version (1, 2, ...)", x + "_version");
    side.suite_version = static_cast<int>(*n);
  }
  return side;
}

std::string Field(const json& side, const char* k) {
  if (side.is_null() || side[k].is_null()) return "";
  return side[k].is_string() ? side[k].get<std::string>() : side[k].dump();
}

std::string CompareCsv(const json& j) {
  std::string out = CsvLine({"config_key", "hardware", "change", "why", "a_verdict", "b_verdict", "a_signature",
                             "b_signature", "a_trial", "b_trial", "a_metric", "b_metric", "metric_change"});
  for (auto& it : j["items"]) {
    auto metric = [](const json& side) {
      return side.is_null() || side["metric"].is_null() ? std::string() : side["metric"]["value"].dump();
    };
    out += CsvLine({it["config_key"], it["hardware"], it["change"], it["why"], Field(it["a"], "verdict"),
                    Field(it["b"], "verdict"), Field(it["a"], "signature"), Field(it["b"], "signature"),
                    Field(it["a"], "trial"), Field(it["b"], "trial"), metric(it["a"]), metric(it["b"]),
                    it["metric_change"].is_null() ? "" : it["metric_change"].dump()});
  }
  return out;
}

}  // namespace

std::vector<http::Route> CompareRoutes(Context& c) {
  return {
      {"GET", "/api/v1/compare", Role::kRead,
       [&c](Request& r) -> Response {
         static const std::set<std::string> kKeys = {"a", "b", "suite", "a_fingerprint", "b_fingerprint",
                                                     "a_version", "b_version", "threshold", "format"};
         for (auto& [k, v] : r.query)
           if (!kKeys.count(k))
             return http::Problem(400, "Bad Request",
                                  "unknown query parameter (allowed: a, b, suite, a_fingerprint, b_fingerprint, "
                                  "a_version, b_version, threshold, format)",
                                  k);
         auto a = SideOf(r, "a");
         if (!a.ok()) return FromStatus(a.status());
         auto b = SideOf(r, "b");
         if (!b.ok()) return FromStatus(b.status());
         double threshold = 0.1;
         if (auto t = r.Query("threshold")) {
           char* end = nullptr;
           threshold = std::strtod(t->c_str(), &end);
           if (t->empty() || *end || !(threshold >= 0 && threshold <= 1))
             return FromStatus(Status::Invalid("a fraction from 0 to 1 (0.1 = 10%)", "threshold"));
         }
         store::QueryBudget budget = c.store.NewQuery();
         auto cmp = store::Compare(c.store, *a, *b, threshold, &budget);
         if (!cmp.ok()) return FromStatus(cmp.status());
         json j = store::ComparisonJson(*cmp);
         for (const char* side : {"a", "b"})
           if (j[side].contains("sweep")) {
             const int64_t id = j[side]["sweep"];
             j[side]["url"] = SweepUrl(id);
             j[side]["dashboard_url"] = SweepDashboardUrl(id);
             if (auto row = c.store.GetSweep(id); row.ok()) j[side]["suite"] = row->suite;
           }
         // Two suites compared: configs are matched by their parameters alone, which may mean little.
         if (j["a"].value("suite", "") != j["b"].value("suite", "") && !j["a"].value("suite", "").empty() &&
             !j["b"].value("suite", "").empty())
           j["note"] = "A is suite " + j["a"]["suite"].get<std::string>() + " and B suite " +
                       j["b"]["suite"].get<std::string>() + ": their configs are matched by parameter values alone";
         if (WantsCsv(r)) return http::Text(200, "text/csv; charset=utf-8", CompareCsv(j));
         return http::Json(j);
       }},
  };
}

}  // namespace gauntlet::api
