// The Store's trial lifecycle (see store.h): reading trials, leases, results, requeues and the
// counts the coordinator rebuilds its state from. Suites, sweeps and nodes are in store.cc, logs in
// store_logs.cc.
#include <algorithm>
#include <functional>
#include <tuple>

#include "core/verdict.h"
#include "store/results_index.h"
#include "store/store.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;
using namespace detail;

Result<TrialRow> Store::GetTrial(int64_t id) {
  return Guard([&]() -> Result<TrialRow> {
    return Read([&](sql::Db& db) -> Result<TrialRow> {
      auto& s = db.Cached(std::string("SELECT ") + kTrialCols + " WHERE t.id=?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(id));
      TrialRow t = ReadTrial(s);
      auto& r = db.Cached(
          "SELECT attempt, verdict, signature, evidence, failing_stage, exit_code, signal, metrics, stages, "
          "fingerprint, hardware, finished_at, kernels, basis FROM results WHERE trial_id=? ORDER BY attempt DESC LIMIT 1");
      r.Bind(1, id);
      if (r.Step()) {
        t.result = {{"attempt", r.Int(0)},
                    {"verdict", r.Text(1)},
                    {"signature", r.Text(2)},
                    {"evidence", r.Text(3)},
                    {"failing_stage", r.Text(4)},
                    {"exit_code", r.IsNull(5) ? json() : json(r.Int(5))},
                    {"signal", r.IsNull(6) ? json() : json(r.Text(6))},
                    {"metrics", ParseOr(r.TextView(7), json::object())},
                    {"stages", ParseOr(r.TextView(8), json::array())},
                    {"fingerprint", ParseOr(r.TextView(9), json::object())},
                    {"hardware", r.Text(10)},
                    {"finished_at", r.Int(11)},
                    {"kernels", r.IsNull(12) ? json() : ParseOr(r.TextView(12), json())},
                    {"basis", r.Text(13)}};
      }
      return t;
    });
  });
}

namespace {
// Each sort key's SQL over kTrialCols' aliases. A trial that has not finished sorts as took -1,
// before every finished one; a missing text as '' (first ascending).
const std::vector<std::pair<std::string, std::string>>& SortExprs() {
  static const std::vector<std::pair<std::string, std::string>> kExprs = {
      {"id", "t.id"},
      {"config", "t.config_key"},
      {"hardware", "COALESCE(t.hardware, '')"},
      {"state", "t.state"},
      {"verdict", "COALESCE(t.verdict, '')"},
      {"signature", "COALESCE(t.signature, '')"},
      {"node", "COALESCE(n.name, '')"},
      {"took", "COALESCE(t.finished_at - t.started_at, -1)"}};
  return kExprs;
}
}  // namespace

const std::vector<std::string>& TrialSortKeys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> out;
    for (auto& [k, e] : SortExprs()) out.push_back(k);
    return out;
  }();
  return kKeys;
}

