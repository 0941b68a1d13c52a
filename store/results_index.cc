#include "store/results_index.h"

#include <algorithm>

#include "core/outcome_order.h"
#include "core/verdict.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {
std::optional<Metric> Read(const std::string& name, const json& v) {
  if (v.is_number()) return Metric{name, v.get<double>(), ""};
  if (v.is_object() && v.contains("value") && v["value"].is_number())
    return Metric{name, v["value"].get<double>(), v.value("unit", "")};
  return std::nullopt;
}
int Concurrency(const std::string& name) {
  auto at = name.rfind("@c");
  if (at == std::string::npos) return 0;
  try {
    return std::stoi(name.substr(at + 2));
  } catch (...) {
    return 0;
  }
}
}  // namespace

json MetricJson(const std::optional<Metric>& m) {
  if (!m) return nullptr;
  return {{"name", m->name}, {"value", m->value}, {"unit", m->unit}};
}

std::optional<Metric> KeyMetric(const std::string& key, const json& metrics) {
  if (!metrics.is_object() || metrics.empty()) return std::nullopt;
  if (!key.empty() && metrics.contains(key)) return Read(key, metrics[key]);
  std::optional<Metric> best;
  int best_c = -1;
  for (auto& [k, v] : metrics.items())
    if (k.rfind("output_tok_s", 0) == 0 && Concurrency(k) > best_c) {
      best = Read(k, v);
      best_c = Concurrency(k);
    }
  if (best) return best;
  for (const char* k : {"tflops", "gbps", "tok_s", "ms_p50", "ms"})
    if (metrics.contains(k))
      if (auto m = Read(k, metrics[k])) return m;
  for (auto& [k, v] : metrics.items())
    if (auto m = Read(k, v)) return m;
  return std::nullopt;
}

namespace {

// `judged` (fingerprint -> judged verdicts seen under it) with `u`'s verdict added when it is judged:
// what each software version said, for the flaky list (store/flaky.cc).
std::string AddJudged(const std::string& judged, const CellUpdate& u) {
  json j = json::parse(judged.empty() ? "{}" : judged, nullptr, false);
  if (!j.is_object()) j = json::object();
  if (Info(u.verdict).judged) {
    json& seen = j[u.fingerprint];
    if (!seen.is_array()) seen = json::array();
    const std::string name(Name(u.verdict));
    if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
  }
  return j.dump();
}

// The cell's latest judged runs (`recent`, migration 19) with `u` added, oldest first; sets *flaky
// by the order rule (core/outcome_order.h RunsAreFlaky). A run that is neither judged nor a flaky
// trial's adds nothing. Entries that are not [at, sweep, passed, flaky] are dropped.
std::string AddRecent(sql::Db& db, std::string_view recent, const CellUpdate& u, bool* flaky) {
  std::vector<OrderedRun> runs;
  const json j = json::parse(recent, nullptr, false);
  if (j.is_array())
    for (const json& e : j)
      if (e.is_array() && e.size() == 4 && e[0].is_number_integer() && e[1].is_number_integer())
        runs.push_back({e[0].get<int64_t>(), e[1].get<int64_t>(), e[2] == 1 || e[2] == true, e[3] == 1 || e[3] == true});
  if (Info(u.verdict).judged || u.flaky) {
    auto& q = db.Cached("SELECT COALESCE(sweep_id, 0) FROM trials WHERE id = ?");
    q.Bind(1, u.trial);
    const int64_t sweep = q.Step() ? q.Int(0) : 0;
    q.Reset();
    runs.push_back({u.at, sweep, u.verdict == Verdict::kPassed, u.flaky});
  }
  KeepLatestRuns(&runs);
  *flaky = RunsAreFlaky(runs);
  json out = json::array();
  for (const OrderedRun& r : runs) out.push_back({r.at, r.batch, r.passed ? 1 : 0, r.flaky ? 1 : 0});
  return out.dump();
}

}  // namespace

