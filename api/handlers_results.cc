// The answers: matrix, history, failure clusters, flaky cells, regressions.
#include "api/codec.h"
#include "api/config_query.h"
#include "api/handlers.h"
#include "api/matrix_layers.h"
#include "api/matrix_markdown.h"
#include "core/suite.h"
#include "core/sweep.h"
#include "core/verdict.h"
#include "store/analytics.h"
#include "store/regressions.h"

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {
// The config key that param.NAME=VALUE query entries name (api/config_query.h).
Result<std::string> ConfigKeyFromParams(store::Store& store, const std::string& suite, const Request& r) {
  auto s = store.GetSuite(suite);
  if (!s.ok()) return s.status();
  auto parsed = ParseSuite(s->definition);
  if (!parsed.ok()) return parsed.status();
  auto cfg = ConfigFromQuery(*parsed, suite, r, "param.", false);
  if (!cfg.ok()) {
    if (cfg.status().field() == "param.")
      return Status::Invalid("config (a trial's config_key) or param.NAME=VALUE is required", "config");
    return cfg.status();
  }
  return ConfigKey(*cfg);
}

// "passed=3 crashed=1": a cell's counts in one CSV field, in the vocabulary's order.
std::string CountsText(const json& counts) {
  std::string out;
  auto add = [&](const std::string& k) { out += (out.empty() ? "" : " ") + k + "=" + counts[k].dump(); };
  for (const auto& v : Verdicts())
    if (counts.contains(std::string(v.name))) add(std::string(v.name));
  for (auto& [k, v] : counts.items())
    if (!IsVerdict(k)) add(k);  // trial states of configs not judged yet: queued, leased, running
  return out;
}

std::string MetricValue(const json& m) {
  if (!m.is_object()) return "";
  char buf[64];
  snprintf(buf, sizeof buf, "%.6g", m["value"].get<double>());
  return buf;
}

// One line per cell, columns not one text field, so a spreadsheet or a script reads each fact alone.
std::string MatrixCsv(const json& m) {
  std::vector<std::string> head;
  for (auto& r : m["rows"]) head.push_back(r);
  head.insert(head.end(), {m["cols"].get<std::string>(), "state", "verdict", "passed_configs", "configs", "counts",
                           "metric", "metric_min", "metric_max", "metric_unit", "signature", "reused"});
  // With ?layer=dispatch, which kernel family carried each cell's latest trial, and its check.
  const bool dispatch = !m["cells"].empty() && m["cells"][0].contains("dispatch");
  if (dispatch) head.insert(head.end(), {"dispatch", "dispatch_status"});
  // With ?layer=drift, the cell's most severe disagreement and what shows it; ?layer=evidence, its level.
  const std::string layer = m.value("layer", "");
  if (layer == "drift") head.insert(head.end(), {"drift", "drift_config", "drift_detail"});
  if (layer == "evidence") head.push_back("evidence");
  std::string csv = CsvLine(head);
  std::map<std::pair<json, std::string>, const json*> at;
  for (auto& cell : m["cells"]) at[{cell["row"], cell["col"].get<std::string>()}] = &cell;
  for (auto& rk : m["row_keys"])
    for (auto& col : m["col_keys"]) {
      auto it = at.find({rk, col.get<std::string>()});
      if (it == at.end()) continue;
      const json& c = *it->second;
      std::vector<std::string> row;
      for (auto& v : rk) row.push_back(v.get<std::string>());
      const json& mx = c["metric_max"];
      row.insert(row.end(), {col.get<std::string>(), c["state"], c["verdict"].is_string() ? c["verdict"].get<std::string>() : "",
                             std::to_string(c["passed"].get<int64_t>()), std::to_string(c["configs"].get<int64_t>()),
                             CountsText(c["counts"]), mx.is_object() ? mx["name"].get<std::string>() : "",
                             MetricValue(c["metric_min"]), MetricValue(mx), mx.is_object() ? mx.value("unit", "") : "",
                             c["signature"].is_string() ? c["signature"].get<std::string>() : "",
                             std::to_string(c.value("reused", int64_t{0}))});
      if (dispatch) {
        row.push_back(c.value("dispatch", json()).is_string() ? c["dispatch"].get<std::string>() : "");
        row.push_back(c.value("dispatch_status", json()).is_string() ? c["dispatch_status"].get<std::string>() : "");
      }
      if (layer == "drift") {
        const json& d = c["drift"];
        std::string detail;
        if (d.is_object() && d["signature"].is_string()) detail = d["signature"].get<std::string>();
        else if (d.is_object() && d["metric"].is_object()) detail = MetricValue({{"value", d["metric"]["mean"]}}) + " " + d["metric"]["unit"].get<std::string>();
        row.insert(row.end(), {d.is_object() ? d["kind"].get<std::string>() : "", d.is_object() ? d["config_key"].get<std::string>() : "", detail});
      }
      if (layer == "evidence") row.push_back(c["evidence"].get<std::string>());
      csv += CsvLine(row);
    }
  return csv;
}
}  // namespace

