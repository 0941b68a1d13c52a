// The matrix's fold (store/matrix_fold.h): rows of trials or cells into interned configs.
#include "store/matrix_fold.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/json_text.h"
#include "core/outcome_order.h"
#include "store/analytics.h"
#include "store/config_values.h"
#include "store/store_rows.h"

namespace gauntlet::store::matrix {
using nlohmann::json;

uint32_t Interner::Id(std::string_view s) {
  if (slots_.empty()) Rehash(64);
  const uint64_t h = std::hash<std::string_view>{}(s);
  const auto tag = static_cast<uint32_t>(h >> 32);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i].id1 != 0; i = (i + 1) & mask) {
    if (slots_[i].tag != tag) continue;
    const uint32_t id = slots_[i].id1 - 1;
    if (entries_[id].hash == h && Text(id) == s) return id;
  }
  const auto id = static_cast<uint32_t>(entries_.size());
  entries_.push_back({h, bytes_.size(), static_cast<uint32_t>(s.size())});
  bytes_.append(s);
  slots_[i] = {id + 1, tag};
  if (entries_.size() * 2 > slots_.size()) Rehash(slots_.size() * 2);
  return id;
}

void Interner::Rehash(size_t n) {
  slots_.assign(n, Slot{});
  const size_t mask = n - 1;
  for (uint32_t id = 0; id < entries_.size(); ++id) {
    size_t i = entries_[id].hash & mask;
    while (slots_[i].id1 != 0) i = (i + 1) & mask;
    slots_[i] = {id + 1, static_cast<uint32_t>(entries_[id].hash >> 32)};
  }
}

void Interner::Reserve(size_t n, size_t bytes) {
  entries_.reserve(n);
  bytes_.reserve(bytes);
  size_t slots = 64;
  while (slots < 2 * n) slots *= 2;
  if (slots > slots_.size()) Rehash(slots);
}

void Fold::Reserve(size_t n) {
  configs.reserve(n);
  values.reserve(n * params.size());
  keys.Reserve(n, n * 64);  // a key and a config are tens of bytes; more is room, not touched memory
  texts.reserve(n * 64);
}

Fold::Fold(std::vector<std::string> suite_params) : params(std::move(suite_params)), param_values(params.size()) {
  strings.Id("");
  for (int v = 0; v < kVerdictCount; ++v) count_keys.Id(Name(static_cast<Verdict>(v)));
  for (TrialState s : {TrialState::kQueued, TrialState::kLeased, TrialState::kRunning, TrialState::kDone})
    count_keys.Id(Name(s));
  count_keys.Id("");
}

uint32_t Fold::ConfigOf(std::string_view config_key, std::string_view hw, std::string_view text) {
  key_.assign(config_key);
  key_ += '\x1f';
  key_ += hw;
  const uint32_t id = keys.Id(key_);
  if (id < configs.size()) return id;
  // A sweep repeats each config over targets and repeats: its values are read the first time only.
  Config& c = configs.emplace_back();
  c.hardware = hardware.Id(hw);
  c.text_at = texts.size();
  c.text_len = static_cast<uint32_t>(text.size());
  texts.append(text);
  const size_t np = params.size();
  values.resize(values.size() + np);
  uint32_t* out = values.data() + static_cast<size_t>(id) * np;
  if (FlatConfigViews(text, params, &views_)) {  // as ConfigJson stores them: no tree needed
    for (size_t p = 0; p < np; ++p) out[p] = param_values[p].Id(views_[p]);
    return id;
  }
  const json config = json::parse(text);
  for (size_t p = 0; p < np; ++p) {
    auto it = config.find(params[p]);
    out[p] = param_values[p].Id(it == config.end() ? std::string() : JsonText(*it));
  }
  return id;
}

void Fold::AddCount(Config& c, uint32_t key, int64_t n) {
  uint32_t* link = &c.counts;
  for (uint32_t e = c.counts; e != kNoEntry; e = counts[e].next) {
    if (counts[e].key == key) {
      counts[e].n += n;
      return;
    }
    link = &counts[e].next;
  }
  *link = static_cast<uint32_t>(counts.size());
  counts.push_back({key, kNoEntry, n});
}

void Fold::AddCountsJson(Config& c, std::string_view text, bool lenient) {
  if (FlatIntObject(text, &ints_)) {
    for (auto& [k, n] : ints_) AddCount(c, count_keys.Id(k), n);
    return;
  }
  const json parsed = lenient ? json::parse(text, nullptr, false) : json::parse(text);
  if (!parsed.is_object()) return;
  for (auto& [k, v] : parsed.items())
    if (v.is_number_integer()) AddCount(c, count_keys.Id(k), v.get<int64_t>());
}

