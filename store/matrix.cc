// The matrix pivot (declared in analytics.h): configs folded into cells that never hide
// disagreement. Each config of a cell keeps its own latest verdict; the cell's state says whether
// they all passed, all failed one way, disagree (mixed), or one of them is flaky. docs/API.md.
// The configs are read into store/matrix_fold.h's interned records; the pivot here works on their
// ids and turns ids back into text only for what the answer shows.
#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/basis.h"
#include "core/json_text.h"
#include "core/pass_rate.h"
#include "core/verdict.h"
#include "store/analytics.h"
#include "store/matrix_fold.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

// The verdicts ordered by name: a cell's breakdown lists them so, and among verdicts of one severity
// the first by name is the cell's (the order the answers have always had).
const std::array<Verdict, kVerdictCount>& ByName() {
  static const std::array<Verdict, kVerdictCount> order = [] {
    std::array<Verdict, kVerdictCount> v;
    for (int i = 0; i < kVerdictCount; ++i) v[i] = static_cast<Verdict>(i);
    std::sort(v.begin(), v.end(), [](Verdict a, Verdict b) { return Name(a) < Name(b); });
    return v;
  }();
  return order;
}

// The suite's parameter names; a config's values are kept in this order.
using ParamIndex = std::vector<std::string>;
int IndexIn(const ParamIndex& params, const std::string& p) {
  auto it = std::find(params.begin(), params.end(), p);
  return it == params.end() ? -1 : static_cast<int>(it - params.begin());
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
  int operator()(const std::string& param, std::string_view v) const {
    auto p = by_param_.find(param);
    if (p == by_param_.end()) return 1 << 30;
    auto it = p->second.find(std::string(v));
    return it == p->second.end() ? 1 << 30 : it->second;
  }

 private:
  std::unordered_map<std::string, std::unordered_map<std::string, int>> by_param_;
};

// One parameter's values seen (ids of its matrix::Fold::param_values) in the order a matrix shows them: by
// declared position, then by text.
struct Axis {
  const matrix::Interner* values = nullptr;
  std::vector<int> rank;           // by value id
  std::vector<uint32_t> place;     // by value id: its position in that order
  std::vector<uint32_t> at_place;  // the value id at each position
  std::string_view Text(uint32_t id) const { return values->Text(id); }
  bool Before(uint32_t a, uint32_t b) const {  // a strict order of value ids by that rule
    return rank[a] != rank[b] ? rank[a] < rank[b] : Text(a) < Text(b);
  }
};

Axis AxisOf(const matrix::Interner& values, const Ranks& rank, const std::string& param) {
  Axis a;
  a.values = &values;
  const auto n = static_cast<uint32_t>(values.size());
  for (uint32_t id = 0; id < n; ++id) a.rank.push_back(rank(param, values.Text(id)));
  a.at_place.resize(n);
  std::iota(a.at_place.begin(), a.at_place.end(), 0u);
  std::sort(a.at_place.begin(), a.at_place.end(), [&](uint32_t x, uint32_t y) { return a.Before(x, y); });
  a.place.resize(n);
  for (uint32_t p = 0; p < n; ++p) a.place[a.at_place[p]] = p;
  return a;
}

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

json MetricJson(const matrix::Fold& f, const matrix::Config& c) {
  if (!c.metric_set) return json();
  return {{"name", std::string(f.strings.Text(c.metric_name))}, {"value", c.metric_value},
          {"unit", std::string(f.strings.Text(c.metric_unit))}};
}

// What every cell of one matrix reads besides its own configs, and the scratch CellJson reuses.
struct CellContext {
  const matrix::Fold& f;
  std::vector<std::string> hidden;
  std::vector<int> hidden_at;           // each hidden parameter's place in matrix::Fold::params
  const std::vector<Axis>& axes;        // by matrix::Fold::params
  std::vector<int64_t> sums;            // by count key
  std::vector<uint32_t> touched;        // the count keys summed so far
  std::vector<std::vector<uint32_t>> marks;  // by matrix::Fold::params, by value id: the last pass that saw it
  uint32_t pass = 0;
  std::array<std::vector<uint32_t>, kVerdictCount> by;  // effective verdict -> configs

