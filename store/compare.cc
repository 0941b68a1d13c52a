#include "store/compare.h"

#include "store/outcome_history.h"

#include <algorithm>
#include <iterator>
#include <map>

#include "core/enum_names.h"
#include "core/verdict.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

struct Entry {
  std::string config_key, hardware;
  Verdict verdict = Verdict::kPassed;
  std::string signature, metric_name, metric_unit;
  json config;
  int64_t trial = 0, sweep = 0, suite_id = 0;
  std::string fingerprint;  // canonical JSON, as trials store it
  std::optional<double> metric;
};
using Key = std::pair<std::string, std::string>;  // config key, hardware class
using Side = std::map<Key, Entry>;

constexpr const char* kEntryCols =
    "t.config_key, COALESCE(t.hardware, ''), t.verdict, COALESCE(t.signature, ''), t.id, t.sweep_id, t.config,"
    " t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''), t.suite_id, COALESCE(t.fingerprint, '')"
    " FROM trials t JOIN suites su ON su.id = t.suite_id";
// Done, judged or failing, on known hardware: a cancelled trial says nothing, a queued one nothing yet.
constexpr const char* kDone = " t.state = 'done' AND t.hardware IS NOT NULL AND t.verdict != 'cancelled'";

Entry ReadEntry(sql::Stmt& s) {
  Entry e;
  e.config_key = s.Text(0);
  e.hardware = s.Text(1);
  e.verdict = detail::VerdictColumn(s.TextView(2));
  e.signature = s.Text(3);
  e.trial = s.Int(4);
  e.sweep = s.Int(5);
  e.config = json::parse(s.TextView(6), nullptr, false);
  if (!s.IsNull(7)) e.metric_name = s.Text(7);
  if (!s.IsNull(8)) e.metric = s.Double(8);
  e.metric_unit = s.Text(9);
  e.suite_id = s.Int(10);
  e.fingerprint = s.Text(11);
  return e;
}

// True when the config of `e` (suite version, config, hardware class) also passed under e's own
// fingerprint: failing now with the same software, it is flaky (its pass rate's interval holds
// neither 0 nor 1), not broken. A suite without a fingerprint command pools all its runs so, as the
// matrix's `flaky` state does.
// A sweep's repeats of one config × hardware disagree: the most severe verdict stands (the matrix
// never hides a failure either); among equals the latest.
void Keep(Side& side, Entry e, bool worst) {
  Key k{e.config_key, e.hardware};
  auto it = side.find(k);
  if (it == side.end() || !worst || Info(e.verdict).severity >= Info(it->second.verdict).severity)
    side[k] = std::move(e);
}

Result<Side> Load(sql::Db& db, const CompareSide& c, const Side* keys_of, QueryBudget& budget, int64_t* pending) {
  Side side;
  if (c.sweep) {
    auto chk = db.Prepare("SELECT COUNT(*), SUM(state != 'done') FROM trials WHERE sweep_id = ?");
    chk.Bind(1, *c.sweep);
    chk.Step();
    // Trials an expanding sweep has yet to store are pending too.
    auto ex = db.Prepare("SELECT CASE WHEN cancelled_at IS NULL THEN trial_count - COALESCE(materialized, trial_count)"
                         " ELSE 0 END FROM sweeps WHERE id = ?");
    ex.Bind(1, *c.sweep);
    if (!ex.Step()) return Status::NotFound("no sweep " + std::to_string(*c.sweep));
    *pending += (chk.IsNull(1) ? 0 : chk.Int(1)) + ex.Int(0);
    auto s = db.Prepare(std::string("SELECT ") + kEntryCols + " WHERE t.sweep_id = ? AND" + kDone + " ORDER BY t.id");
    s.Bind(1, *c.sweep);
    while (s.Step()) {
      budget.Count();
      Keep(side, ReadEntry(s), true);
    }
    return side;
  }
  if (c.before_sweep) {
    // Per config × hardware of the sweep: the latest judged trial before the sweep's own, elsewhere.
    auto s = db.Prepare(std::string("SELECT ") + kEntryCols +
                        " WHERE su.name = (SELECT su2.name FROM sweeps w JOIN suites su2 ON su2.id = w.suite_id"
                        " WHERE w.id = ?) AND t.config_key = ? AND t.hardware = ? AND t.sweep_id != ? AND t.id < ? AND" +
                        kDone + " AND t.verdict != 'skipped' ORDER BY t.id DESC LIMIT 1");
    for (auto& [k, e] : *keys_of) {
      s.Reset();
      s.Bind(1, *c.before_sweep).Bind(2, k.first).Bind(3, k.second).Bind(4, *c.before_sweep).Bind(5, e.trial);
      budget.Count();
      if (s.Step()) side[k] = ReadEntry(s);
    }
    return side;
  }
  if (c.suite.empty()) return Status::Invalid("name a sweep, or a suite with a version or fingerprint", "a");
  auto ex = db.Prepare("SELECT 1 FROM suites WHERE name = ?");
  ex.Bind(1, c.suite);
  if (!ex.Step()) return Status::NotFound("no suite '" + c.suite + "'");
  std::string sql = std::string("SELECT ") + kEntryCols + " WHERE su.name = ? AND" + kDone;
  if (c.suite_version) sql += " AND su.version = ?";
  if (c.fingerprint) sql += " AND COALESCE(t.fingerprint, '') = ?";
  auto s = db.Prepare(sql + " ORDER BY t.id");
  int i = 1;
  s.Bind(i++, c.suite);
  if (c.suite_version) s.Bind(i++, *c.suite_version);
  if (c.fingerprint) s.Bind(i++, *c.fingerprint);
  while (s.Step()) {
    budget.Count();
    Keep(side, ReadEntry(s), false);
  }
  return side;
}