Result<std::vector<TrialRow>> Store::ListTrials(const TrialFilter& f, QueryBudget* bounds) {
  QueryBudget unbounded = QueryBudget::Unbounded();
  QueryBudget& budget = bounds ? *bounds : unbounded;
  auto e = std::find_if(SortExprs().begin(), SortExprs().end(), [&](auto& p) { return p.first == f.sort; });
  if (e == SortExprs().end())
    return Status::Invalid("sort '" + f.sort + "' is not one of " + JoinNames(TrialSortKeys()), "sort");
  const std::string& expr = e->second;
  auto rows = Guard([&]() -> Result<std::vector<TrialRow>> {
    return ReadBounded(budget, [&](sql::Db& db) {
      // Keyset paging on (sort value, id): the cursor is the previous page's last trial, whose sort
      // value is read back here, so `after` stays a trial id whatever the sort. A trial whose value
      // changed since (a queued one that finished) moves the boundary; nothing is served twice within
      // one value.
      const char* cmp = f.descending ? " < " : " > ";
      std::string q = std::string("SELECT ") + kTrialCols + " WHERE 1";
      std::vector<std::function<void(sql::Stmt&, int)>> binds;
      if (f.after) {
        if (f.sort == "id") q += std::string(" AND t.id") + cmp + "?";
        else
          q += " AND (" + expr + ", t.id)" + cmp + "((SELECT " + expr +
               " FROM trials t LEFT JOIN nodes n ON n.id = t.node_id WHERE t.id = ?1), ?1)";
        binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, f.after); });
      }
      if (f.sweep) { q += " AND t.sweep_id=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.sweep); }); }
      if (f.suite) { q += " AND su.name=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.suite); }); }
      if (f.state) { q += " AND t.state=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, Name(*f.state)); }); }
      if (f.verdict) { q += " AND t.verdict=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, Name(*f.verdict)); }); }
      if (f.hardware) { q += " AND t.hardware=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.hardware); }); }
      if (f.signature) { q += " AND t.signature=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.signature); }); }
      for (auto& [name, value] : f.params) {
        q += " AND json_extract(t.config, ?) = ?";
        binds.push_back([&, n = name](sql::Stmt& s, int i) { s.Bind(i, "$.\"" + n + "\""); });
        binds.push_back([&, v = value](sql::Stmt& s, int i) { s.Bind(i, v); });
      }
      const char* dir = f.descending ? " DESC" : "";
      q += f.sort == "id" ? std::string(" ORDER BY t.id") + dir : " ORDER BY " + expr + dir + ", t.id" + dir;
      q += " LIMIT ?";
      auto& s = db.Cached(q);
      int i = 1;
      for (auto& b : binds) b(s, i++);
      s.Bind(i, f.limit);
      std::vector<TrialRow> out;
      while (s.Step()) {
        budget.Count();
        out.push_back(ReadTrial(s));
      }
      return out;
    });
  });
  // The budget ended it (SQLite's interrupt, which Guard saw as any error): say what to narrow.
  if (!rows.ok() && budget.why() != QueryBudget::Why::kNone)
    return budget.Answer("give sweep=, state=, verdict= or fewer param. filters, or a smaller limit", "sweep");
  return rows;
}

Status Store::LeaseTrial(int64_t trial, int64_t node, const std::string& lease, int64_t epoch, int64_t deadline,
                         const std::string& gpus, const std::string& hardware) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) REQUIRES(write_mu_) -> Status {  // Write runs it under write_mu_
      // One statement for the lease and, in the common case, the attempt's log start too: the
      // new attempt's log needs no label when nothing was logged yet, or when this same attempt
      // was granted before (given back unseen) with nothing written since (StartAttemptLogLocked).
      // SET reads the row as it was; RETURNING reads it as written.
      auto& u = db.Cached(
          "UPDATE trials SET state='leased', node_id=?, lease_id=?, epoch=?, lease_deadline=?, gpus=?, hardware=?, "
          "attempt=attempt+1, started_at=?, log_attempt=CASE WHEN log_size = 0 OR (log_size <= log_base AND "
          "log_attempt = attempt+1) THEN attempt+1 ELSE log_attempt END WHERE id=? AND state='queued' "
          "RETURNING log_size, log_base, log_attempt, attempt");
      u.Bind(1, node).Bind(2, lease).Bind(3, epoch).Bind(4, deadline).Bind(5, gpus).Bind(6, hardware);
      u.Bind(7, NowMs()).Bind(8, trial);
      if (!u.Step()) {
        u.Reset();
        return Status::Conflict("trial " + std::to_string(trial) + " is not queued");
      }
      const AttemptLog log{u.Int(0), u.Int(1), u.Int(2), u.Int(3)};
      u.Run();  // to completion: the row is written once the statement is done
      StartAttemptLogLocked(db, trial, log);
      return Status::Ok();
    });
  });
}

Status Store::MarkRunning(int64_t trial, int64_t epoch) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE trials SET state='running' WHERE id=? AND epoch=? AND state='leased'");
      u.Bind(1, trial).Bind(2, epoch).Run();
      return Status::Ok();
    });
  });
}

Status Store::ExtendLeases(const std::vector<std::pair<int64_t, int64_t>>& trial_deadlines) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE trials SET lease_deadline=? WHERE id=?");
      for (auto& [t, d] : trial_deadlines) u.Bind(1, d).Bind(2, t).Run();
      return Status::Ok();
    });
  });
}

const std::string& Store::KeyMetricName(sql::Db& db, int64_t suite_id) {
  // A suite version's definition never changes, so its key metric is read once: json_extract over
  // the whole definition (kilobytes for a suite with many values) on every report was a real cost.
  auto it = key_metrics_.find(suite_id);
  if (it != key_metrics_.end()) return it->second;
  auto& q = db.Cached("SELECT COALESCE(json_extract(definition, '$.key_metric'), '') FROM suites WHERE id=?");
  q.Bind(1, suite_id);
  std::string name = q.Step() ? q.Text(0) : "";
  q.Reset();
  return key_metrics_.emplace(suite_id, std::move(name)).first->second;
}