  // Adds config c's counts to the sums.
  void AddCounts(const matrix::Config& c) {
    for (uint32_t e = c.counts; e != matrix::kNoEntry; e = f.counts[e].next) {
      const auto& entry = f.counts[e];
      if (entry.key >= sums.size()) sums.resize(f.count_keys.size(), 0);
      if (std::find(touched.begin(), touched.end(), entry.key) == touched.end()) touched.push_back(entry.key);
      sums[entry.key] += entry.n;
    }
  }
  // The sums as a JSON object (key -> trials), and cleared.
  json TakeCounts() {
    json j = json::object();
    for (uint32_t k : touched) j[std::string(f.count_keys.Text(k))] = sums[k], sums[k] = 0;
    touched.clear();
    return j;
  }
};

// matrix::Config c's own counts as JSON.
json CountsJson(const matrix::Fold& f, const matrix::Config& c) {
  json j = json::object();
  for (uint32_t e = c.counts; e != matrix::kNoEntry; e = f.counts[e].next)
    j[std::string(f.count_keys.Text(f.counts[e].key))] = f.counts[e].n;
  return j;
}

// One breakdown row: how many of `list`'s configs, which values of each hidden parameter (the
// first kMaxBreakdownValues in the axis's order, the rest counted) and signatures go with `v`.
json BreakdownRow(CellContext& x, Verdict v, const std::vector<uint32_t>& list) {
  const matrix::Fold& f = x.f;
  const size_t np = f.params.size();
  json values = json::object(), more = json::object();
  std::vector<uint32_t> places;
  for (size_t h = 0; h < x.hidden.size(); ++h) {
    const int at = x.hidden_at[h];
    const Axis& axis = x.axes[at];
    std::vector<uint32_t>& mark = x.marks[at];
    if (mark.size() < axis.place.size()) mark.resize(axis.place.size(), 0);
    ++x.pass;
    places.clear();
    for (uint32_t id : list) {
      const uint32_t value = f.values[static_cast<size_t>(id) * np + at];
      if (mark[value] == x.pass) continue;
      mark[value] = x.pass;
      places.push_back(axis.place[value]);
    }
    std::sort(places.begin(), places.end());
    json listed = json::array();
    for (size_t i = 0; i < places.size() && i < kMaxBreakdownValues; ++i)
      listed.push_back(std::string(axis.Text(axis.at_place[places[i]])));
    values[x.hidden[h]] = std::move(listed);
    if (places.size() > kMaxBreakdownValues) more[x.hidden[h]] = places.size() - kMaxBreakdownValues;
  }
  // The first kMaxBreakdownValues distinct signatures met, listed by text.
  std::vector<uint32_t> sig_ids;
  for (uint32_t id : list) {
    const uint32_t s = f.configs[id].signature;
    if (s != 0 && sig_ids.size() < kMaxBreakdownValues && std::find(sig_ids.begin(), sig_ids.end(), s) == sig_ids.end())
      sig_ids.push_back(s);
  }
  std::vector<std::string_view> sigs;
  for (uint32_t s : sig_ids) sigs.push_back(f.strings.Text(s));
  std::sort(sigs.begin(), sigs.end());
  json signatures = json::array();
  for (auto s : sigs) signatures.push_back(std::string(s));
  json row = {{"verdict", Name(v)}, {"configs", list.size()}, {"values", std::move(values)}, {"signatures", std::move(signatures)}};
  if (!more.empty()) row["values_more"] = std::move(more);
  return row;
}