json SideJson(const CompareSide& c) {
  json j = json::object();
  if (c.sweep) j["sweep"] = *c.sweep;
  if (c.before_sweep) j["before_sweep"] = *c.before_sweep;
  if (!c.suite.empty()) j["suite"] = c.suite;
  if (c.suite_version) j["suite_version"] = *c.suite_version;
  if (c.fingerprint) j["fingerprint"] = *c.fingerprint;
  return j;
}

std::optional<CompareEnd> EndOf(const Entry* e) {
  if (!e) return std::nullopt;
  CompareEnd out{e->verdict, e->signature, e->trial, e->sweep, std::nullopt};
  if (e->metric) out.metric = Metric{e->metric_name, *e->metric, e->metric_unit};
  return out;
}

constexpr std::string_view kChangeNames[] = {"broke", "flaky", "fixed", "changed", "new", "gone", "same"};
constexpr std::string_view kWhyNames[] = {"", "verdict", "metric", "passed and failed in turn"};
static_assert(std::size(kChangeNames) == kChangeCount);

}  // namespace

std::string_view Name(Change c) { return NameIn(kChangeNames, c); }
std::string_view Name(ChangeWhy w) { return NameIn(kWhyNames, w); }

Change CompareChange(std::optional<Verdict> av, const std::string& as, std::optional<Verdict> bv, const std::string& bs,
                     bool metric_fell) {
  if (!av) return Change::kNew;
  if (!bv) return Change::kGone;
  const bool a_passed = *av == Verdict::kPassed, b_passed = *bv == Verdict::kPassed;
  if (b_passed && !a_passed) return Change::kFixed;
  if (a_passed && !b_passed) return Change::kBroke;
  if (a_passed) return metric_fell ? Change::kBroke : Change::kSame;
  const int sa = Info(*av).severity, sb = Info(*bv).severity;
  if (sa >= 0 && sb > sa) return Change::kBroke;
  return *av == *bv && as == bs ? Change::kSame : Change::kChanged;
}

namespace {
// A pruned cell (skipped, never run) stands for the verdict its pruning implies: its signature is
// "skipped:" + the probe's signature ("skipped:unsupported:needs_sm100"). Two runs of one sweep
// prune in the order their probes finish, so a config with two reasons to fail is pruned by either;
// and one run may judge a config that the other pruned. Neither is a change of the config: a pruned
// cell is the same as the other side's when the verdicts agree, whatever the signatures.
struct Judged {
  std::optional<Verdict> verdict;
  std::string signature;
  bool pruned = false;
};
Judged Implied(const Entry* e) {
  if (!e) return {};
  Judged j{e->verdict, e->signature, false};
  if (e->verdict != Verdict::kSkipped || e->signature.rfind("skipped:", 0) != 0) return j;
  const std::string rest = e->signature.substr(8);
  if (auto v = ParseVerdict(rest.substr(0, rest.find(':')))) j = {*v, rest, true};
  return j;
}
}  // namespace