// The dispatch layer (issue 30, `?layer=dispatch`): each cell's latest trial's kernel record says
// which kernel family carried it and whether its stage's dispatch expectation was verified, fell
// back or could not be checked. One trial read per cell, at most kMaxDispatchCells cells (the rest
// say "dispatch_truncated"); a trial without a record has dispatch null.
namespace {
constexpr size_t kMaxDispatchCells = 2000;
void AddDispatchLayer(store::Store& store, json* m) {
  size_t n = 0;
  for (auto& cell : (*m)["cells"]) {
    cell["dispatch"] = nullptr;
    cell["dispatch_status"] = nullptr;
    if (!cell["trial"].is_number_integer()) continue;
    if (++n > kMaxDispatchCells) {
      (*m)["dispatch_truncated"] = true;
      continue;
    }
    auto t = store.GetTrial(cell["trial"].get<int64_t>());
    if (!t.ok() || !t->result.is_object()) continue;
    // What carried a run says something only of a run that answered: a refusal ran no attention.
    if (t->verdict != Verdict::kPassed && t->verdict != Verdict::kFallback) continue;
    const json& k = t->result.value("kernels", json());
    if (k.is_object() && k.contains("carrying_family") && k["carrying_family"].is_string() &&
        !k["carrying_family"].get<std::string>().empty())
      cell["dispatch"] = k["carrying_family"];
    for (auto& st : t->result.value("stages", json::array()))
      if (st.is_object() && st.contains("dispatch") && st["dispatch"].is_object())
        cell["dispatch_status"] = st["dispatch"].value("status", "");
  }
}
// ?suite_version= into *version: a number, or 0 for "all"; absent or "latest" leaves it as it is.
// The 422 naming suite_version when it is none of those.
std::optional<Response> SuiteVersionOfQuery(const Request& r, std::optional<int>* version) {
  auto v = r.Query("suite_version");
  if (!v || *v == "latest") return std::nullopt;
  auto n = *v == "all" ? std::optional<int64_t>(0) : ParseId(*v);
  if (!n || (*n == 0 && *v != "all"))
    return http::Problem(422, "Unprocessable Entity", "suite_version is a version number, latest or all", "suite_version");
  *version = static_cast<int>(*n);
  return std::nullopt;
}

// GET /api/v1/signatures as CSV: a line per signature, with what explains it when anything does.
std::string SignaturesCsv(const json& s) {
  std::string csv = CsvLine({"signature", "verdict", "count", "param", "value", "hardware"});
  for (auto& i : s["items"]) {
    const json& e = i["explained_by"];
    csv += CsvLine({i["signature"], i["verdict"], i["count"].dump(), e.is_null() ? "" : e["param"].get<std::string>(),
                    e.is_null() ? "" : e["value"].get<std::string>(), e.is_null() ? "" : e["hardware"].get<std::string>()});
  }
  return csv;
}

// GET /api/v1/flaky as CSV: a line per flaky cell with its pass rate and interval.
std::string FlakyCsv(const json& f) {
  std::string csv = CsvLine({"config_key", "hardware", "verdict", "passed", "runs", "rate", "low", "high", "reused"});
  for (auto& i : f["items"]) {
    const json& p = i["pass_rate"];
    auto num = [&](const char* k) { return p.is_object() ? p[k].dump() : std::string(); };
    csv += CsvLine({i["config_key"], i["hardware"], i["verdict"], num("passed"), num("runs"), num("rate"), num("low"),
                    num("high"), std::to_string(i.value("reused", int64_t{0}))});
  }
  return csv;
}

}  // namespace

namespace {
// The nodes on record that ran the results of matrix answer `m`, by hardware class; none when the
// store cannot say (the Markdown then says so per class).
NodesByClass MatrixNodes(store::Store& store, const json& m) {
  NodesByClass out;
  const std::optional<int64_t> sweep = m["sweep"].is_number() ? std::optional<int64_t>(m["sweep"].get<int64_t>()) : std::nullopt;
  auto pairs = store::ResultNodes(store, m["suite"].get<std::string>(), sweep);
  auto nodes = store.ListNodes();
  if (!pairs.ok() || !nodes.ok()) return out;
  std::map<int64_t, const store::NodeRow*> by_id;
  for (auto& n : *nodes) by_id[n.id] = &n;
  for (auto& [hw, id] : *pairs)
    if (auto it = by_id.find(id); it != by_id.end()) out[hw.empty() ? "unassigned" : hw].push_back(*it->second);
  return out;
}
}  // namespace

