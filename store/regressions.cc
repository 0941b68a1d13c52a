#include "store/regressions.h"

#include "store/outcome_history.h"

#include <algorithm>

#include "core/enum_names.h"
#include "core/pass_rate.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

constexpr std::string_view kRegressionKindNames[] = {"verdict", "metric", "ordered"};

json RegressionCellJson(const CellRegression& c) {
  json item = {{"suite", c.suite}, {"suite_version", c.suite_version}, {"config_key", c.config_key},
               {"config", c.config}, {"hardware", c.hardware}, {"kind", Name(c.kind)},
               {"before", {{"verdict", Name(c.before_verdict)}, {"signature", c.before_signature},
                           {"trial", c.before_trial}, {"metric", c.before_metric ? json(*c.before_metric) : json()}}},
               {"after", {{"verdict", Name(c.after_verdict)}, {"signature", c.after_signature},
                          {"trial", c.after_trial}, {"metric", MetricJson(c.after_metric)}}},
               {"at", c.at}};
  if (c.pass_rate) {
    item["flaky"] = true;
    item["pass_rate"] = *c.pass_rate;
  }
  return item;
}

}  // namespace

std::string_view Name(RegressionKind k) { return NameIn(kRegressionKindNames, k); }
std::optional<RegressionKind> ParseRegressionKind(std::string_view name) {
  return ParseIn<RegressionKind>(kRegressionKindNames, name);
}

Result<RegressionList> Regressions(Store& store, const std::optional<std::string>& suite, double threshold,
                                   QueryBudget* bounds) {
  RegressionList out;
  out.threshold = threshold;
  QueryBudget unbounded = QueryBudget::Unbounded();
  QueryBudget& budget = bounds ? *bounds : unbounded;
  try {
    store.ReadBounded(budget, [&](sql::Db& db) {
      std::string sql =
          "SELECT suite, config_key, config, hardware, verdict, signature, trial_id, metric_name, metric_value,"
          " COALESCE(metric_unit, ''), prev_verdict, COALESCE(prev_signature, ''), prev_trial, prev_metric, last_seen,"
          " judged, COALESCE(fingerprint, ''), counts, reused, suite_version FROM cells WHERE prev_verdict IS NOT NULL";
      if (suite) sql += " AND suite = ?";
      auto s = db.Prepare(sql);
      if (suite) s.Bind(1, *suite);
      while (s.Step()) {
        budget.Count();
        const Verdict now = detail::VerdictColumn(s.TextView(4)), before = detail::VerdictColumn(s.TextView(10));
        std::optional<RegressionKind> kind;
        if (Info(now).severity > Info(before).severity) kind = RegressionKind::kVerdict;
        else if (now == Verdict::kPassed && before == Verdict::kPassed && !s.IsNull(8) && !s.IsNull(13) && s.Double(13) > 0 &&
                 s.Double(8) < s.Double(13) * (1 - threshold))
          kind = RegressionKind::kMetric;
        if (!kind) continue;
        CellRegression c;
        c.suite = s.Text(0);
        c.suite_version = s.Int(19);
        c.config_key = s.Text(1);
        c.config = json::parse(s.TextView(2));
        c.hardware = s.Text(3);
        c.kind = *kind;
        c.after_verdict = now;
        c.after_signature = s.Text(5);
        c.after_trial = s.Int(6);
        c.after_metric = detail::MetricColumns(s, 7);
        c.before_verdict = before;
        c.before_signature = s.Text(11);
        c.before_trial = s.Int(12);
        if (!s.IsNull(13)) c.before_metric = s.Double(13);
        c.at = s.Int(14);
        // A verdict that got worse but did not stay worse (its runs passed and failed in turn, or it
        // passed again since; store/outcome_history.h) is a flake, not a regression: listed apart
        // with its measured pass rate. One change that stayed is a regression, whatever the fingerprint.
        if (c.kind == RegressionKind::kVerdict && FailureDidNotStay(db, c.suite, c.suite_version, c.config_key, c.hardware)) {
          c.pass_rate = PassRateJson(json::parse(s.TextView(17), nullptr, false), s.Int(18));
          out.flaky.push_back(std::move(c));
          continue;
        }
        out.cells.push_back(std::move(c));
      }
    });
  } catch (const sql::Error& e) {
    if (IsInterrupt(e.code()) && budget.why() != QueryBudget::Why::kNone)
      return budget.Answer("give suite= (regressions read every cell of every suite without it)", "suite");
    return Status::Internal(e.what());
  }
  auto ordered = OrderedRegressions(store, suite, &budget);
  if (!ordered.ok()) return ordered.status();
  out.ordered = std::move(*ordered);
  return out;
}

json RegressionsJson(const RegressionList& r, std::optional<RegressionKind> only) {
  json items = json::array(), flaky = json::array();
  for (const CellRegression& c : r.cells)
    if (!only || c.kind == *only) items.push_back(RegressionCellJson(c));
  if (!only || *only == RegressionKind::kOrdered)
    for (const OrderedRegression& o : r.ordered) items.push_back(OrderedRegressionJson(o));
  for (const CellRegression& c : r.flaky) flaky.push_back(RegressionCellJson(c));
  return {{"items", items}, {"flaky", flaky}, {"threshold", r.threshold}};
}

}  // namespace gauntlet::store
