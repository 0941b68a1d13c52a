// Shared by the Store's source files (store.cc, store_trials.cc, store_logs.cc): row readers, column lists and
// the one error conversion. Internal to store/; not part of the Store interface.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "core/verdict.h"
#include "store/results_index.h"
#include "store/store.h"

namespace gauntlet::store::detail {
using nlohmann::json;
// Every store method converts SQLite exceptions into a Status here, so callers see one error style.
template <typename F>
inline auto Guard(F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const sql::Error& e) {
    return StoreErrorStatus(e);
  } catch (const json::exception& e) {
    return Status(Code::kInternal, std::string("store: bad stored JSON: ") + e.what());
  }
}

// The judged verdicts as an SQL list ('passed','unsupported',...): only such a verdict is a finding
// about the config (core/verdict.h), which reuse may copy and the order rule reads. Thread-safe.
inline const std::string& JudgedSqlList() {
  static const std::string kList = [] {
    std::string judged;
    for (const auto& v : VerdictNames([](const VerdictInfo& i) { return i.judged; }))
      judged += (judged.empty() ? "'" : ",'") + v + "'";
    return judged;
  }();
  return kList;
}

// `s` parsed, or `fallback` when it is empty or not JSON.
inline json ParseOr(std::string_view s, json fallback) {
  if (s.empty()) return fallback;
  return json::parse(s, nullptr, false).is_discarded() ? fallback : json::parse(s);
}

