#include "store/suite_runs.h"

#include <map>

#include "store/results_index.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

Config ConfigOf(std::string_view text) {
  Config c;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return c;
  for (auto& [k, v] : j.items())
    if (auto s = ScalarString(v)) c[k] = *s;
  return c;
}

// What a trial's latest result's stage entries say beyond its verdict: the dispatch check of the
// stage that had one, and the framework's answer of a probe stage (SUITE_FORMAT.md "probe stages").
// Parsed only when the text names either, so a suite without them costs a substring search a trial.
struct StageFacts {
  RunDispatch dispatch = RunDispatch::kNone;
  std::optional<FrameworkClaim> claim;
};

StageFacts FactsOf(std::string_view stages, std::string_view fingerprint, int64_t trial) {
  StageFacts f;
  if (stages.find("\"dispatch\"") == std::string_view::npos && stages.find("\"probe\"") == std::string_view::npos) return f;
  const json j = json::parse(stages, nullptr, false);
  if (!j.is_array()) return f;
  for (const auto& st : j) {
    if (!st.is_object()) continue;
    if (st.contains("dispatch") && st["dispatch"].is_object()) {
      const std::string status = st["dispatch"].value("status", "");
      if (status == "verified") f.dispatch = RunDispatch::kVerified;
      else if (status == "unverified") f.dispatch = RunDispatch::kUnverified;
    }
    const json& p = st.contains("probe") ? st["probe"] : json();
    if (!p.is_object() || !p.contains("supported") || !p["supported"].is_boolean()) continue;
    FrameworkClaim c;
    c.supported = p["supported"].get<bool>();
    c.reason = p.value("reason", "");
    c.framework = p.value("framework", "");
    c.trial = trial;
    if (!c.framework.empty()) {
      const json fp = json::parse(fingerprint, nullptr, false);
      if (fp.is_object() && fp.contains(c.framework) && fp[c.framework].is_string()) c.version = fp[c.framework];
    }
    f.claim = std::move(c);
  }
  return f;
}

}  // namespace

Result<std::vector<ConfigRuns>> LoadSuiteRuns(Store& store, const SuiteRunsQuery& q) {
  return detail::Guard([&]() -> Result<std::vector<ConfigRuns>> {
    return store.Read([&](sql::Db& db) -> Result<std::vector<ConfigRuns>> {
      std::string where = " FROM trials t WHERE t.suite_id = ? AND t.state = 'done' AND t.hardware IS NOT NULL";
      if (q.hardware) where += " AND t.hardware = ?";
      if (q.fingerprint) where += " AND t.fingerprint = ?";
      auto bind = [&](sql::Stmt& s) {
        int i = 1;
        s.Bind(i++, q.suite_id);
        if (q.hardware) s.Bind(i++, *q.hardware);
        if (q.fingerprint) s.Bind(i++, *q.fingerprint);
      };
      // The bound is checked before anything is read, so an over-large question costs one count.
      auto count = db.Prepare("SELECT COUNT(*)" + where);
      bind(count);
      count.Step();
      if (count.Int(0) > q.max_trials)
        return Status::Invalid(std::to_string(count.Int(0)) + " trials match, more than the " +
                                   std::to_string(q.max_trials) + " one answer reads: name a hardware class",
                               "hardware");
      const std::string metrics_col =
          q.metric.empty() ? "NULL" : "(SELECT metrics FROM results r WHERE r.trial_id = t.id ORDER BY attempt DESC LIMIT 1)";
      auto s = db.Prepare(
          "SELECT t.config_key, t.hardware, t.config, t.verdict, COALESCE(t.signature, ''), t.id,"
          " COALESCE(t.fingerprint, ''), t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''),"
          " t.started_at IS NULL AND t.evidence_trial IS NOT NULL, " +
          metrics_col +
          ", (SELECT stages FROM results r WHERE r.trial_id = t.id ORDER BY attempt DESC LIMIT 1)" + where +
          " ORDER BY t.id");
      bind(s);
      std::map<std::pair<std::string, std::string>, ConfigRuns> by;
      while (s.Step()) {
        ConfigRuns& c = by[{s.Text(1), s.Text(0)}];
        if (c.config_key.empty()) {
          c.config_key = s.Text(0);
          c.hardware = s.Text(1);
          c.config = ConfigOf(s.TextView(2));
        }
        std::optional<double> metric;
        std::string name, unit;
        if (q.metric.empty()) {
          if (!s.IsNull(8)) {
            metric = s.Double(8);
            if (!s.IsNull(7)) name = s.Text(7);
            unit = s.Text(9);
          }
        } else if (!s.IsNull(11)) {
          const json metrics = detail::ParseOr(s.TextView(11), json::object());
          if (auto m = metrics.contains(q.metric) ? KeyMetric(q.metric, metrics) : std::nullopt) {
            metric = m->value;
            name = m->name;
            unit = m->unit;
          }
        }
        const bool reused = s.Int(10) != 0;
        StageFacts facts = s.IsNull(12) ? StageFacts{} : FactsOf(s.TextView(12), s.TextView(6), s.Int(5));
        const size_t values = c.metric.size();
        AddRun(c, detail::VerdictColumn(s.TextView(3)), s.Text(4), s.Int(5), s.Text(6), metric, reused, facts.dispatch);
        // The name and unit go with the values they describe: those of the latest run whose value
        // counts (a passed run), never a cancelled or failed run's, whose metric may be another
        // (a tok/s mean once read "2400 TFLOP/s").
        if (c.metric.size() > values) {
          c.metric_name = std::move(name);
          c.metric_unit = std::move(unit);
        }
        // A reused result's stages are the original trial's: its claim was heard there already.
        if (facts.claim && !reused) AddClaim(c, std::move(*facts.claim));
      }
      std::vector<ConfigRuns> out;
      out.reserve(by.size());
      for (auto& [k, c] : by) out.push_back(std::move(c));
      return out;
    });
  });
}

}  // namespace gauntlet::store