Result<CellUpdate> Store::InsertResultLocked(sql::Db& db, const ResultRow& r) {
  auto& ins = db.Cached(
      "INSERT OR REPLACE INTO results(trial_id, attempt, verdict, signature, evidence, failing_stage, exit_code, "
      "signal, metrics, stages, fingerprint, node_id, hardware, finished_at, kernels, tests_not_stored, basis)"
      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const std::string fingerprint = r.fingerprint.dump();
  ins.Bind(1, r.trial_id).Bind(2, r.attempt).Bind(3, Name(r.verdict)).Bind(4, r.signature).Bind(5, r.evidence);
  ins.Bind(6, r.failing_stage).Bind(7, r.exit_code ? std::optional<int64_t>(*r.exit_code) : std::nullopt);
  ins.Bind(8, r.signal).Bind(9, r.metrics.dump()).Bind(10, r.stages.dump()).Bind(11, fingerprint);
  ins.Bind(12, r.node_id).Bind(13, r.hardware).Bind(14, r.finished_at);
  if (r.kernels.is_null()) ins.BindNull(15);
  else ins.Bind(15, r.kernels.dump());
  ins.Bind(16, TestsNotStored(r));
  ins.Bind(17, r.basis ? std::string(Name(*r.basis)) : std::string());
  ins.Run();
  if (r.relabel) {
    auto& a = db.Cached(
        "INSERT INTO verdict_audit(trial_id, label_id, from_verdict, from_signature, from_basis, to_verdict, to_signature,"
        " at, by) VALUES(?,?,?,?,?,?,?,?,?)");
    a.Bind(1, r.trial_id).Bind(2, r.relabel->label).Bind(3, Name(r.relabel->from_verdict)).Bind(4, r.relabel->from_signature);
    a.Bind(5, r.relabel->from_basis ? std::string(Name(*r.relabel->from_basis)) : std::string());
    a.Bind(6, Name(r.verdict)).Bind(7, r.signature).Bind(8, r.finished_at).Bind(9, r.relabel->by).Run();
  }
  InsertTestCasesLocked(db, r);
  auto& q = db.Cached(
      "SELECT su.name, t.config_key, t.config, t.suite_id, COALESCE(NULLIF(?, ''), t.hardware, ''), su.version"
      " FROM trials t JOIN suites su ON su.id = t.suite_id WHERE t.id=?");
  q.Bind(1, r.hardware).Bind(2, r.trial_id);
  if (!q.Step()) return Status::NotFound("no trial " + std::to_string(r.trial_id));
  CellUpdate cell{q.Text(0), q.Text(1), q.Text(4), q.Text(2), r.verdict, r.signature, fingerprint,
                  r.trial_id, r.finished_at, KeyMetric(KeyMetricName(db, q.Int(3)), r.metrics), q.Int(5)};
  NoteResultKeyLocked(q.Int(3), cell.config_key);
  q.Reset();
  return cell;
}

Status Store::FinishTrial(const ResultRow& r, std::optional<int64_t> evidence_trial) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) REQUIRES(write_mu_) -> Status {  // Write runs it under write_mu_
      auto cell_or = InsertResultLocked(db, r);
      if (!cell_or.ok()) return cell_or.status();
      CellUpdate& cell = *cell_or;
      auto& u = db.Cached(
          "UPDATE trials SET state='done', verdict=?, signature=?, finished_at=?, lease_id=NULL, lease_deadline=NULL,"
          " evidence_trial=COALESCE(?, evidence_trial), hardware=COALESCE(NULLIF(?, ''), hardware),"
          " attempt=MAX(attempt, ?), fingerprint=?, metric_name=?, metric_value=?, metric_unit=?,"
          " confirmed=?, flaky=?, dispatch=? WHERE id=?");
      u.Bind(1, Name(r.verdict)).Bind(2, r.signature).Bind(3, r.finished_at).Bind(4, evidence_trial).Bind(5, r.hardware);
      u.Bind(6, r.attempt).Bind(7, cell.fingerprint);
      if (cell.metric) u.Bind(8, cell.metric->name).Bind(9, cell.metric->value).Bind(10, cell.metric->unit);
      else u.BindNull(8).BindNull(9).BindNull(10);
      u.Bind(11, r.confirmed).Bind(12, r.flaky ? 1 : 0);
      // The family that carried the run, for the matrix's dispatch layer (NULL: not recorded).
      const std::string family = r.kernels.is_object() ? r.kernels.value("carrying_family", "") : "";
      if (family.empty()) u.BindNull(13);
      else u.Bind(13, family);
      u.Bind(14, r.trial_id).Run();
      cell.flaky = r.flaky;
      cell.reused = r.reused;
      UpsertCell(db, cell);
      return Status::Ok();
    });
  });
}