void UpsertCell(sql::Db& db, const CellUpdate& u) {
  if (u.hardware.empty() || u.verdict == Verdict::kCancelled) return;
  if (u.reused) {
    // Reuse copies a verdict of the same suite version, config and hardware class, so its cell exists
    // (unless its trial's was removed): said beside the runs, counted as none of them.
    auto& r = db.Cached("UPDATE cells SET reused = reused + 1 WHERE suite=? AND suite_version=? AND config_key=? AND hardware=?");
    r.Bind(1, u.suite).Bind(2, u.suite_version).Bind(3, u.config_key).Bind(4, u.hardware).Run();
    return;
  }
  auto& q = db.Cached(
      "SELECT verdict, judged, recent, last_seen, trial_id FROM cells WHERE suite=? AND suite_version=? AND config_key=? AND hardware=?");
  q.Bind(1, u.suite).Bind(2, u.suite_version).Bind(3, u.config_key).Bind(4, u.hardware);
  const std::string path = "$.\"" + std::string(Name(u.verdict)) + "\"";
  bool flaky = false;
  if (!q.Step()) {
    q.Reset();
    const std::string judged = AddJudged("", u), recent = AddRecent(db, "[]", u, &flaky);
    auto& ins = db.Cached(
        "INSERT INTO cells(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id, fingerprint,"
        " metric_name, metric_value, metric_unit, last_seen, counts, judged, flaky, recent)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,json_object(?, 1),?,?,?)");
    ins.Bind(1, u.suite).Bind(2, u.suite_version).Bind(3, u.config_key).Bind(4, u.hardware).Bind(5, u.config_json);
    ins.Bind(6, Name(u.verdict)).Bind(7, u.signature).Bind(8, u.trial).Bind(9, u.fingerprint);
    if (u.metric) ins.Bind(10, u.metric->name).Bind(11, u.metric->value).Bind(12, u.metric->unit);
    else ins.BindNull(10).BindNull(11).BindNull(12);
    ins.Bind(13, u.at).Bind(14, Name(u.verdict)).Bind(15, judged).Bind(16, flaky ? 1 : 0).Bind(17, recent).Run();
    return;
  }
  const Verdict old_verdict = detail::VerdictColumn(q.TextView(0));
  const std::string judged = AddJudged(q.Text(1), u), recent = AddRecent(db, q.TextView(2), u, &flaky);
  // Reports arrive in any order (two GPUs, a slow network): the one shown is the one the matrix over
  // trials shows too, by finish time, never the one written last.
  const bool replace = Supersedes({u.verdict, u.at, u.trial}, {old_verdict, q.Int(3), q.Int(4)});
  q.Reset();
  if (!replace) {
    auto& c = db.Cached(
        "UPDATE cells SET counts=json_set(counts, ?, COALESCE(json_extract(counts, ?), 0) + 1), judged=?, flaky=?,"
        " recent=? WHERE suite=? AND suite_version=? AND config_key=? AND hardware=?");
    c.Bind(1, path).Bind(2, path).Bind(3, judged).Bind(4, flaky ? 1 : 0).Bind(5, recent).Bind(6, u.suite);
    c.Bind(7, u.suite_version).Bind(8, u.config_key).Bind(9, u.hardware).Run();
    return;
  }
  // The verdict being replaced becomes "previous" only if it was a real one: a skip between two runs
  // must not hide a regression.
  const bool keep_prev = Info(old_verdict).severity < 0;
  auto& up = db.Cached(
      "UPDATE cells SET prev_verdict=CASE WHEN ? THEN prev_verdict ELSE verdict END,"
      " prev_signature=CASE WHEN ? THEN prev_signature ELSE signature END,"
      " prev_trial=CASE WHEN ? THEN prev_trial ELSE trial_id END,"
      " prev_metric=CASE WHEN ? THEN prev_metric ELSE metric_value END,"
      " config=?, verdict=?, signature=?, trial_id=?, fingerprint=?, metric_name=?, metric_value=?, metric_unit=?,"
      " last_seen=?, counts=json_set(counts, ?, COALESCE(json_extract(counts, ?), 0) + 1), judged=?, flaky=?,"
      " recent=? WHERE suite=? AND suite_version=? AND config_key=? AND hardware=?");
  // One parameter per statement: a chain of Bind(i++, ...) is ordered since C++17, but g++ still
  // warns that it may not be (-Wsequence-point), and a reader should not have to know the rule.
  int i = 0;
  for (int k = 0; k < 4; ++k) up.Bind(++i, keep_prev ? 1 : 0);
  up.Bind(++i, u.config_json);
  up.Bind(++i, Name(u.verdict));
  up.Bind(++i, u.signature);
  up.Bind(++i, u.trial);
  up.Bind(++i, u.fingerprint);
  if (u.metric) {
    up.Bind(++i, u.metric->name);
    up.Bind(++i, u.metric->value);
    up.Bind(++i, u.metric->unit);
  } else {
    for (int k = 0; k < 3; ++k) up.BindNull(++i);
  }
  up.Bind(++i, u.at);
  up.Bind(++i, path);
  up.Bind(++i, path);
  up.Bind(++i, judged);
  up.Bind(++i, flaky ? 1 : 0);
  up.Bind(++i, recent);
  up.Bind(++i, u.suite);
  up.Bind(++i, u.suite_version);
  up.Bind(++i, u.config_key);
  up.Bind(++i, u.hardware);
  up.Run();
}

}  // namespace gauntlet::store