std::vector<http::Route> ResultRoutes(Context& c) {
  return {
      {"GET", "/api/v1/matrix", Role::kRead,
       [&c](Request& r) -> Response {
         store::MatrixQuery q;
         q.suite = r.Query("suite").value_or("");
         q.rows = SplitQueryList(r.Query("rows").value_or(""));
         q.cols = r.Query("cols").value_or("hardware");
         if (auto sw = r.Query("sweep")) {
           auto id = ParseId(*sw);
           if (!id) return http::Problem(422, "Unprocessable Entity", "sweep is a sweep id", "sweep");
           q.sweep = *id;
         }
         if (q.suite.empty() && !q.sweep) return http::Problem(422, "Unprocessable Entity", "suite (or sweep) is required", "suite");
         if (auto bad = SuiteVersionOfQuery(r, &q.suite_version)) return *bad;
         if (auto fp = r.Query("fingerprint")) q.fingerprint = *fp;
         const std::string layer = r.Query("layer").value_or("verdict");
         if (layer != "verdict" && layer != "dispatch" && layer != "drift" && layer != "evidence")
           return http::Problem(422, "Unprocessable Entity", "layer is verdict, dispatch, drift or evidence", "layer");
         const std::string format = r.Query("format").value_or(WantsCsv(r) ? "csv" : "json");
         if (format != "json" && format != "csv" && format != "markdown")
           return http::Problem(422, "Unprocessable Entity", "format is json, csv or markdown", "format");
         store::QueryBudget budget = c.store.NewQuery();
         auto m = store::Matrix(c.store, q, &budget);
         if (!m.ok()) return FromStatus(m.status());
         if (layer == "dispatch") AddDispatchLayer(c.store, &*m);
         if (layer == "drift" || layer == "evidence")
           if (Status s = AddJudgedLayer(c.store, layer, q.fingerprint, &*m); !s.ok()) return FromStatus(s);
         // Each failed cell's words, with timeouts named after the suite's stages (matrix_markdown.h).
         const json& shown = (*m)["suite_version"];
         const std::optional<int> version = shown.is_number() ? std::optional<int>(shown.get<int>()) : std::nullopt;
         auto suite = c.store.GetSuite((*m)["suite"].get<std::string>(), version);
         AddCellReasons(suite.ok() ? suite->definition : json::object(), &*m);
         if (format == "markdown")
           return http::Text(200, "text/markdown; charset=utf-8", MatrixMarkdown(*m, MatrixNodes(c.store, *m)));
         if (format == "json") return http::Json(*m);
         return http::Text(200, "text/csv; charset=utf-8", MatrixCsv(*m));
       }},
      {"GET", "/api/v1/history", Role::kRead,
       [&c](Request& r) -> Response {
         auto suite = r.Query("suite");
         auto config = r.Query("config");
         if (!suite) return http::Problem(422, "Unprocessable Entity", "suite is required", "suite");
         if (!config) {
           // param.NAME=VALUE, as GET /api/v1/trials takes them: together they name one config.
           auto key = ConfigKeyFromParams(c.store, *suite, r);
           if (!key.ok()) return FromStatus(key.status());
           config = *key;
         }
         auto h = store::History(c.store, *suite, *config);
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
         auto s = store::Signatures(c.store, r.Query("suite"), sweep);
         if (!s.ok()) return FromStatus(s.status());
         if (!WantsCsv(r)) return http::Json(*s);
         return http::Text(200, "text/csv; charset=utf-8", SignaturesCsv(*s));
       }},
      {"GET", "/api/v1/flaky", Role::kRead,
       [&c](Request& r) -> Response {
         auto suite = r.Query("suite");
         if (!suite || suite->empty()) return http::Problem(422, "Unprocessable Entity", "suite is required", "suite");
         std::optional<int> version;
         if (auto bad = SuiteVersionOfQuery(r, &version)) return *bad;
         auto f = store::FlakyCells(c.store, *suite, version);
         if (!f.ok()) return FromStatus(f.status());
         if (!WantsCsv(r)) return http::Json(*f);
         return http::Text(200, "text/csv; charset=utf-8", FlakyCsv(*f));
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
         std::optional<store::RegressionKind> kind;
         if (const std::string k = r.Query("kind").value_or(""); !k.empty()) {
           kind = store::ParseRegressionKind(k);
           if (!kind) return http::Problem(422, "Unprocessable Entity", "kind is verdict, metric or ordered", "kind");
         }
         // A suite no one uploaded is a typo, not a suite without regressions: a CI gate that
         // names it must fail, not pass on an empty list.
         if (auto suite = r.Query("suite"))
           if (auto s = c.store.GetSuite(*suite); !s.ok()) return FromStatus(s.status());
         store::QueryBudget budget = c.store.NewQuery();
         auto g = store::Regressions(c.store, r.Query("suite"), threshold, &budget);
         if (!g.ok()) return FromStatus(g.status());
         return http::Json(store::RegressionsJson(*g, kind));
       }},
  };
}

}  // namespace gauntlet::api