Status Store::RequeueTrial(int64_t trial, int attempt) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached(
          "UPDATE trials SET state='queued', lease_id=NULL, lease_deadline=NULL, node_id=NULL, gpus=NULL, attempt=? "
          "WHERE id=?");
      u.Bind(1, attempt).Bind(2, trial).Run();
      return Status::Ok();
    });
  });
}

Status Store::RecordAttempt(const ResultRow& r) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) REQUIRES(write_mu_) -> Status {  // Write runs it under write_mu_
      auto cell_or = InsertResultLocked(db, r);
      if (!cell_or.ok()) return cell_or.status();
      const CellUpdate& cell = *cell_or;
      const std::string path = "$.\"" + std::string(Name(r.verdict)) + "\"";
      auto& u = db.Cached(
          "UPDATE trials SET state='queued', lease_id=NULL, lease_deadline=NULL, node_id=NULL, gpus=NULL, attempt=?,"
          " attempt_counts=json_set(COALESCE(attempt_counts, '{}'), ?, COALESCE(json_extract(attempt_counts, ?), 0) + 1)"
          " WHERE id=?");
      u.Bind(1, r.attempt).Bind(2, path).Bind(3, path).Bind(4, r.trial_id).Run();
      UpsertCell(db, cell);
      return Status::Ok();
    });
  });
}

Status Store::FinishMany(const std::vector<int64_t>& trials, Verdict verdict, const std::string& signature,
                         std::optional<int64_t> evidence_trial, const std::string& hardware) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached(
          "UPDATE trials SET state='done', verdict=?, signature=?, finished_at=?, evidence_trial=?, lease_id=NULL,"
          " lease_deadline=NULL,"
          " hardware=COALESCE(NULLIF(?, ''), hardware) WHERE id=? AND state != 'done'");
      auto& q = db.Cached(
          "SELECT su.name, t.config_key, t.config, su.version FROM trials t JOIN suites su ON su.id = t.suite_id"
          " WHERE t.id=?");
      const int64_t now = NowMs();
      for (int64_t t : trials) {
        u.Bind(1, Name(verdict)).Bind(2, signature).Bind(3, now).Bind(4, evidence_trial).Bind(5, hardware).Bind(6, t).Run();
        if (db.Changes() == 0 || hardware.empty()) continue;
        q.Bind(1, t);
        if (q.Step()) UpsertCell(db, {q.Text(0), q.Text(1), hardware, q.Text(2), verdict, signature, "", t, now, {}, q.Int(3)});
        q.Reset();
      }
      return Status::Ok();
    });
  });
}


void Store::NoteResultKeyLocked(int64_t suite_id, const std::string& config_key) {
  MutexLock lock(result_keys_mu_);
  auto it = result_keys_.find(suite_id);
  if (it != result_keys_.end()) it->second.insert(std::hash<std::string>{}(config_key));
  // A suite not loaded yet reads this row with the rest when it is.
}

bool Store::MayHaveResult(int64_t suite_id, const std::string& config_key) {
  const size_t h = std::hash<std::string>{}(config_key);
  {
    MutexLock lock(result_keys_mu_);
    auto it = result_keys_.find(suite_id);
    if (it != result_keys_.end()) return it->second.count(h) > 0;
  }
  // The suite's first lookup: its keys through the writer, which sees staged rows too, while no
  // write can file another (InsertResultLocked notes each key under write_mu_).
  MutexLock writing(write_mu_);
  std::unordered_set<size_t> keys;
  try {
    auto q = writer_->Prepare("SELECT DISTINCT t.config_key FROM trials t JOIN results r ON r.trial_id = t.id"
                              " WHERE t.suite_id=? AND r.verdict IN (" + detail::JudgedSqlList() + ")");
    q.Bind(1, suite_id);
    while (q.Step()) keys.insert(std::hash<std::string_view>{}(q.TextView(0)));
  } catch (const sql::Error&) {
    return true;  // not known: the lookup itself decides
  }
  MutexLock lock(result_keys_mu_);
  auto& set = result_keys_.try_emplace(suite_id, std::move(keys)).first->second;
  return set.count(h) > 0;
}