// A cell from its configs `ids` (n of them): state, verdict, counts, metric range and, when they
// disagree, which values of the parameters the pivot hides go with each verdict.
json CellJson(CellContext& x, const uint32_t* ids, size_t n) {
  const matrix::Fold& f = x.f;
  const matrix::Config *metric_min = nullptr, *metric_max = nullptr;
  for (auto& list : x.by) list.clear();
  int64_t at = -1, trial = 0, passed = 0, pending = 0, reused = 0;
  uint32_t latest_signature = 0;
  json flaky = json::array();
  size_t flaky_count = 0;
  for (size_t i = 0; i < n; ++i) {
    const matrix::Config& c = f.configs[ids[i]];
    x.AddCounts(c);
    reused += c.reused;
    if (c.verdict < 0) {
      ++pending;
      continue;
    }
    const Verdict e = *c.Shown();
    x.by[c.verdict].push_back(ids[i]);
    if (c.at > at) at = c.at, trial = c.trial, latest_signature = c.signature;
    if (c.flaky && ++flaky_count <= kMaxFlakyListed)
      flaky.push_back({{"config", json::parse(std::string_view(f.texts).substr(c.text_at, c.text_len))},
                       {"trial", c.trial},
                       {"pass_rate", PassRateJson(CountsJson(f, c), c.reused)}});
    if (e != Verdict::kPassed) continue;
    ++passed;
    if (c.metric_set) {
      const double v = c.metric_value;
      if (!metric_min || v < metric_min->metric_value) metric_min = &c;
      if (!metric_max || v > metric_max->metric_value) metric_max = &c;
    }
  }
  auto& by = x.by;
  auto has = [&](Verdict v) { return !by[static_cast<size_t>(v)].empty(); };
  // Skipped configs were never run: they agree with a failure (pruning skips what a failure settles)
  // but not with a pass, and a cell of skips only is `skipped`.
  std::optional<Verdict> verdict;
  const bool skipped = has(Verdict::kSkipped);
  size_t run = 0;  // verdicts of the configs that ran
  bool any = false;
  for (Verdict v : ByName()) {
    if (!has(v)) continue;
    any = true;
    if (v == Verdict::kSkipped) continue;
    ++run;
    if (!verdict || Info(v).severity > Info(*verdict).severity) verdict = v;
  }
  if (run == 0 && skipped) verdict = Verdict::kSkipped;
  std::string state;
  if (!flaky.empty()) state = "flaky";
  else if (run > 1 || (has(Verdict::kPassed) && skipped)) state = "mixed";
  else if (!any || pending) state = "pending";
  else state = verdict == Verdict::kPassed ? "passed" : verdict == Verdict::kSkipped ? "skipped" : "failed";
  const json counts_json = x.TakeCounts();
  json c = {{"state", state}, {"counts", counts_json}, {"configs", n}, {"passed", passed}, {"reused", reused}};
  // Over every run of the cell's configs (repeats, confirmations, earlier sweeps): a measured rate
  // with its 95% Wilson interval, not a single verdict. Reused results are copies, not runs: `counts`
  // and the rate leave them out, `reused` says how many there were.
  c["pass_rate"] = PassRateJson(counts_json, reused);
  c["verdict"] = verdict ? json(Name(*verdict)) : json();
  // A failing verdict whose configs share one signature says it; otherwise the latest of them or,
  // for a mixed cell, the breakdown does.
  std::optional<uint32_t> one_sig;  // set while every config of the verdict has the same signature
  bool several = false;
  if (verdict && verdict != Verdict::kPassed)
    for (uint32_t id : by[static_cast<size_t>(*verdict)]) {
      const uint32_t s = f.configs[id].signature;
      if (!one_sig) one_sig = s;
      else if (*one_sig != s) several = true;
    }
  c["signature"] = one_sig && !several && *one_sig != 0 ? json(std::string(f.strings.Text(*one_sig)))
                   : state == "failed" && latest_signature != 0 ? json(std::string(f.strings.Text(latest_signature)))
                                                                : json();
  // A failure judged from the exit status alone is unclassified: still a failure, but a guess.
  if (c["signature"].is_string() && UnclassifiedSignature(c["signature"].get_ref<const std::string&>()))
    c["unclassified"] = true;
  c["metric"] = metric_max ? MetricJson(f, *metric_max) : json();
  c["metric_min"] = metric_min ? MetricJson(f, *metric_min) : json();
  c["metric_max"] = c["metric"];
  c["last_seen"] = at >= 0 ? json(at) : json();
  c["trial"] = trial ? json(trial) : json();
  if (!flaky.empty()) c["flaky"] = flaky, c["flaky_count"] = flaky_count;
  if (state == "mixed" || state == "flaky") {
    json breakdown = json::array();
    for (Verdict v : ByName())
      if (has(v)) breakdown.push_back(BreakdownRow(x, v, by[static_cast<size_t>(v)]));
    c["breakdown"] = std::move(breakdown);
  }
  return c;
}

// What narrows a matrix, for an answer that says it is too big or too slow.
std::string NarrowMatrix(const MatrixQuery& q) {
  return q.sweep ? "a sweep's matrix reads all its trials: give fingerprint=, or rows= and cols= with fewer values"
                 : "give sweep=, suite_version= or fingerprint=, or rows= and cols= with fewer values";
}