void Fold::AddRun(Config& c, int64_t at, int64_t sweep, bool passed, bool flaky) {
  // Newest read first: SettleRuns reverses, so runs that finished at one time keep the order read.
  runs.push_back({at, sweep, c.runs, passed, flaky});
  c.runs = static_cast<uint32_t>(runs.size() - 1);
}

void Fold::SettleRuns() {
  std::vector<OrderedRun> list;
  for (Config& c : configs) {
    if (c.runs == kNoEntry) continue;
    list.clear();
    for (uint32_t e = c.runs; e != kNoEntry; e = runs[e].next)
      list.push_back({runs[e].at, runs[e].sweep, runs[e].passed, runs[e].flaky});
    std::reverse(list.begin(), list.end());
    c.flaky = c.flaky || RunsAreFlaky(list);
  }
}

namespace {

// Takes `verdict` as the config's own if Supersedes (core/verdict.h) says it is the one to show;
// calls `metric(c)` only when it takes it, so a row's metric is read once at most.
template <typename MetricFn>
void FoldVerdict(Fold& f, Config& c, std::optional<Verdict> verdict, std::string_view signature, int64_t trial,
                 int64_t at, std::string_view fingerprint, MetricFn&& metric) {
  if (!Supersedes({verdict, at, trial}, {c.Shown(), c.at, c.trial})) return;
  c.verdict = verdict ? static_cast<int8_t>(*verdict) : int8_t{-1};
  c.signature = f.strings.Id(signature);
  c.fingerprint = f.strings.Id(fingerprint);
  c.trial = trial;
  c.at = at;
  metric(c);
}

// The key metric of a row whose name is column `col` (value and unit follow it) into `c`.
void TakeMetric(Fold& f, Config& c, sql::Stmt& s, int col) {
  c.metric_set = !s.IsNull(col);
  if (!c.metric_set) {
    c.metric_name = c.metric_unit = 0, c.metric_value = 0;
    return;
  }
  c.metric_name = f.strings.Id(s.TextView(col));
  c.metric_value = s.Double(col + 1);
  c.metric_unit = f.strings.Id(s.TextView(col + 2));
}

}  // namespace

void ReadTrials(sql::Db& db, const MatrixQuery& q, int64_t suite_id, int64_t sweep_trials, QueryBudget& budget,
                Fold* f) {
  std::string sql =
      "SELECT t.config, COALESCE(t.hardware, ''), COALESCE(t.verdict, ''), COALESCE(t.signature, ''), t.id,"
      " COALESCE(t.finished_at, 0), t.metric_name, t.metric_value, COALESCE(t.metric_unit, ''), t.state,"
      " t.config_key, COALESCE(t.fingerprint, ''), t.flaky, t.attempt_counts,"
      // Filed by reuse: never started, linked to the trial whose verdict it took (a skip is pruning's).
      " t.state = 'done' AND t.started_at IS NULL AND t.evidence_trial IS NOT NULL"
      " AND t.verdict NOT IN ('skipped', 'cancelled'), COALESCE(t.sweep_id, 0) FROM trials t";
  // A sweep's trials are all of its suite (Store::CreateSweep and AddTrial give them its suite_id),
  // so its matrix needs no join; their ids are consecutive, but for trials added later, so they
  // are read as one range of the table rather than through the sweep's index (a seek into the
  // table per trial), while the range is mostly the sweep's. Either way in id order, as before.
  int64_t lo = 0, hi = -1;
  if (q.sweep) {
    // Apart, each is one seek of the index (together they would walk all of the sweep's entries).
    auto& r = db.Cached("SELECT (SELECT MIN(id) FROM trials WHERE sweep_id = ?1), (SELECT MAX(id) FROM trials WHERE sweep_id = ?1)");
    r.Bind(1, *q.sweep);
    if (r.Step() && !r.IsNull(0)) lo = r.Int(0), hi = r.Int(1);
    r.Reset();
    if (hi < lo) return;  // no trials
  }
  const bool range = q.sweep && hi - lo < 2 * std::max<int64_t>(sweep_trials, 1);
  if (range) sql += " WHERE t.id BETWEEN ? AND ? AND +t.sweep_id = ?";
  else if (q.sweep) sql += " WHERE t.sweep_id = ?";
  else sql += " JOIN suites su ON su.id = t.suite_id WHERE su.name = ?";
  if (q.fingerprint) sql += " AND t.fingerprint = ?";
  if (!q.sweep && suite_id) sql += " AND t.suite_id = ?";
  auto s = db.Prepare(sql);
  int i = 1;
  if (range) {
    s.Bind(i, lo).Bind(i + 1, hi);
    i += 2;
  }
  if (q.sweep) s.Bind(i++, *q.sweep);
  else s.Bind(i++, q.suite);
  if (q.fingerprint) s.Bind(i++, *q.fingerprint);
  if (!q.sweep && suite_id) s.Bind(i++, suite_id);
  while (s.Step()) {
    budget.Count();
    const TrialState state = detail::TrialStateColumn(s.TextView(9));
    Config& c = f->configs[f->ConfigOf(s.TextView(10), s.TextView(1), s.TextView(0))];
    const std::string_view raw_text = s.TextView(2), fingerprint = s.TextView(11);
    const std::optional<Verdict> raw =
        raw_text.empty() ? std::nullopt : std::optional<Verdict>(detail::VerdictColumn(raw_text));
    const std::optional<Verdict> verdict =
        state == TrialState::kDone && raw != Verdict::kCancelled ? raw : std::nullopt;
    FoldVerdict(*f, c, verdict, s.TextView(3), s.Int(4), s.Int(5), fingerprint,
                [&](Config& x) { TakeMetric(*f, x, s, 6); });
    if (s.Int(14) != 0) {  // a copy of an earlier verdict: shown, counted apart, judged by no fingerprint
      ++c.reused;
      continue;
    }
    // A trial counts once, by verdict or state.
    f->AddCount(c, state != TrialState::kDone ? Fold::StateKey(state) : raw ? Fold::VerdictKey(*raw) : Fold::kEmptyKey, 1);
    // A trial's confirming attempts are runs of the config too (kept, never folded away).
    if (!s.IsNull(13)) f->AddCountsJson(c, s.TextView(13), true);
    // Broke or flaky by the order of its runs (docs/SCHEDULING.md), once all are read.
    const bool flaky_trial = s.Int(12) != 0;
    if ((verdict && Info(*verdict).judged) || flaky_trial)
      f->AddRun(c, s.Int(5), s.Int(15), verdict == Verdict::kPassed, flaky_trial);
  }
  f->SettleRuns();
}