// 16 hex digits of FNV-1a 64 over `s`.
inline std::string Digest(const std::string& s) {
  // FNV-1a 64: a change detector for suite definitions, not a security boundary.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The id the next new trial takes: past every stored trial and past every id range that a sweep
// still being stored (`creating`) or expanded (materialized set) has reserved, so a sweep's trials
// keep consecutive ids however their writes interleave with others. Inside a Write.
inline int64_t NextTrialId(sql::Db& db) {
  auto& q = db.Cached(
      "SELECT MAX(COALESCE((SELECT MAX(id) FROM trials), 0), COALESCE((SELECT MAX(first_trial + trial_count - 1)"
      " FROM sweeps WHERE materialized IS NOT NULL OR creating != 0), 0)) + 1");
  q.Step();
  const int64_t id = q.Int(0);
  q.Reset();
  return id;
}

// The Read* functions read the current row of a statement that selected their k*Cols; they throw
// json::exception on bad stored JSON where they parse it (Guard converts it).
inline constexpr const char* kSuiteCols =
    "id, name, version, definition, source_dir, created_at, param_order, COALESCE(shadowed, ''), bundle";
inline SuiteRow ReadSuite(sql::Stmt& s) {
  SuiteRow r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.version = static_cast<int>(s.Int(2));
  r.definition = json::parse(s.TextView(3));
  r.source_dir = s.Text(4);
  r.created_at = s.Int(5);
  r.shadowed = s.Text(7);
  r.bundle = s.Text(8);
  // Parameters as declared; a suite stored before the order was kept lists them by name.
  const json params = r.definition.value("parameters", json::object());
  const json order = s.IsNull(6) ? json() : ParseOr(s.TextView(6), json());
  if (order.is_array())
    for (auto& p : order)
      if (p.is_string() && params.contains(p.get<std::string>())) r.param_order.push_back(p);
  if (r.param_order.size() != params.size()) {
    r.param_order.clear();
    for (auto& [p, v] : params.items()) r.param_order.push_back(p);
  }
  return r;
}

// The SQL edge of the vocabulary (core/verdict.h): a stored name that is no verdict or trial state
// is a damaged row, thrown as an sql::Error (Guard makes it the caller's Internal), never read as
// some default. Pure.
// `what` names the column's vocabulary in the error ("verdict", "trial state").
template <class E>
E EnumColumn(std::string_view text, std::optional<E> (*parse)(std::string_view), const char* what) {
  if (std::optional<E> e = parse(text)) return *e;
  throw sql::Error(SQLITE_MISMATCH, std::string("the store holds an unknown ") + what + " '" +
                                        std::string(text.substr(0, 64)) + "'");
}
inline Verdict VerdictColumn(std::string_view text) { return EnumColumn(text, &ParseVerdict, "verdict"); }
inline TrialState TrialStateColumn(std::string_view text) { return EnumColumn(text, &ParseTrialState, "trial state"); }
inline NodeState NodeStateColumn(std::string_view text) { return EnumColumn(text, &ParseNodeState, "node state"); }
inline SweepKind SweepKindColumn(std::string_view text) { return EnumColumn(text, &ParseSweepKind, "sweep kind"); }
// The metric in columns `name_col` (its name; NULL: none), +1 (value) and +2 (unit) of the row.
inline std::optional<Metric> MetricColumns(sql::Stmt& s, int name_col) {
  if (s.IsNull(name_col)) return std::nullopt;
  return Metric{s.Text(name_col), s.Double(name_col + 1), s.Text(name_col + 2)};
}
inline std::optional<Verdict> OptVerdictColumn(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  return VerdictColumn(*text);
}

// Carries its own FROM clause (trials t, suites su, nodes n): append WHERE ... after it.
inline constexpr const char* kTrialCols =
    "t.id, t.sweep_id, t.suite_id, su.name, su.version, t.config, t.config_key, t.target_index, t.repeat_index, "
    "t.state, t.verdict, t.signature, t.hardware, t.lease_id, t.gpus, n.name, t.node_id, t.lease_deadline, "
    "t.evidence_trial, t.started_at, t.finished_at, t.attempt, t.max_attempts, t.epoch, t.created_at, t.log_size, "
    "t.cancel_requested FROM trials t JOIN suites su ON su.id = t.suite_id LEFT JOIN nodes n ON n.id = t.node_id";
inline TrialRow ReadTrial(sql::Stmt& s) {
  TrialRow r;
  r.id = s.Int(0);
  r.sweep_id = s.Int(1);
  r.suite_id = s.Int(2);
  r.suite = s.Text(3);
  r.suite_version = static_cast<int>(s.Int(4));
  r.config = json::parse(s.TextView(5));
  r.config_key = s.Text(6);
  r.target_index = static_cast<int>(s.Int(7));
  r.repeat_index = static_cast<int>(s.Int(8));
  r.state = TrialStateColumn(s.TextView(9));
  r.verdict = OptVerdictColumn(s.OptText(10));
  r.signature = s.OptText(11);
  r.hardware = s.OptText(12);
  r.lease_id = s.OptText(13);
  r.gpus = s.OptText(14);
  r.node = s.OptText(15);
  r.node_id = s.OptInt(16);
  r.lease_deadline = s.OptInt(17);
  r.evidence_trial = s.OptInt(18);
  r.started_at = s.OptInt(19);
  r.finished_at = s.OptInt(20);
  r.attempt = static_cast<int>(s.Int(21));
  r.max_attempts = static_cast<int>(s.Int(22));
  r.epoch = s.Int(23);
  r.created_at = s.Int(24);
  r.log_size = s.Int(25);
  r.cancel_requested = s.Int(26) != 0;
  return r;
}

inline NodeRow ReadNode(sql::Stmt& s) {
  NodeRow n;
  n.id = s.Int(0);
  n.name = s.Text(1);
  n.inventory = ParseOr(s.TextView(2), json::object());
  n.labels = ParseOr(s.TextView(3), json::object());
  n.fingerprint = ParseOr(s.TextView(4), json::object());
  n.hardware = s.Text(5);
  n.state = detail::NodeStateColumn(s.TextView(6));
  n.reason = s.Text(7);
  n.registered_at = s.Int(8);
  n.last_heartbeat = s.Int(9);
  n.credential = s.Text(10);
  return n;
}
inline constexpr const char* kNodeCols =
    "id, name, inventory, labels, fingerprint, hardware, state, reason, registered_at, last_heartbeat, credential";

}  // namespace gauntlet::store::detail
