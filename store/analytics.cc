#include "store/analytics.h"

#include <algorithm>
#include <map>
#include <set>

#include "store/store_rows.h"
#include "store/results_index.h"

namespace gauntlet::store {
using nlohmann::json;

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
                       {"finished_at", s.Int(3)}, {"metric", MetricJson(detail::MetricColumns(s, 6))}, {"sweep", s.Int(9)},
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

namespace {

// A failed or passed run as failure clustering sees it.
struct ClusterTrial {
  int64_t id;
  json config;
  std::string hardware;
  Verdict verdict;
  std::string signature;
};

// The best explanation found so far: parameter values every clustered trial shares, and the share of
// the trials holding them that fail this way.
struct Explanation {
  std::vector<std::pair<std::string, json>> values;
  double share = -1;
  int with = 0;
};

// The explanation of the cluster `sig` (its trials `ts`, all runs in `all`): on the hardware where
// the cluster is largest, the parameter value every clustered trial shares that covers the largest
// share of the trials holding it; or, when two values together cover a larger share than any one
// does (it fails only with backend=x and dtype=fp32), that pair. null when nothing is shared.
json Explain(const std::vector<ClusterTrial>& all, const std::vector<const ClusterTrial*>& ts, const std::string& sig) {
  std::map<std::string, int> per_hw;
  for (auto* t : ts) per_hw[t->hardware]++;
  const std::string hw =
      std::max_element(per_hw.begin(), per_hw.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  std::vector<const ClusterTrial*> on_hw, runs;
  for (auto* t : ts)
    if (t->hardware == hw) on_hw.push_back(t);
  for (auto& t : all)
    if (t.hardware == hw) runs.push_back(&t);
  std::vector<std::pair<std::string, json>> shared;
  for (auto& [p, v] : on_hw[0]->config.items()) {
    bool all_have = true;
    for (auto* t : on_hw) all_have = all_have && t->config.contains(p) && t->config[p] == v;
    if (all_have) shared.emplace_back(p, v);
  }
  auto measure = [&](std::vector<std::pair<std::string, json>> values) {
    Explanation e{std::move(values)};
    int hit = 0;
    for (auto* t : runs) {
      bool holds = true;
      for (auto& [p, v] : e.values) holds = holds && t->config.contains(p) && t->config[p] == v;
      if (!holds) continue;
      ++e.with;
      hit += t->signature == sig || (t->signature.empty() && Name(t->verdict) == sig);
    }
    e.share = e.with ? static_cast<double>(hit) / e.with : 0;
    return e;
  };
  // Prefer values whose trials all fail this way; among those, the broadest (the value held by the
  // most trials).
  auto better = [](const Explanation& a, const Explanation& b) {
    return a.share > b.share + 1e-9 || (a.share > b.share - 1e-9 && a.with > b.with);
  };
  Explanation best;
  for (auto& pv : shared)
    if (Explanation e = measure({pv}); best.values.empty() || better(e, best)) best = std::move(e);
  // A pair only where no single value explains it fully, and only when it explains strictly more.
  if (!best.values.empty() && best.share < 1 - 1e-9) {
    Explanation pair;
    for (size_t i = 0; i < shared.size(); ++i)
      for (size_t j = i + 1; j < shared.size(); ++j)
        if (Explanation e = measure({shared[i], shared[j]}); pair.values.empty() || better(e, pair)) pair = std::move(e);
    if (!pair.values.empty() && pair.share > best.share + 1e-9) best = std::move(pair);
  }
  if (best.values.empty()) return nullptr;
  // `param` and `value` name the one value, or the pair joined by " & " (readable where only they
  // are shown); `params` holds each value apart.
  std::string param, value;
  json params = json::object();
  for (auto& [p, v] : best.values) {
    param += (param.empty() ? "" : " & ") + p;
    value += (value.empty() ? "" : " & ") + (v.is_string() ? v.get<std::string>() : v.dump());
    params[p] = v;
  }
  json out = {{"param", param}, {"value", best.values.size() == 1 ? best.values[0].second : json(value)},
              {"params", params}, {"hardware", hw}, {"share", best.share}};
  return out;
}

}  // namespace

Result<json> Signatures(Store& store, const std::optional<std::string>& suite, std::optional<int64_t> sweep) {
  std::vector<ClusterTrial> all;
  try {
    store.Read([&](sql::Db& db) {
      // Runs only: a reused trial (never started, its verdict copied from the trial it names) is
      // that trial's finding again, and counting it would weigh one run twice.
      std::string sql =
          "SELECT t.id, t.config, COALESCE(t.hardware, ''), t.verdict, COALESCE(t.signature, '') FROM trials t"
          " JOIN suites su ON su.id = t.suite_id WHERE t.state = 'done' AND t.verdict NOT IN ('cancelled', 'skipped')"
          " AND NOT (t.started_at IS NULL AND t.evidence_trial IS NOT NULL)";
      if (suite) sql += " AND su.name = ?";
      if (sweep) sql += " AND t.sweep_id = ?";
      sql += " ORDER BY t.id DESC LIMIT 200000";  // bound the work on a huge store: the recent past
      auto s = db.Prepare(sql);
      int i = 1;
      if (suite) s.Bind(i++, *suite);
      if (sweep) s.Bind(i++, *sweep);
      while (s.Step()) all.push_back({s.Int(0), json::parse(s.TextView(1)), s.Text(2), detail::VerdictColumn(s.TextView(3)), s.Text(4)});
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  std::map<std::string, std::vector<const ClusterTrial*>> clusters;
  for (auto& t : all)
    if (t.verdict != Verdict::kPassed) clusters[t.signature.empty() ? std::string(Name(t.verdict)) : t.signature].push_back(&t);
  json items = json::array();
  for (auto& [sig, ts] : clusters) {
    std::set<std::string> hws;
    json ids = json::array();
    for (auto* t : ts) {
      hws.insert(t->hardware);
      if (ids.size() < 20) ids.push_back(t->id);
    }
    items.push_back({{"signature", sig}, {"verdict", Name(ts[0]->verdict)}, {"count", ts.size()}, {"trials", ids},
                     {"hardware", hws}, {"explained_by", Explain(all, ts, sig)}});
  }
  std::sort(items.begin(), items.end(), [](const json& a, const json& b) { return a["count"] > b["count"]; });
  return json{{"items", items}};
}

}  // namespace gauntlet::store