// A cell by ids: its row values (the second 0 for one row parameter) and its column, each an id of
// its axis (a parameter's values, or the hardware columns).
struct CellKey {
  uint32_t r0, r1, col;
  bool operator==(const CellKey& o) const { return r0 == o.r0 && r1 == o.r1 && col == o.col; }
};
struct CellKeyHash {
  size_t operator()(const CellKey& k) const {
    uint64_t h = k.r0 * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29) ^ k.r1) * 0xbf58476d1ce4e5b9ull;
    return (h ^ (h >> 31) ^ k.col) * 0x94d049bb133111ebull;
  }
};

// The configs of each cell, grouped: cell i's are ids[begin[i], begin[i + 1]), first read first.
struct Cells {
  std::vector<CellKey> keys;
  std::vector<uint32_t> begin, ids;
};

// Groups f's configs by (row values, column): `col_of(config)` is the column id.
template <typename ColFn>
Cells GroupCells(const matrix::Fold& f, const std::vector<int>& row_at, ColFn&& col_of) {
  Cells out;
  const size_t np = f.params.size(), nc = f.configs.size();
  std::unordered_map<CellKey, uint32_t, CellKeyHash> index;
  std::vector<uint32_t> cell_of(nc);
  for (size_t i = 0; i < nc; ++i) {
    const uint32_t* v = f.values.data() + i * np;
    const CellKey k{v[row_at[0]], row_at.size() > 1 ? v[row_at[1]] : 0u, col_of(f.configs[i], v)};
    auto [it, added] = index.try_emplace(k, static_cast<uint32_t>(out.keys.size()));
    if (added) out.keys.push_back(k);
    cell_of[i] = it->second;
  }
  out.begin.assign(out.keys.size() + 1, 0);
  for (uint32_t c : cell_of) ++out.begin[c + 1];
  for (size_t c = 0; c < out.keys.size(); ++c) out.begin[c + 1] += out.begin[c];
  std::vector<uint32_t> next(out.begin.begin(), out.begin.end() - 1);
  out.ids.resize(nc);
  for (size_t i = 0; i < nc; ++i) out.ids[next[cell_of[i]]++] = static_cast<uint32_t>(i);
  return out;
}

// The texts of a pivot's ids: each row parameter's values (by place in matrix::Fold::params), and the
// column's (a parameter's values, or `hardware_cols` when the columns are hardware classes).
struct Labels {
  const std::vector<Axis>& axes;
  const std::vector<int>& row_at;
  const matrix::Interner* hardware_cols;
  int col_at;
  std::string_view RowText(const CellKey& k, size_t r) const { return axes[row_at[r]].Text(r == 0 ? k.r0 : k.r1); }
  std::string_view ColText(uint32_t col) const {
    return hardware_cols ? hardware_cols->Text(col) : axes[col_at].Text(col);
  }
  json RowJson(uint32_t r0, uint32_t r1) const {
    json r = json::array({std::string(axes[row_at[0]].Text(r0))});
    if (row_at.size() > 1) r.push_back(std::string(axes[row_at[1]].Text(r1)));
    return r;
  }
};

// The cells in the order of their texts (row values, then column), as the answer has always listed
// them; *row_keys and *col_keys the rows and columns present, in the suite's declared order (then
// by text; hardware classes by text).
std::vector<uint32_t> OrderKeys(const Cells& cells, const Labels& l, json* row_keys, json* col_keys) {
  std::vector<uint32_t> order(cells.keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const CellKey &x = cells.keys[a], &y = cells.keys[b];
    for (size_t r = 0; r < l.row_at.size(); ++r)
      if (l.RowText(x, r) != l.RowText(y, r)) return l.RowText(x, r) < l.RowText(y, r);
    return l.ColText(x.col) < l.ColText(y.col);
  });
  std::vector<std::pair<uint32_t, uint32_t>> rows;
  std::vector<uint32_t> cols;
  for (auto& k : cells.keys) rows.emplace_back(k.r0, k.r1), cols.push_back(k.col);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return l.axes[l.row_at[0]].Before(a.first, b.first);
    return l.row_at.size() > 1 && a.second != b.second && l.axes[l.row_at[1]].Before(a.second, b.second);
  });
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  std::sort(cols.begin(), cols.end(), [&](uint32_t a, uint32_t b) {
    return l.hardware_cols ? l.ColText(a) < l.ColText(b) : l.axes[l.col_at].Before(a, b);
  });
  *row_keys = json::array();
  *col_keys = json::array();
  for (auto& [r0, r1] : rows) row_keys->push_back(l.RowJson(r0, r1));
  for (uint32_t col : cols) col_keys->push_back(std::string(l.ColText(col)));
  return order;
}