void ReadCells(sql::Db& db, const MatrixQuery& q, int version, QueryBudget& budget, Fold* f) {
  std::string sql =
      "SELECT config, hardware, verdict, signature, trial_id, last_seen, metric_name, metric_value,"
      " COALESCE(metric_unit, ''), counts, config_key, flaky, reused, fingerprint FROM cells WHERE suite = ?";
  if (version > 0) sql += " AND suite_version = ?";
  auto s = db.Prepare(sql);
  s.Bind(1, q.suite);
  if (version > 0) s.Bind(2, version);
  while (s.Step()) {
    budget.Count();
    Config& c = f->configs[f->ConfigOf(s.TextView(10), s.TextView(1), s.TextView(0))];
    const Verdict verdict = detail::VerdictColumn(s.TextView(2));
    f->AddCountsJson(c, s.TextView(9), false);
    FoldVerdict(*f, c, verdict, s.TextView(3), s.Int(4), s.Int(5), s.TextView(13),
                [&](Config& x) { TakeMetric(*f, x, s, 6); });
    c.flaky = c.flaky || s.Int(11) != 0;
    c.reused += s.Int(12);
  }
}

Result<SweepHead> GetSweepHead(Store& store, int64_t id) {
  return store.Read([&](sql::Db& db) -> Result<SweepHead> {
    auto& s = db.Cached(
        "SELECT su.name, su.version, s.trial_count FROM sweeps s JOIN suites su ON su.id = s.suite_id WHERE s.id = ?");
    s.Bind(1, id);
    if (!s.Step()) return Status::NotFound("no sweep " + std::to_string(id));
    return SweepHead{s.Text(0), static_cast<int>(s.Int(1)), s.Int(2)};
  });
}

json HardwareSeen(const Fold& f) {
  std::set<std::string> seen;
  for (uint32_t h = 0; h < f.hardware.size(); ++h)  // every class interned is some config's
    seen.insert(f.hardware.Text(h).empty() ? "unassigned" : std::string(f.hardware.Text(h)));
  return json(seen);
}

constexpr size_t kMaxFingerprintsListed = 10;
json FingerprintsSeen(const Fold& f) {
  std::vector<int64_t> by_id(f.strings.size(), 0);
  for (const Config& c : f.configs)
    if (c.verdict >= 0) ++by_id[c.fingerprint];
  std::vector<std::pair<int64_t, std::string>> order;
  for (uint32_t id = 0; id < by_id.size(); ++id)
    if (by_id[id] > 0) order.emplace_back(-by_id[id], std::string(f.strings.Text(id)));
  std::sort(order.begin(), order.end());
  json out = json::array();
  for (size_t i = 0; i < order.size() && i < kMaxFingerprintsListed; ++i)
    out.push_back({{"fingerprint", order[i].second}, {"results", -order[i].first}});
  return out;
}

}  // namespace gauntlet::store::matrix