Result<Comparison> Compare(Store& store, const CompareSide& a, const CompareSide& b, double threshold,
                           QueryBudget* bounds) {
  QueryBudget unbounded = QueryBudget::Unbounded();
  QueryBudget& budget = bounds ? *bounds : unbounded;
  try {
    return store.ReadBounded(budget, [&](sql::Db& db) -> Result<Comparison> {
      int64_t pending = 0;
      auto sb = Load(db, b, nullptr, budget, &pending);
      if (!sb.ok()) return Status(sb.status().code(), sb.status().message(), sb.status().field() == "a" ? "b" : sb.status().field());
      auto sa = Load(db, a, &*sb, budget, &pending);
      if (!sa.ok()) return sa.status();
      std::map<Key, std::pair<const Entry*, const Entry*>> all;
      for (auto& [k, e] : *sa) all[k].first = &e;
      for (auto& [k, e] : *sb) all[k].second = &e;
      Comparison out;
      out.a = a;
      out.b = b;
      out.threshold = threshold;
      for (auto& [k, pr] : all) {
        budget.Count();  // folding 200,000 items takes a while too: a stop or the deadline reaches it
        auto [ea, eb] = pr;
        CompareItem item;
        bool fell = false;
        if (ea && eb && ea->metric && eb->metric && *ea->metric != 0) {
          const double rel = (*eb->metric - *ea->metric) / std::abs(*ea->metric);
          item.metric_change = rel;
          fell = rel < -threshold;
        }
        for (const Entry* e : {ea, eb})
          if (e && out.key_metric.empty()) out.key_metric = e->metric_name;
        const Judged ja = Implied(ea), jb = Implied(eb);
        item.change = (ja.pruned || jb.pruned) && ja.verdict && ja.verdict == jb.verdict
                          ? Change::kSame  // pruned (once or twice) for the verdict the other says
                          : CompareChange(ja.verdict, ja.signature, jb.verdict, jb.signature, fell);
        if (item.change == Change::kBroke)
          item.why = ea->verdict == Verdict::kPassed && eb->verdict == Verdict::kPassed ? ChangeWhy::kMetric
                                                                                         : ChangeWhy::kVerdict;
        // Passed before and fails now, but its runs went back and forth or it passed again since: it
        // became flaky. One change that stayed is a break, whatever the fingerprint.
        if (item.change == Change::kBroke && item.why == ChangeWhy::kVerdict && ea->verdict == Verdict::kPassed &&
            FailureDidNotStay(db, eb->suite_id, eb->config_key, eb->hardware)) {
          item.change = Change::kFlaky;
          item.why = ChangeWhy::kInTurn;
        }
        ++out.counts[static_cast<size_t>(item.change)];
        const Entry* any = eb ? eb : ea;
        item.config_key = k.first;
        item.config = any->config;
        item.hardware = k.second;
        item.a = EndOf(ea);
        item.b = EndOf(eb);
        out.items.push_back(std::move(item));
      }
      std::stable_sort(out.items.begin(), out.items.end(),
                       [](const CompareItem& x, const CompareItem& y) { return x.change < y.change; });
      out.pending = pending;
      return out;
    });
  } catch (const sql::Error& e) {
    if (IsInterrupt(e.code()) && budget.why() != QueryBudget::Why::kNone)
      return budget.Answer("compare two sweeps, or give a_version/b_version and a_fingerprint/b_fingerprint", "a");
    return Status::Internal(e.what());
  }
}

json CompareEndJson(const std::optional<CompareEnd>& e) {
  if (!e) return nullptr;
  return {{"verdict", Name(e->verdict)}, {"signature", e->signature}, {"trial", e->trial}, {"sweep", e->sweep},
          {"metric", MetricJson(e->metric)}};
}

json ComparisonJson(const Comparison& c) {
  json summary = json::object();
  for (int i = 0; i < kChangeCount; ++i) summary[std::string(kChangeNames[i])] = c.counts[static_cast<size_t>(i)];
  summary["pending"] = c.pending;
  json items = json::array();
  for (const CompareItem& it : c.items)
    items.push_back({{"config_key", it.config_key}, {"config", it.config}, {"hardware", it.hardware},
                     {"change", Name(it.change)}, {"why", Name(it.why)}, {"a", CompareEndJson(it.a)},
                     {"b", CompareEndJson(it.b)}, {"metric_change", it.metric_change ? json(*it.metric_change) : json()}});
  return {{"a", SideJson(c.a)}, {"b", SideJson(c.b)}, {"threshold", c.threshold},
          {"key_metric", c.key_metric.empty() ? json() : json(c.key_metric)}, {"summary", summary}, {"items", items}};
}

}  // namespace gauntlet::store
