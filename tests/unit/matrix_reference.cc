// The matrix fold as store/matrix.cc had it before its configs were interned (c885d96): one
// ConfigCell of strings per config in an unordered_map. Kept only as the reference that
// matrix_fold_test.cc compares the interned fold with; never built into the daemon.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/json_text.h"
#include "core/outcome_order.h"
#include "core/pass_rate.h"
#include "core/verdict.h"
#include "store/analytics.h"
#include "store/config_values.h"
#include "store/results_index.h"
#include "store/store_rows.h"
#include "tests/unit/matrix_reference.h"

namespace gauntlet::store::reference {
using nlohmann::json;

namespace {

// Trials by verdict or state. A handful of keys per config: a flat list costs a fraction of a JSON
// object (a map node and a JSON value per key) over the 200,000 rows of a big sweep.
struct Counts {
  std::vector<std::pair<std::string, int64_t>> n;
  void Add(std::string_view key, int64_t v) {
    for (auto& [k, c] : n)
      if (k == key) {
        c += v;
        return;
      }
    n.emplace_back(std::string(key), v);
  }
  void Add(const Counts& o) {
    for (auto& [k, v] : o.n) Add(k, v);
  }
  json Json() const {
    json j = json::object();
    for (auto& [k, v] : n) j[k] = v;
    return j;
  }
};

// A key metric as read from a row; JSON only when answered.
struct MetricValue {
  bool set = false;
  std::string name, unit;
  double value = 0;
  json Json() const { return set ? json{{"name", name}, {"value", value}, {"unit", unit}} : json(); }
};

// One config on one hardware class: the latest verdict it got (a skip never hides a real one),
// every trial counted, and whether one fingerprint saw it both ways.
struct ConfigCell {
  // The config as stored, and its value of each parameter (by ParamIndex; "" where absent): parsed
  // once, kept flat, so 200,000 configs are not 200,000 JSON trees to look values up in and free.
  bool seen = false;
  std::string config_text;
  std::vector<std::string> values;
  std::string hardware;
  std::optional<Verdict> verdict;  // none yet: only pending trials (or cancelled ones)
  std::string signature;
  std::string fingerprint;  // of the result shown (canonical JSON; "" for none)
  int64_t trial = 0, at = -1;
  MetricValue metric;
  Counts counts;
  int64_t reused = 0;  // results filed by reuse: said beside the runs, never counted as one
  bool flaky = false;
  // its judged runs (trial rows), for the order rule
  std::vector<OrderedRun> runs;
};

MetricValue MetricOf(sql::Stmt& s, int name_col) {
  MetricValue m;
  if (s.IsNull(name_col)) return m;
  m.set = true;
  m.name = s.TextView(name_col);
  m.value = s.Double(name_col + 1);
  m.unit = s.TextView(name_col + 2);
  return m;
}

// Takes `verdict` as the config's own if Supersedes (core/verdict.h) says it is the one to show;
// calls `metric()` only when it takes it, so a row's metric is read once at most.
template <typename MetricFn>
void FoldVerdict(ConfigCell& c, std::optional<Verdict> verdict, std::string_view signature, int64_t trial, int64_t at,
                 std::string_view fingerprint, MetricFn&& metric) {
  if (!Supersedes({verdict, at, trial}, {c.verdict, c.at, c.trial})) return;
  c.verdict = verdict;
  c.signature = signature;
  c.fingerprint = fingerprint;
  c.trial = trial;
  c.at = at;
  c.metric = metric();
}

// Folds one more observation of the same config (a cells row) into `c`.
void Fold(ConfigCell& c, Verdict verdict, const std::string& signature, int64_t trial, int64_t at,
          std::string_view fingerprint, MetricValue metric, const json& counts) {
  for (auto& [k, v] : counts.items())
    if (v.is_number_integer()) c.counts.Add(k, v.get<int64_t>());
  FoldVerdict(c, verdict, signature, trial, at, fingerprint, [&] { return std::move(metric); });
}

// key: config_key + '\x1f' + hardware, so a config seen under several versions or trials is one.
using ConfigMap = std::unordered_map<std::string, ConfigCell>;

// Orders verdicts by name: a cell's breakdown lists them so, and among verdicts of one severity the
// first by name is the cell's (the order the answers have always had).
struct ByName {
  bool operator()(Verdict a, Verdict b) const { return Name(a) < Name(b); }
};

// The suite's parameter names; a config's values are kept in this order.
using ParamIndex = std::vector<std::string>;
int IndexIn(const ParamIndex& params, const std::string& p) {
  auto it = std::find(params.begin(), params.end(), p);
  return it == params.end() ? -1 : static_cast<int>(it - params.begin());
}

// Takes the config of a row the first time its cell sees one.
void TakeConfig(ConfigCell& c, std::string_view text, const ParamIndex& params) {
  if (c.seen) return;
  c.seen = true;
  c.config_text = text;
  if (FlatConfigValues(text, params, &c.values)) return;  // as ConfigJson stores them: no tree needed
  const json config = json::parse(text);
  c.values.assign(params.size(), std::string());
  for (size_t i = 0; i < params.size(); ++i)
    if (auto it = config.find(params[i]); it != config.end()) c.values[i] = JsonText(*it);
}

void ReadTrials(sql::Db& db, const MatrixQuery& q, int64_t suite_id, QueryBudget& budget, const ParamIndex& params,
                ConfigMap* out) {
  std::string sql =
      "SELECT t.config, COALESCE(t.hardware, ''), COALESCE(t.verdict, ''), COALESCE(t.signature, ''), t.id,"
      " COALESCE(t.finished_at, 0), t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''), t.state,"
      " t.config_key, COALESCE(t.fingerprint, ''), t.flaky, t.attempt_counts,"
      // Filed by reuse: never started, linked to the trial whose verdict it took (a skip is pruning's).
      " t.state = 'done' AND t.started_at IS NULL AND t.evidence_trial IS NOT NULL"
      " AND t.verdict NOT IN ('skipped', 'cancelled'), COALESCE(t.sweep_id, 0) FROM trials t"
      " JOIN suites su ON su.id = t.suite_id WHERE su.name = ?";
  if (q.sweep) sql += " AND t.sweep_id = ?";
  if (q.fingerprint) sql += " AND t.fingerprint = ?";
  if (!q.sweep && suite_id) sql += " AND t.suite_id = ?";
  auto s = db.Prepare(sql);
  int i = 1;
  s.Bind(i++, q.suite);
  if (q.sweep) s.Bind(i++, *q.sweep);
  if (q.fingerprint) s.Bind(i++, *q.fingerprint);
  if (!q.sweep && suite_id) s.Bind(i++, suite_id);
  out->reserve(out->size() + 4096);
  std::string key;  // one buffer for every row's key: 200,000 rows are 200,000 allocations otherwise
  while (s.Step()) {
    budget.Count();
    const TrialState state = detail::TrialStateColumn(s.TextView(9));
    const std::string_view hardware = s.TextView(1);
    key.assign(s.TextView(10));
    key += '\x1f';
    key += hardware;
    auto found = out->find(key);
    ConfigCell& c = found != out->end() ? found->second : (*out)[key];
    // A sweep repeats each config over targets and repeats: read each config's values once.
    TakeConfig(c, s.TextView(0), params);
    if (c.hardware != hardware) c.hardware = hardware;
    const std::optional<Verdict> raw =
        s.TextView(2).empty() ? std::nullopt : std::optional<Verdict>(detail::VerdictColumn(s.TextView(2)));
    const std::optional<Verdict> verdict =
        state == TrialState::kDone && raw != Verdict::kCancelled ? raw : std::nullopt;
    FoldVerdict(c, verdict, s.TextView(3), s.Int(4), s.Int(5), s.TextView(11), [&] { return MetricOf(s, 6); });
    if (s.Int(14) != 0) {  // a copy of an earlier verdict: shown, counted apart, judged by no fingerprint
      ++c.reused;
      continue;
    }
    c.counts.Add(state == TrialState::kDone ? NameOr(raw) : Name(state), 1);  // a trial counts once, by verdict or state
    // A trial's confirming attempts are runs of the config too (kept, never folded away).
    if (!s.IsNull(13))
      if (json extra = json::parse(s.TextView(13), nullptr, false); extra.is_object())
        for (auto& [k, m] : extra.items())
          if (m.is_number_integer()) c.counts.Add(k, m.get<int64_t>());
    if ((verdict && Info(*verdict).judged) || s.Int(12) != 0)
      c.runs.push_back({s.Int(5), s.Int(15), verdict == Verdict::kPassed, s.Int(12) != 0});
  }
  for (auto& [key, c] : *out) c.flaky = c.flaky || RunsAreFlaky(c.runs);
}

void ReadCells(sql::Db& db, const MatrixQuery& q, int version, QueryBudget& budget, const ParamIndex& params,
               ConfigMap* out) {
  std::string sql =
      "SELECT config, hardware, verdict, signature, trial_id, last_seen, metric_name, metric_value,"
      " COALESCE(metric_unit, ''), counts, config_key, flaky, reused, fingerprint FROM cells WHERE suite = ?";
  if (version > 0) sql += " AND suite_version = ?";
  auto s = db.Prepare(sql);
  s.Bind(1, q.suite);
  if (version > 0) s.Bind(2, version);
  while (s.Step()) {
    budget.Count();
    ConfigCell& c = (*out)[s.Text(10) + '\x1f' + s.Text(1)];
    TakeConfig(c, s.TextView(0), params);
    c.hardware = s.Text(1);
    Fold(c, detail::VerdictColumn(s.TextView(2)), s.Text(3), s.Int(4), s.Int(5), s.TextView(13), MetricOf(s, 6), json::parse(s.TextView(9)));
    c.flaky = c.flaky || s.Int(11) != 0;
    c.reused += s.Int(12);
  }
}

// Each parameter's declared values by position, so rows follow the suite's order. Built once per
// query: looking a value up in the declared list for every comparison of a sort was quadratic
// (minutes for a sweep of 200,000 trials whose hidden parameter declares thousands of values).
class Ranks {
 public:
  explicit Ranks(const json& def) {
    if (!def.contains("parameters") || !def["parameters"].is_object()) return;
    for (auto& [name, spec] : def["parameters"].items()) {
      const json& list = spec.is_object() ? spec.value("values", json::array()) : spec;
      if (!list.is_array()) continue;
      auto& m = by_param_[name];
      for (size_t i = 0; i < list.size(); ++i) m.emplace(JsonText(list[i]), static_cast<int>(i));
    }
  }
  // Position of `v` in `param`'s declared list; undeclared values (and parameters) sort last.
  int operator()(const std::string& param, const std::string& v) const {
    auto p = by_param_.find(param);
    if (p == by_param_.end()) return 1 << 30;
    auto it = p->second.find(v);
    return it == p->second.end() ? 1 << 30 : it->second;
  }

