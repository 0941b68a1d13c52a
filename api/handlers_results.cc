// The answers: matrix, history, failure clusters, regressions.
#include "api/codec.h"
#include "api/handlers.h"
#include "store/analytics.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {
std::vector<std::string> Split(const std::string& s) {
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

std::string CellText(const json& c) {
  if (c["verdict"].is_null()) {
    std::string pending;
    for (auto& [k, v] : c["counts"].items()) pending += (pending.empty() ? "" : " ") + k + "=" + v.dump();
    return pending;
  }
  std::string t = c["verdict"].get<std::string>();
  if (t == "passed" && !c["metric"].is_null()) {
    char buf[64];
    snprintf(buf, sizeof buf, " %.4g %s", c["metric"]["value"].get<double>(), c["metric"].value("unit", "").c_str());
    t += buf;
  } else if (c["signature"].is_string() && t != "passed") {
    t += " (" + c["signature"].get<std::string>() + ")";
  }
  return t;
}
}  // namespace

std::vector<http::Route> ResultRoutes(Context& c) {
  return {
      {"GET", "/api/v1/matrix", Role::kRead,
       [&c](Request& r) -> Response {
         MatrixQuery q;
         auto suite = r.Query("suite");
         if (!suite || suite->empty()) return http::Problem(422, "Unprocessable Entity", "suite is required", "suite");
         q.suite = *suite;
         q.rows = Split(r.Query("rows").value_or(""));
         if (q.rows.empty()) {
           // Default: the suite's first two parameters as rows, hardware as columns.
           auto s = c.store.GetSuite(q.suite);
           if (!s.ok()) return FromStatus(s.status());
           for (auto& [k, v] : s->definition["parameters"].items())
             if (q.rows.size() < 2) q.rows.push_back(k);
         }
         q.cols = r.Query("cols").value_or("hardware");
         if (auto sw = r.Query("sweep")) {
           auto id = ParseId(*sw);
           if (!id) return http::Problem(422, "Unprocessable Entity", "sweep is a sweep id", "sweep");
           q.sweep = *id;
         }
         if (auto fp = r.Query("fingerprint")) q.fingerprint = *fp;
         auto m = Matrix(c.store, q);
         if (!m.ok()) return FromStatus(m.status());
         if (!WantsCsv(r)) return http::Json(*m);
         std::map<std::pair<json, std::string>, const json*> at;
         for (auto& cell : (*m)["cells"]) at[{cell["row"], cell["col"].get<std::string>()}] = &cell;
         std::vector<std::string> head = q.rows;
         for (auto& col : (*m)["col_keys"]) head.push_back(col.get<std::string>());
         std::string csv = CsvLine(head);
         for (auto& rk : (*m)["row_keys"]) {
           std::vector<std::string> row;
           for (auto& v : rk) row.push_back(v.get<std::string>());
           for (auto& col : (*m)["col_keys"]) {
             auto it = at.find({rk, col.get<std::string>()});
             row.push_back(it == at.end() ? "" : CellText(*it->second));
           }
           csv += CsvLine(row);
         }
         return http::Text(200, "text/csv; charset=utf-8", csv);
       }},
      {"GET", "/api/v1/history", Role::kRead,
       [&c](Request& r) -> Response {
         auto suite = r.Query("suite");
         auto config = r.Query("config");
         if (!suite) return http::Problem(422, "Unprocessable Entity", "suite is required", "suite");
         if (!config) return http::Problem(422, "Unprocessable Entity", "config (a trial's config_key) is required", "config");
         auto h = History(c.store, *suite, *config);
         if (!h.ok()) return FromStatus(h.status());
         return http::Json(*h);
       }},
      {"GET", "/api/v1/signatures", Role::kRead,
       [&c](Request& r) -> Response {
         std::optional<int64_t> sweep;
         if (auto sw = r.Query("sweep")) {
           sweep = ParseId(*sw);
           if (!sweep) return http::Problem(422, "Unprocessable Entity", "sweep is a sweep id", "sweep");
         }
         auto s = Signatures(c.store, r.Query("suite"), sweep);
         if (!s.ok()) return FromStatus(s.status());
         if (WantsCsv(r)) {
           std::string csv = CsvLine({"signature", "verdict", "count", "param", "value", "hardware"});
           for (auto& i : (*s)["items"]) {
             const json& e = i["explained_by"];
             csv += CsvLine({i["signature"], i["verdict"], i["count"].dump(), e.is_null() ? "" : e["param"].get<std::string>(),
                            e.is_null() ? "" : e["value"].get<std::string>(), e.is_null() ? "" : e["hardware"].get<std::string>()});
           }
           return http::Text(200, "text/csv; charset=utf-8", csv);
         }
         return http::Json(*s);
       }},
      {"GET", "/api/v1/regressions", Role::kRead,
       [&c](Request& r) -> Response {
         double threshold = 0.1;
         if (auto t = r.Query("threshold")) {
           try {
             threshold = std::stod(*t);
           } catch (...) {
             return http::Problem(422, "Unprocessable Entity", "threshold is a fraction like 0.1", "threshold");
           }
         }
         auto g = Regressions(c.store, r.Query("suite"), threshold);
         if (!g.ok()) return FromStatus(g.status());
         return http::Json(*g);
       }},
  };
}

}  // namespace gauntlet::api