std::optional<ResultRow> Store::FindResult(int64_t suite_id, const std::string& config_key, const std::string& hardware,
                                          const std::optional<std::string>& fingerprint) {
  if (!MayHaveResult(suite_id, config_key)) return std::nullopt;
  try {
    return Read([&](sql::Db& db) -> std::optional<ResultRow> {
      static const std::string kSql = [] {
        const std::string& judged = detail::JudgedSqlList();
        return "SELECT r.trial_id, r.attempt, r.verdict, r.signature, r.evidence, r.failing_stage, r.exit_code, r.signal,"
               " r.metrics, r.stages, r.fingerprint, r.hardware, t.confirmed, t.flaky FROM trials t"
               " JOIN results r ON r.trial_id = t.id AND r.attempt = t.attempt"
               " WHERE t.suite_id=? AND t.config_key=? AND t.state='done' AND r.hardware=? AND (?5 OR r.fingerprint=?4)"
               " AND r.verdict IN (" + judged + ") ORDER BY r.finished_at DESC LIMIT 1";
      }();
      auto& q = db.Cached(kSql);
      q.Bind(1, suite_id).Bind(2, config_key).Bind(3, hardware).Bind(4, fingerprint.value_or(""));
      q.Bind(5, fingerprint ? 0 : 1);
      if (!q.Step()) return std::nullopt;
      ResultRow r;
      r.trial_id = q.Int(0);
      r.attempt = static_cast<int>(q.Int(1));
      r.verdict = VerdictColumn(q.TextView(2));
      r.signature = q.Text(3);
      r.evidence = q.Text(4);
      r.failing_stage = q.Text(5);
      if (!q.IsNull(6)) r.exit_code = static_cast<int>(q.Int(6));
      r.signal = q.OptText(7);
      r.metrics = ParseOr(q.TextView(8), json::object());
      r.stages = ParseOr(q.TextView(9), json::array());
      r.fingerprint = ParseOr(q.TextView(10), json::object());
      r.hardware = q.Text(11);
      r.confirmed = static_cast<int>(q.Int(12));
      r.flaky = q.Int(13) != 0;
      return r;
    });
  } catch (const sql::Error&) {
    return std::nullopt;  // reuse is an optimisation: on a store error, run the trial
  }
}

Result<std::vector<TrialRow>> Store::RequeueDone(int64_t sweep, const std::vector<Verdict>& verdicts) {
  return Guard([&]() -> Result<std::vector<TrialRow>> {
    return Write([&](sql::Db& db) {
      std::vector<int64_t> ids;
      auto& q = db.Cached("SELECT id FROM trials WHERE sweep_id=? AND state='done' AND verdict=?");
      for (auto& v : verdicts) {
        q.Bind(1, sweep).Bind(2, Name(v));
        while (q.Step()) ids.push_back(q.Int(0));
        q.Reset();
      }
      auto& u = db.Cached(
          "UPDATE trials SET state='queued', verdict=NULL, signature=NULL, finished_at=NULL, attempt=0, node_id=NULL,"
          " gpus=NULL, cancel_requested=0 WHERE id=?");
      auto& s = db.Cached(std::string("SELECT ") + kTrialCols + " WHERE t.id=?");
      std::vector<TrialRow> out;
      for (int64_t id : ids) {
        u.Bind(1, id).Run();
        s.Bind(1, id);
        if (s.Step()) out.push_back(ReadTrial(s));
        s.Reset();
      }
      return out;
    });
  });
}

Result<std::vector<std::tuple<std::string, std::string, int64_t>>> Store::CountTrials() {
  return Guard([&]() -> Result<std::vector<std::tuple<std::string, std::string, int64_t>>> {
    return Read([&](sql::Db& db) {
      auto& q = db.Cached("SELECT state, COALESCE(verdict, ''), COUNT(*) FROM trials GROUP BY 1, 2");
      std::vector<std::tuple<std::string, std::string, int64_t>> out;
      while (q.Step()) out.emplace_back(q.Text(0), q.Text(1), q.Int(2));
      return out;
    });
  });
}

Result<std::vector<TrialRow>> Store::ActiveTrials() {
  return Guard([&]() -> Result<std::vector<TrialRow>> {
    return Read([&](sql::Db& db) {
      auto& s = db.Cached(std::string("SELECT ") + kTrialCols + " WHERE t.state != 'done' ORDER BY t.id");
      std::vector<TrialRow> out;
      while (s.Step()) out.push_back(ReadTrial(s));
      return out;
    });
  });
}

}  // namespace gauntlet::store
