#include "store/analytics.h"

#include <algorithm>
#include <map>
#include <deque>
#include <set>
#include <unordered_map>

#include "store/results_index.h"
#include "core/json_text.h"

namespace gauntlet {
using nlohmann::json;

namespace {

json MetricJson(sql::Stmt& s, int name_col) {
  if (s.IsNull(name_col)) return nullptr;
  return {{"name", s.Text(name_col)}, {"value", s.Double(name_col + 1)}, {"unit", s.Text(name_col + 2)}};
}

// One finished (or pending) trial or cell, as the pivot reads it.
struct Row {
  const json* config = nullptr;  // owned by the query's config store (one per distinct config)
  std::string hardware, verdict, signature;
  int64_t trial = 0, at = 0;
  json metric, counts;
};

struct Agg {
  json counts = json::object();
  int64_t at = -1, trial = 0;
  std::string verdict, signature;
  json metric;
};

// Position of a value in the parameter's declared list, so rows follow the suite's order.
int Rank(const json& def, const std::string& param, const std::string& v) {
  if (!def.contains("parameters") || !def["parameters"].contains(param)) return 1 << 20;
  json p = def["parameters"][param];
  if (p.is_object()) p = p.value("values", json::array());
  if (!p.is_array()) return 1 << 20;
  for (size_t i = 0; i < p.size(); ++i)
    if (JsonText(p[i]) == v) return static_cast<int>(i);
  return 1 << 20;
}

}  // namespace

namespace {

// The trials of one sweep or fingerprint (each its own row), or else the suite's cells.
std::vector<Row> ReadMatrixRows(sql::Db& db, const MatrixQuery& q, std::deque<json>* configs) {
  std::vector<Row> rows;
  if (q.sweep || q.fingerprint) {
    std::string sql =
        "SELECT t.config, COALESCE(t.hardware, ''), COALESCE(t.verdict, ''), COALESCE(t.signature, ''), t.id,"
        " COALESCE(t.finished_at, 0), t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''), t.state,"
        " t.config_key FROM trials t JOIN suites su ON su.id = t.suite_id WHERE su.name = ?";
    if (q.sweep) sql += " AND t.sweep_id = ?";
    if (q.fingerprint) sql += " AND t.fingerprint = ?";
    auto s = db.Prepare(sql);
    int i = 1;
    s.Bind(i++, q.suite);
    if (q.sweep) s.Bind(i++, *q.sweep);
    if (q.fingerprint) s.Bind(i++, *q.fingerprint);
    // A sweep repeats each config over targets and repeats: parse each config's JSON once.
    std::unordered_map<std::string, const json*> seen;
    while (s.Step()) {
      Row r;
      auto [it, fresh] = seen.try_emplace(s.Text(10), nullptr);
      if (fresh) it->second = &configs->emplace_back(json::parse(s.TextView(0)));
      r.config = it->second;
      r.hardware = s.Text(1);
      std::string state = s.Text(9);
      r.verdict = state == "done" ? s.Text(2) : "";
      r.signature = s.Text(3);
      r.trial = s.Int(4);
      r.at = s.Int(5);
      r.metric = MetricJson(s, 6);
      r.counts = {{state == "done" ? r.verdict : state, 1}};
      rows.push_back(std::move(r));
    }
    return rows;
  }
  auto s = db.Prepare(
      "SELECT config, hardware, verdict, signature, trial_id, last_seen, metric_name, metric_value,"
      " COALESCE(metric_unit, ''), counts FROM cells WHERE suite = ?");
  s.Bind(1, q.suite);
  while (s.Step()) {
    Row r;
    r.config = &configs->emplace_back(json::parse(s.TextView(0)));
    r.hardware = s.Text(1);
    r.verdict = s.Text(2);
    r.signature = s.Text(3);
    r.trial = s.Int(4);
    r.at = s.Int(5);
    r.metric = MetricJson(s, 6);
    r.counts = json::parse(s.TextView(9));
    rows.push_back(std::move(r));
  }
  return rows;
}

using CellKey = std::pair<std::vector<std::string>, std::string>;  // (row values, column value)

// Rows folded into cells: counts add up; the latest judged verdict wins; a skip never hides a real
// verdict; pending trials only count.
std::map<CellKey, Agg> Aggregate(const std::vector<Row>& rows, const MatrixQuery& q) {
  std::map<CellKey, Agg> cells;
  for (auto& r : rows) {
    std::vector<std::string> rk;
    const json& cfg = *r.config;
    for (auto& p : q.rows) rk.push_back(cfg.contains(p) ? JsonText(cfg[p]) : "");
    std::string ck = q.cols == "hardware" ? r.hardware : (cfg.contains(q.cols) ? JsonText(cfg[q.cols]) : "");
    if (q.cols == "hardware" && ck.empty()) ck = "unassigned";
    Agg& a = cells[{rk, ck}];
    for (auto& [k, v] : r.counts.items()) a.counts[k] = a.counts.value(k, int64_t{0}) + v.get<int64_t>();
    if (r.verdict.empty()) continue;
    bool better = a.verdict.empty() || (Severity(a.verdict) < 0 && Severity(r.verdict) >= 0) ||
                  ((Severity(r.verdict) >= 0) == (Severity(a.verdict) >= 0) && r.at > a.at);
    if (better) {
      a.at = r.at;
      a.trial = r.trial;
      a.verdict = r.verdict;
      a.signature = r.signature;
      a.metric = r.metric;
    }
  }
  return cells;
}

// Row and column keys in the suite's declared value order (hardware columns by name).
std::pair<std::vector<std::vector<std::string>>, std::vector<std::string>> SortedKeys(
    const std::map<CellKey, Agg>& cells, const MatrixQuery& q, const json& def) {
  std::set<std::vector<std::string>> row_set;
  std::set<std::string> col_set;
  for (auto& [k, a] : cells) {
    row_set.insert(k.first);
    col_set.insert(k.second);
  }
  std::vector<std::vector<std::string>> row_keys(row_set.begin(), row_set.end());
  std::sort(row_keys.begin(), row_keys.end(), [&](const auto& a, const auto& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      int ra = Rank(def, q.rows[i], a[i]), rb = Rank(def, q.rows[i], b[i]);
      if (ra != rb) return ra < rb;
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  });
  std::vector<std::string> col_keys(col_set.begin(), col_set.end());
  if (q.cols != "hardware")
    std::sort(col_keys.begin(), col_keys.end(), [&](const auto& a, const auto& b) {
      int ra = Rank(def, q.cols, a), rb = Rank(def, q.cols, b);
      return ra != rb ? ra < rb : a < b;
    });
  return {row_keys, col_keys};
}

}  // namespace

Result<json> Matrix(Store& store, const MatrixQuery& q) {
  auto suite = store.GetSuite(q.suite);
  if (!suite.ok()) return suite.status();
  const json& def = suite->definition;
  if (q.rows.empty() || q.rows.size() > 2) return Status::Invalid("rows names one or two parameters", "rows");
  for (auto& r : q.rows)
    if (!def["parameters"].contains(r)) return Status::Invalid("'" + r + "' is not a parameter of " + q.suite, "rows");
  if (q.cols != "hardware" && !def["parameters"].contains(q.cols))
    return Status::Invalid("cols is 'hardware' or a parameter of " + q.suite, "cols");
  std::vector<Row> rows;
  std::deque<json> configs;  // stable addresses for Row::config
  try {
    store.Read([&](sql::Db& db) { rows = ReadMatrixRows(db, q, &configs); });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  const auto cells = Aggregate(rows, q);
  auto [row_keys, col_keys] = SortedKeys(cells, q, def);
  json out_cells = json::array();
  for (auto& [k, a] : cells) {
    json c = {{"row", k.first}, {"col", k.second}, {"counts", a.counts}};
    c["verdict"] = a.verdict.empty() ? json() : json(a.verdict);
    c["signature"] = a.signature.empty() ? json() : json(a.signature);
    c["metric"] = a.metric.is_null() ? json() : a.metric;
    c["last_seen"] = a.at >= 0 ? json(a.at) : json();
    c["trial"] = a.trial ? json(a.trial) : json();
    out_cells.push_back(std::move(c));
  }
  return json{{"suite", q.suite},
              {"rows", q.rows},
              {"cols", q.cols},
              {"sweep", q.sweep ? json(*q.sweep) : json()},
              {"key_metric", def.contains("key_metric") ? def["key_metric"] : json()},
              {"row_keys", row_keys},
              {"col_keys", col_keys},
              {"cells", out_cells}};
}

Result<json> History(Store& store, const std::string& suite, const std::string& config_key) {
  if (auto s = store.GetSuite(suite); !s.ok()) return s.status();
  std::map<std::pair<std::string, std::string>, json> series;
  try {
    store.Read([&](sql::Db& db) {
      auto s = db.Prepare(
          "SELECT t.id, t.verdict, COALESCE(t.signature, ''), t.finished_at, COALESCE(t.hardware, ''),"
          " COALESCE(t.fingerprint, ''), t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''), t.sweep_id,"
          " su.version FROM trials t JOIN suites su ON su.id = t.suite_id"
          " WHERE su.name = ? AND t.config_key = ? AND t.state = 'done' AND t.verdict != 'cancelled'"
          " ORDER BY t.finished_at");
      s.Bind(1, suite).Bind(2, config_key);
      while (s.Step()) {
        json& pts = series[{s.Text(4), s.Text(5)}];
        if (pts.is_null()) pts = json::array();
        pts.push_back({{"trial", s.Int(0)}, {"verdict", s.Text(1)}, {"signature", s.Text(2)},
                       {"finished_at", s.Int(3)}, {"metric", MetricJson(s, 6)}, {"sweep", s.Int(9)},
                       {"suite_version", s.Int(10)}});
      }
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  json items = json::array();
  for (auto& [k, pts] : series) {
    json fp = json::parse(k.second, nullptr, false);
    items.push_back({{"hardware", k.first}, {"fingerprint", fp.is_discarded() ? json(k.second) : fp}, {"points", pts}});
  }
  return json{{"suite", suite}, {"config", config_key}, {"items", items}};
}

Result<json> Signatures(Store& store, const std::optional<std::string>& suite, std::optional<int64_t> sweep) {
  struct T {
    int64_t id;
    json config;
    std::string hardware, verdict, signature;
  };
  std::vector<T> all;
  try {
    store.Read([&](sql::Db& db) {
      std::string sql =
          "SELECT t.id, t.config, COALESCE(t.hardware, ''), t.verdict, COALESCE(t.signature, '') FROM trials t"
          " JOIN suites su ON su.id = t.suite_id WHERE t.state = 'done' AND t.verdict NOT IN ('cancelled', 'skipped')";
      if (suite) sql += " AND su.name = ?";
      if (sweep) sql += " AND t.sweep_id = ?";
      sql += " ORDER BY t.id DESC LIMIT 200000";  // bound the work on a huge store: the recent past
      auto s = db.Prepare(sql);
      int i = 1;
      if (suite) s.Bind(i++, *suite);
      if (sweep) s.Bind(i++, *sweep);
      while (s.Step()) all.push_back({s.Int(0), json::parse(s.TextView(1)), s.Text(2), s.Text(3), s.Text(4)});
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  std::map<std::string, std::vector<const T*>> clusters;
  for (auto& t : all)
    if (t.verdict != "passed") clusters[t.signature.empty() ? t.verdict : t.signature].push_back(&t);
  json items = json::array();
  for (auto& [sig, ts] : clusters) {
    std::set<std::string> hws;
    json ids = json::array();
    for (auto* t : ts) {
      hws.insert(t->hardware);
      if (ids.size() < 20) ids.push_back(t->id);
    }
    // The explaining value: on the hardware where the cluster is largest, the parameter value that
    // every clustered trial shares and that covers the largest share of the trials holding it.
    json explained = nullptr;
    std::map<std::string, int> per_hw;
    for (auto* t : ts) per_hw[t->hardware]++;
    std::string hw = std::max_element(per_hw.begin(), per_hw.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    std::vector<const T*> on_hw;
    for (auto* t : ts)
      if (t->hardware == hw) on_hw.push_back(t);
    double best = -1;
    for (auto& [p, v] : on_hw[0]->config.items()) {
      bool shared = true;
      for (auto* t : on_hw) shared = shared && t->config.contains(p) && t->config[p] == v;
      if (!shared) continue;
      int with = 0, hit = 0;
      for (auto& t : all)
        if (t.hardware == hw && t.config.contains(p) && t.config[p] == v) {
          ++with;
          hit += t.signature == sig || (t.signature.empty() && t.verdict == sig);
        }
      // Prefer values whose trials all fail this way; among those, the broadest (fewest params
      // pin it down: the value held by the most trials).
      double score = with ? static_cast<double>(hit) / with + with * 1e-9 : 0;
      if (score > best) {
        best = score;
        explained = {{"param", p}, {"value", v}, {"hardware", hw}, {"share", with ? static_cast<double>(hit) / with : 0}};
      }
    }
    items.push_back({{"signature", sig}, {"verdict", ts[0]->verdict}, {"count", ts.size()}, {"trials", ids},
                     {"hardware", hws}, {"explained_by", explained}});
  }
  std::sort(items.begin(), items.end(), [](const json& a, const json& b) { return a["count"] > b["count"]; });
  return json{{"items", items}};
}

Result<json> Regressions(Store& store, const std::optional<std::string>& suite, double threshold) {
  json items = json::array();
  try {
    store.Read([&](sql::Db& db) {
      std::string sql =
          "SELECT suite, config_key, config, hardware, verdict, signature, trial_id, metric_name, metric_value,"
          " COALESCE(metric_unit, ''), prev_verdict, COALESCE(prev_signature, ''), prev_trial, prev_metric, last_seen"
          " FROM cells WHERE prev_verdict IS NOT NULL";
      if (suite) sql += " AND suite = ?";
      auto s = db.Prepare(sql);
      if (suite) s.Bind(1, *suite);
      while (s.Step()) {
        const std::string now = s.Text(4), before = s.Text(10);
        json after = {{"verdict", now}, {"signature", s.Text(5)}, {"trial", s.Int(6)}, {"metric", MetricJson(s, 7)}};
        json prev = {{"verdict", before}, {"signature", s.Text(11)}, {"trial", s.Int(12)},
                     {"metric", s.IsNull(13) ? json() : json(s.Double(13))}};
        std::string kind;
        if (Severity(now) > Severity(before)) kind = "verdict";
        else if (now == "passed" && before == "passed" && !s.IsNull(8) && !s.IsNull(13) && s.Double(13) > 0 &&
                 s.Double(8) < s.Double(13) * (1 - threshold))
          kind = "metric";
        if (kind.empty()) continue;
        items.push_back({{"suite", s.Text(0)}, {"config_key", s.Text(1)}, {"config", json::parse(s.TextView(2))},
                         {"hardware", s.Text(3)}, {"kind", kind}, {"before", prev}, {"after", after},
                         {"at", s.Int(14)}});
      }
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  return json{{"items", items}, {"threshold", threshold}};
}

}  // namespace gauntlet