 private:
  std::unordered_map<std::string, std::unordered_map<std::string, int>> by_param_;
};

// The most values of one hidden parameter a breakdown row lists, and the most flaky configs a
// cell lists: the rest are counted (values_more, flaky_count), so an answer stays small whatever
// the sweep (rows=a&cols=b over 200,000 trials answered 44 MB before).
constexpr size_t kMaxBreakdownValues = 50;
constexpr size_t kMaxFlakyListed = 20;
// The most cells one matrix answers: past it the pivot itself is too fine (422 naming rows).
constexpr size_t kMaxCells = 100000;

std::vector<std::string> HiddenParams(const json& def, const MatrixQuery& q) {
  std::vector<std::string> out;
  for (auto& [p, v] : def["parameters"].items())
    if (std::find(q.rows.begin(), q.rows.end(), p) == q.rows.end() && p != q.cols) out.push_back(p);
  return out;
}

// A cell from its configs: state, verdict, counts, metric range and, when they disagree, which
// values of the parameters the pivot hides go with each verdict.
// `hidden_at`: each hidden parameter's place in ConfigCell::values.
json CellJson(const std::vector<const ConfigCell*>& cs, const Ranks& rank, const std::vector<std::string>& hidden,
              const std::vector<int>& hidden_at) {
  Counts counts;
  const MetricValue *metric_min = nullptr, *metric_max = nullptr;
  std::map<Verdict, std::vector<const ConfigCell*>, ByName> by;  // effective verdict -> configs
  int64_t at = -1, trial = 0, passed = 0, pending = 0, reused = 0;
  std::string latest_signature;
  json flaky = json::array();
  size_t flaky_count = 0;
  for (const ConfigCell* c : cs) {
    counts.Add(c->counts);
    reused += c->reused;
    if (!c->verdict) {
      ++pending;
      continue;
    }
    const Verdict e = *c->verdict;
    by[e].push_back(c);
    if (c->at > at) at = c->at, trial = c->trial, latest_signature = c->signature;
    if (c->flaky && ++flaky_count <= kMaxFlakyListed)
      flaky.push_back({{"config", json::parse(c->config_text)}, {"trial", c->trial},
                       {"pass_rate", PassRateJson(c->counts.Json(), c->reused)}});
    if (e != Verdict::kPassed) continue;
    ++passed;
    if (c->metric.set) {
      const double v = c->metric.value;
      if (!metric_min || v < metric_min->value) metric_min = &c->metric;
      if (!metric_max || v > metric_max->value) metric_max = &c->metric;
    }
  }
  // Skipped configs were never run: they agree with a failure (pruning skips what a failure settles)
  // but not with a pass, and a cell of skips only is `skipped`.
  std::string state;
  std::optional<Verdict> verdict;
  const size_t skipped = by.count(Verdict::kSkipped) ? by[Verdict::kSkipped].size() : 0;
  std::set<Verdict, ByName> run;  // verdicts of the configs that ran
  for (auto& [v, list] : by)
    if (v != Verdict::kSkipped) run.insert(v);
  for (Verdict v : run)
    if (!verdict || Info(v).severity > Info(*verdict).severity) verdict = v;
  if (run.empty() && skipped) verdict = Verdict::kSkipped;
  if (!flaky.empty()) state = "flaky";
  else if (run.size() > 1 || (run.count(Verdict::kPassed) && skipped)) state = "mixed";
  else if (by.empty() || pending) state = "pending";
  else state = verdict == Verdict::kPassed ? "passed" : verdict == Verdict::kSkipped ? "skipped" : "failed";
  const json counts_json = counts.Json();
  json c = {{"state", state}, {"counts", counts_json}, {"configs", cs.size()}, {"passed", passed}, {"reused", reused}};
  // Over every run of the cell's configs (repeats, confirmations, earlier sweeps): a measured rate
  // with its 95% Wilson interval, not a single verdict. Reused results are copies, not runs: `counts`
  // and the rate leave them out, `reused` says how many there were.
  c["pass_rate"] = PassRateJson(counts_json, reused);
  c["verdict"] = verdict ? json(Name(*verdict)) : json();
  // A failing verdict whose configs share one signature says it; otherwise the latest of them or,
  // for a mixed cell, the breakdown does.
  std::set<std::string> sigs;
  if (verdict && verdict != Verdict::kPassed)
    for (auto* x : by[*verdict]) sigs.insert(x->signature);
  c["signature"] = sigs.size() == 1 && !sigs.begin()->empty() ? json(*sigs.begin())
                   : state == "failed" && !latest_signature.empty() ? json(latest_signature)
                                                                    : json();
  c["metric"] = metric_max ? metric_max->Json() : json();
  c["metric_min"] = metric_min ? metric_min->Json() : json();
  c["metric_max"] = c["metric"];
  c["last_seen"] = at >= 0 ? json(at) : json();
  c["trial"] = trial ? json(trial) : json();
  if (!flaky.empty()) c["flaky"] = flaky, c["flaky_count"] = flaky_count;
  if (state == "mixed" || state == "flaky") {
    json breakdown = json::array();
    for (auto& [v, list] : by) {
      json values = json::object(), more = json::object();
      std::set<std::string> vsigs;
      for (size_t h = 0; h < hidden.size(); ++h) {
        const std::string& p = hidden[h];
        std::set<std::string_view> seen;
        for (auto* x : list) seen.insert(x->values[hidden_at[h]]);
        std::vector<std::pair<int, std::string>> ordered;
        ordered.reserve(seen.size());
        for (auto& x : seen) ordered.emplace_back(rank(p, std::string(x)), std::string(x));
        std::sort(ordered.begin(), ordered.end());
        json listed = json::array();
        for (size_t i = 0; i < ordered.size() && i < kMaxBreakdownValues; ++i) listed.push_back(ordered[i].second);
        values[p] = std::move(listed);
        if (ordered.size() > kMaxBreakdownValues) more[p] = ordered.size() - kMaxBreakdownValues;
      }
      for (auto* x : list)
        if (!x->signature.empty() && vsigs.size() < kMaxBreakdownValues) vsigs.insert(x->signature);
      json row = {{"verdict", Name(v)}, {"configs", list.size()}, {"values", values}, {"signatures", vsigs}};
      if (!more.empty()) row["values_more"] = std::move(more);
      breakdown.push_back(std::move(row));
    }
    c["breakdown"] = breakdown;
  }
  return c;
}

}  // namespace

namespace {
// The hardware classes of the configs shown, sorted: what a matrix whose columns are a parameter
// ran on, and what the Markdown export describes.
json HardwareSeen(const ConfigMap& configs) {
  std::set<std::string> seen;
  for (auto& [k, c] : configs) seen.insert(c.hardware.empty() ? "unassigned" : c.hardware);
  return json(seen);
}

// The software fingerprints of the results shown, most configs first (then by text), at most
// kMaxFingerprintsListed of them, each with how many config × hardware results it judged.
constexpr size_t kMaxFingerprintsListed = 10;
json FingerprintsSeen(const ConfigMap& configs) {
  std::map<std::string, int64_t> n;
  for (auto& [k, c] : configs)
    if (c.verdict) ++n[c.fingerprint];
  std::vector<std::pair<int64_t, std::string>> order;
  for (auto& [fp, count] : n) order.emplace_back(-count, fp);
  std::sort(order.begin(), order.end());
  json out = json::array();
  for (size_t i = 0; i < order.size() && i < kMaxFingerprintsListed; ++i)
    out.push_back({{"fingerprint", order[i].second}, {"results", -order[i].first}});
  return out;
}

// What narrows a matrix, for an answer that says it is too big or too slow.
std::string NarrowMatrix(const MatrixQuery& q) {
  return q.sweep ? "a sweep's matrix reads all its trials: give fingerprint=, or rows= and cols= with fewer values"
                 : "give sweep=, suite_version= or fingerprint=, or rows= and cols= with fewer values";
}

// The matrix, read and folded under `budget` (which throws through it when it ends the query).
Result<json> MatrixWithin(Store& store, const MatrixQuery& query, QueryBudget& budget) {
  MatrixQuery q = query;
  std::optional<int> version = q.suite_version;
  if (q.sweep) {  // a sweep names its suite and version
    auto sw = store.GetSweep(*q.sweep);
    if (!sw.ok()) return sw.status();
    if (!q.suite.empty() && q.suite != sw->suite)
      return Status::Invalid("sweep " + std::to_string(*q.sweep) + " is of suite " + sw->suite, "suite");
    q.suite = sw->suite;
    version = sw->suite_version;
  }
  if (q.suite.empty()) return Status::Invalid("suite (or sweep) is required", "suite");
  auto suite = store.GetSuite(q.suite, version && *version > 0 ? version : std::nullopt);
  if (!suite.ok()) return suite.status();
  const json& def = suite->definition;
  if (q.rows.empty())
    for (auto& p : suite->param_order)
      if (q.rows.size() < 2) q.rows.push_back(p);
  if (q.rows.empty() || q.rows.size() > 2) return Status::Invalid("rows names one or two parameters", "rows");
  for (auto& r : q.rows)
    if (!def["parameters"].contains(r)) return Status::Invalid("'" + r + "' is not a parameter of " + q.suite, "rows");
  if (q.cols != "hardware" && !def["parameters"].contains(q.cols))
    return Status::Invalid("cols is 'hardware' or a parameter of " + q.suite, "cols");
  // Latest version unless one (or all: 0) was asked for.
  const int shown = version ? *version : suite->version;
  ConfigMap configs;
  ParamIndex params;
  for (auto& [p, spec] : def["parameters"].items()) params.push_back(p);
  store.ReadBounded(budget, [&](sql::Db& db) {
    if (q.sweep || q.fingerprint)
      ReadTrials(db, q, shown > 0 && !q.sweep ? suite->id : 0, budget, params, &configs);
    else ReadCells(db, q, shown, budget, params, &configs);
  });
  const Ranks rank(def);
  using Key = std::pair<std::vector<std::string>, std::string>;  // (row values, column value)
  std::map<Key, std::vector<const ConfigCell*>> cells;
  // Rows and columns are parameters (checked above), so each has its place in the values.
  std::vector<int> row_at;
  for (auto& p : q.rows) row_at.push_back(IndexIn(params, p));
  const int col_at = q.cols == "hardware" ? -1 : IndexIn(params, q.cols);
  Key probe{std::vector<std::string>(row_at.size()), std::string()};  // refilled in place: no allocation per config
  for (auto& [k, c] : configs) {
    for (size_t r = 0; r < row_at.size(); ++r) probe.first[r].assign(c.values[row_at[r]]);
    probe.second.assign(q.cols == "hardware" ? c.hardware : c.values[col_at]);
    if (q.cols == "hardware" && probe.second.empty()) probe.second = "unassigned";
    auto it = cells.find(probe);
    if (it == cells.end()) it = cells.emplace(probe, std::vector<const ConfigCell*>()).first;
    it->second.push_back(&c);
  }
  if (cells.size() > kMaxCells)
    return Status::Invalid("this matrix has " + std::to_string(cells.size()) + " cells (at most " +
                               std::to_string(kMaxCells) + "): name rows and cols with fewer values",
                           "rows");
  std::set<std::vector<std::string>> row_set;
  std::set<std::string> col_set;
  for (auto& [k, list] : cells) row_set.insert(k.first), col_set.insert(k.second);
  std::vector<std::vector<std::string>> row_keys(row_set.begin(), row_set.end());
  std::sort(row_keys.begin(), row_keys.end(), [&](const auto& a, const auto& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      const int ra = rank(q.rows[i], a[i]), rb = rank(q.rows[i], b[i]);
      if (ra != rb) return ra < rb;
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  });
  std::vector<std::string> col_keys(col_set.begin(), col_set.end());
  if (q.cols != "hardware")
    std::sort(col_keys.begin(), col_keys.end(), [&](const auto& a, const auto& b) {
      const int ra = rank(q.cols, a), rb = rank(q.cols, b);
      return ra != rb ? ra < rb : a < b;
    });
  const auto hidden = HiddenParams(def, q);
  std::vector<int> hidden_at;
  for (auto& p : hidden) hidden_at.push_back(IndexIn(params, p));
  json out_cells = json::array();
  for (auto& [k, list] : cells) {
    budget.Count(static_cast<int64_t>(list.size()));
    json c = CellJson(list, rank, hidden, hidden_at);
    c["row"] = k.first;
    c["col"] = k.second;
    out_cells.push_back(std::move(c));
  }
  return json{{"suite", q.suite},
              {"hardware", HardwareSeen(configs)},
              {"fingerprints", FingerprintsSeen(configs)},
              {"suite_version", shown > 0 ? json(shown) : json("all")},
              {"rows", q.rows},
              {"cols", q.cols},
              {"hidden", hidden},
              {"sweep", q.sweep ? json(*q.sweep) : json()},
              {"key_metric", def.contains("key_metric") ? def["key_metric"] : json()},
              {"row_keys", row_keys},
              {"col_keys", col_keys},
              {"cells", out_cells}};
}

}  // namespace

Result<json> ReferenceMatrix(Store& store, const MatrixQuery& query, QueryBudget* bounds) {
  QueryBudget unbounded = QueryBudget::Unbounded();
  QueryBudget& budget = bounds ? *bounds : unbounded;
  try {
    return MatrixWithin(store, query, budget);
  } catch (const sql::Error& e) {
    if (IsInterrupt(e.code()) && budget.why() != QueryBudget::Why::kNone)
      return budget.Answer(NarrowMatrix(query), query.sweep ? "sweep" : "suite");
    return Status::Internal(e.what());
  }
}

}  // namespace gauntlet::store::reference