// The matrix, read and folded under `budget` (which throws through it when it ends the query).
Result<json> MatrixWithin(Store& store, const MatrixQuery& query, QueryBudget& budget) {
  MatrixQuery q = query;
  std::optional<int> version = q.suite_version;
  int64_t expected = 0;  // rows the fold will likely read (a sweep's trials), to size its arrays once
  if (q.sweep) {  // a sweep names its suite and version
    auto sw = matrix::GetSweepHead(store, *q.sweep);
    if (!sw.ok()) return sw.status();
    if (!q.suite.empty() && q.suite != sw->suite)
      return Status::Invalid("sweep " + std::to_string(*q.sweep) + " is of suite " + sw->suite, "suite");
    q.suite = sw->suite;
    version = sw->suite_version;
    expected = sw->trial_count;
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
  ParamIndex params;
  for (auto& [p, spec] : def["parameters"].items()) params.push_back(p);
  matrix::Fold f(params);
  f.Reserve(static_cast<size_t>(std::clamp<int64_t>(expected, 0, int64_t{1} << 20)));
  store.ReadBounded(budget, [&](sql::Db& db) {
    if (q.sweep || q.fingerprint) matrix::ReadTrials(db, q, shown > 0 && !q.sweep ? suite->id : 0, expected, budget, &f);
    else matrix::ReadCells(db, q, shown, budget, &f);
  });
  const Ranks rank(def);
  std::vector<Axis> axes;
  for (size_t p = 0; p < params.size(); ++p) axes.push_back(AxisOf(f.param_values[p], rank, params[p]));
  // Rows and columns are parameters (checked above), so each has its place in the values.
  std::vector<int> row_at;
  for (auto& p : q.rows) row_at.push_back(IndexIn(params, p));
  const bool by_hardware = q.cols == "hardware";
  const int col_at = by_hardware ? -1 : IndexIn(params, q.cols);
  matrix::Interner hardware_cols;  // the hardware columns: a class, "unassigned" for none
  std::vector<uint32_t> hardware_col;
  for (uint32_t h = 0; h < f.hardware.size(); ++h)
    hardware_col.push_back(hardware_cols.Id(f.hardware.Text(h).empty() ? std::string_view("unassigned") : f.hardware.Text(h)));
  const Cells cells = GroupCells(f, row_at, [&](const matrix::Config& c, const uint32_t* v) {
    return by_hardware ? hardware_col[c.hardware] : v[col_at];
  });
  if (cells.keys.size() > kMaxCells)
    return Status::Invalid("this matrix has " + std::to_string(cells.keys.size()) + " cells (at most " +
                               std::to_string(kMaxCells) + "): name rows and cols with fewer values",
                           "rows");
  const Labels labels{axes, row_at, by_hardware ? &hardware_cols : nullptr, col_at};
  json row_keys, col_keys;
  const std::vector<uint32_t> order = OrderKeys(cells, labels, &row_keys, &col_keys);
  CellContext x{f, HiddenParams(def, q), {}, axes, {}, {}, std::vector<std::vector<uint32_t>>(params.size()), 0, {}};
  for (auto& p : x.hidden) x.hidden_at.push_back(IndexIn(params, p));
  json out_cells = json::array();
  for (uint32_t i : order) {
    const size_t n = cells.begin[i + 1] - cells.begin[i];
    budget.Count(static_cast<int64_t>(n));
    json c = CellJson(x, cells.ids.data() + cells.begin[i], n);
    c["row"] = labels.RowJson(cells.keys[i].r0, cells.keys[i].r1);
    c["col"] = std::string(labels.ColText(cells.keys[i].col));
    out_cells.push_back(std::move(c));
  }
  return json{{"suite", q.suite},
              {"hardware", matrix::HardwareSeen(f)},
              {"fingerprints", matrix::FingerprintsSeen(f)},
              {"suite_version", shown > 0 ? json(shown) : json("all")},
              {"rows", q.rows},
              {"cols", q.cols},
              {"hidden", x.hidden},
              {"sweep", q.sweep ? json(*q.sweep) : json()},
              {"key_metric", def.contains("key_metric") ? def["key_metric"] : json()},
              {"row_keys", std::move(row_keys)},
              {"col_keys", std::move(col_keys)},
              {"cells", std::move(out_cells)}};
}

}  // namespace

Result<json> Matrix(Store& store, const MatrixQuery& query, QueryBudget* bounds) {
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

}  // namespace gauntlet::store
