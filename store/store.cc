#include "store/store.h"

#include <chrono>
#include <tuple>
#include <functional>

#include "store/migrations.h"
#include "store/results_index.h"

namespace gauntlet {
using nlohmann::json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
// Every store method converts SQLite exceptions into a Status here, so callers see one error style.
template <typename F>
auto Guard(F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const sql::Error& e) {
    return Status(Code::kInternal, std::string("store: ") + e.what());
  } catch (const json::exception& e) {
    return Status(Code::kInternal, std::string("store: bad stored JSON: ") + e.what());
  }
}

json ParseOr(std::string_view s, json fallback) {
  if (s.empty()) return fallback;
  return json::parse(s, nullptr, false).is_discarded() ? fallback : json::parse(s);
}

std::string Digest(const std::string& s) {
  // FNV-1a 64: a change detector for suite definitions, not a security boundary.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

constexpr const char* kSuiteCols = "id, name, version, definition, source_dir, created_at";
SuiteRow ReadSuite(sql::Stmt& s) {
  SuiteRow r;
  r.id = s.Int(0);
  r.name = s.Text(1);
  r.version = static_cast<int>(s.Int(2));
  r.definition = json::parse(s.TextView(3));
  r.source_dir = s.Text(4);
  r.created_at = s.Int(5);
  return r;
}

constexpr const char* kTrialCols =
    "t.id, t.sweep_id, t.suite_id, su.name, su.version, t.config, t.config_key, t.target_index, t.repeat_index, "
    "t.state, t.verdict, t.signature, t.hardware, t.lease_id, t.gpus, n.name, t.node_id, t.lease_deadline, "
    "t.evidence_trial, t.started_at, t.finished_at, t.attempt, t.max_attempts, t.epoch, t.created_at, t.log_size, "
    "t.cancel_requested FROM trials t JOIN suites su ON su.id = t.suite_id LEFT JOIN nodes n ON n.id = t.node_id";
TrialRow ReadTrial(sql::Stmt& s) {
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
  r.state = s.Text(9);
  r.verdict = s.OptText(10);
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

NodeRow ReadNode(sql::Stmt& s) {
  NodeRow n;
  n.id = s.Int(0);
  n.name = s.Text(1);
  n.inventory = ParseOr(s.TextView(2), json::object());
  n.labels = ParseOr(s.TextView(3), json::object());
  n.fingerprint = ParseOr(s.TextView(4), json::object());
  n.hardware = s.Text(5);
  n.state = s.Text(6);
  n.reason = s.Text(7);
  n.registered_at = s.Int(8);
  n.last_heartbeat = s.Int(9);
  return n;
}
constexpr const char* kNodeCols =
    "id, name, inventory, labels, fingerprint, hardware, state, reason, registered_at, last_heartbeat";
}  // namespace

Store::Store(std::string path) : path_(std::move(path)), memory_(path_ == ":memory:" || path_.empty()) {}
Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  std::unique_ptr<Store> s(new Store(path));
  try {
    s->writer_ = std::make_unique<sql::Db>(s->memory_ ? ":memory:" : path);
    Migrate(*s->writer_);
  } catch (const sql::Error& e) {
    return Status(Code::kUnavailable, e.what());
  }
  s->committer_ = std::thread([p = s.get()] { p->CommitLoop(); });
  return s;
}

Store::Lease::Lease(Store* s) : store(s), db(nullptr) {
  if (s->memory_) {
    mem_lock = std::unique_lock(s->write_mu_);
    db = s->writer_.get();
    return;
  }
  {
    std::lock_guard lock(s->pool_mu_);
    if (!s->pool_.empty()) {
      owned = std::move(s->pool_.back());
      s->pool_.pop_back();
    }
  }
  if (!owned) owned = std::make_unique<sql::Db>(s->path_);
  db = owned.get();
}

Store::Lease::~Lease() {
  db->ResetAll();
  if (owned) {
    std::lock_guard lock(store->pool_mu_);
    store->pool_.push_back(std::move(owned));
  }
}

Result<SuiteRow> Store::PutSuite(const std::string& name, const json& def, const std::string& source_dir,
                                 bool* created) {
  return Guard([&]() -> Result<SuiteRow> {
    const std::string text = def.dump();
    const std::string digest = Digest(text + "\n" + source_dir);
    return Write([&](sql::Db& db) -> Result<SuiteRow> {
      auto& q = db.Cached(std::string("SELECT ") + kSuiteCols + ", digest FROM suites WHERE name=? ORDER BY version DESC LIMIT 1");
      q.Bind(1, name);
      int next = 1;
      if (q.Step()) {
        if (q.Text(6) == digest) {
          if (created) *created = false;
          return ReadSuite(q);
        }
        next = static_cast<int>(q.Int(2)) + 1;
      }
      // A stated version is honoured when it is new; a changed definition never reuses a number.
      int stated = def.value("version", 0);
      int version = std::max(next, stated);
      auto& ins = db.Cached(
          "INSERT INTO suites(name, version, digest, definition, source_dir, created_at) VALUES(?,?,?,?,?,?)");
      ins.Bind(1, name).Bind(2, version).Bind(3, digest).Bind(4, text).Bind(5, source_dir).Bind(6, NowMs());
      ins.Run();
      SuiteRow r{db.LastInsertId(), name, version, def, source_dir, NowMs()};
      if (created) *created = true;
      return r;
    });
  });
}

Result<SuiteRow> Store::GetSuite(const std::string& name, std::optional<int> version) {
  return Guard([&]() -> Result<SuiteRow> {
    return Read([&](sql::Db& db) -> Result<SuiteRow> {
      std::string q = std::string("SELECT ") + kSuiteCols + " FROM suites WHERE name=?" +
                      (version ? " AND version=?" : " ORDER BY version DESC LIMIT 1");
      auto& s = db.Cached(q);
      s.Bind(1, name);
      if (version) s.Bind(2, *version);
      if (!s.Step()) return Status::NotFound("no suite named '" + name + "'");
      return ReadSuite(s);
    });
  });
}

Result<SuiteRow> Store::GetSuiteById(int64_t id) {
  return Guard([&]() -> Result<SuiteRow> {
    return Read([&](sql::Db& db) -> Result<SuiteRow> {
      auto& s = db.Cached(std::string("SELECT ") + kSuiteCols + " FROM suites WHERE id=?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no suite with id " + std::to_string(id));
      return ReadSuite(s);
    });
  });
}

Result<std::vector<SuiteRow>> Store::ListSuites() {
  return Guard([&]() -> Result<std::vector<SuiteRow>> {
    return Read([&](sql::Db& db) {
      auto& s = db.Cached(std::string("SELECT ") + kSuiteCols +
                          " FROM suites WHERE (name, version) IN (SELECT name, MAX(version) FROM suites GROUP BY name)"
                          " ORDER BY name");
      std::vector<SuiteRow> out;
      while (s.Step()) out.push_back(ReadSuite(s));
      return out;
    });
  });
}

Result<int64_t> Store::CreateSweep(int64_t suite_id, const std::string& name, const json& request, int priority,
                                   int max_attempts, const std::vector<NewTrial>& trials, int64_t* first_trial) {
  return Guard([&]() -> Result<int64_t> {
    return Write([&](sql::Db& db) -> Result<int64_t> {
      const int64_t now = NowMs();
      const int64_t count = static_cast<int64_t>(trials.size());
      auto& s = db.Cached(
          "INSERT INTO sweeps(suite_id, name, request, priority, trial_count, created_at) VALUES(?,?,?,?,?,?)");
      s.Bind(1, suite_id).Bind(2, name).Bind(3, request.dump()).Bind(4, priority).Bind(5, count).Bind(6, now);
      s.Run();
      const int64_t sweep = db.LastInsertId();
      auto& t = db.Cached(
          "INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, repeat_index, state, created_at,"
          " max_attempts) VALUES(?,?,?,?,?,?,'queued',?,?)");
      *first_trial = 0;
      for (const auto& nt : trials) {
        t.Bind(1, sweep).Bind(2, suite_id).Bind(3, nt.config_json).Bind(4, nt.config_key).Bind(5, nt.target_index);
        t.Bind(6, nt.repeat_index).Bind(7, now).Bind(8, max_attempts);
        t.Run();
        if (*first_trial == 0) *first_trial = db.LastInsertId();
      }
      return sweep;
    });
  });
}

namespace {
void FillCounts(sql::Db& db, SweepRow& r) {
  auto& c = db.Cached("SELECT state, verdict, COUNT(*) FROM trials WHERE sweep_id=? GROUP BY state, verdict");
  c.Bind(1, r.id);
  while (c.Step()) {
    std::string state = c.Text(0);
    int64_t n = c.Int(2);
    r.by_state[state] = r.by_state.value(state, 0) + n;
    if (!c.IsNull(1)) r.by_verdict[c.Text(1)] = r.by_verdict.value(c.Text(1), int64_t{0}) + n;
  }
}
constexpr const char* kSweepCols =
    "s.id, s.suite_id, su.name, su.version, s.name, s.request, s.priority, s.trial_count, s.created_at, "
    "s.cancelled_at FROM sweeps s JOIN suites su ON su.id = s.suite_id";
SweepRow ReadSweep(sql::Stmt& s) {
  SweepRow r;
  r.id = s.Int(0);
  r.suite_id = s.Int(1);
  r.suite = s.Text(2);
  r.suite_version = static_cast<int>(s.Int(3));
  r.name = s.Text(4);
  r.request = json::parse(s.TextView(5));
  r.priority = static_cast<int>(s.Int(6));
  r.trial_count = s.Int(7);
  r.created_at = s.Int(8);
  r.cancelled_at = s.OptInt(9);
  return r;
}
}  // namespace

Result<SweepRow> Store::GetSweep(int64_t id) {
  return Guard([&]() -> Result<SweepRow> {
    return Read([&](sql::Db& db) -> Result<SweepRow> {
      auto& s = db.Cached(std::string("SELECT ") + kSweepCols + " WHERE s.id=?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no sweep " + std::to_string(id));
      SweepRow r = ReadSweep(s);
      FillCounts(db, r);
      return r;
    });
  });
}

Result<std::vector<SweepRow>> Store::ListSweeps(int64_t after, int limit) {
  return Guard([&]() -> Result<std::vector<SweepRow>> {
    return Read([&](sql::Db& db) {
      auto& s = db.Cached(std::string("SELECT ") + kSweepCols + " WHERE s.id < ? ORDER BY s.id DESC LIMIT ?");
      s.Bind(1, after > 0 ? after : INT64_MAX).Bind(2, limit);
      std::vector<SweepRow> out;
      while (s.Step()) out.push_back(ReadSweep(s));
      for (auto& r : out) FillCounts(db, r);
      return out;
    });
  });
}

Status Store::CancelSweep(int64_t id, std::vector<int64_t>* cancelled, std::vector<int64_t>* stopping) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT id, state FROM trials WHERE sweep_id=? AND state != 'done'");
      s.Bind(1, id);
      while (s.Step()) (s.Text(1) == "queued" ? cancelled : stopping)->push_back(s.Int(0));
      auto& chk = db.Cached("SELECT 1 FROM sweeps WHERE id=?");
      chk.Bind(1, id);
      if (!chk.Step()) return Status::NotFound("no sweep " + std::to_string(id));
      const int64_t now = NowMs();
      auto& u = db.Cached(
          "UPDATE trials SET state='done', verdict='cancelled', signature='cancelled:by_user', finished_at=? "
          "WHERE sweep_id=? AND state='queued'");
      u.Bind(1, now).Bind(2, id).Run();
      auto& r = db.Cached("UPDATE trials SET cancel_requested=1 WHERE sweep_id=? AND state IN ('leased','running')");
      r.Bind(1, id).Run();
      auto& sw = db.Cached("UPDATE sweeps SET cancelled_at=? WHERE id=? AND cancelled_at IS NULL");
      sw.Bind(1, now).Bind(2, id).Run();
      return Status::Ok();
    });
  });
}

Status Store::CancelTrial(int64_t id, bool* now_done) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT state FROM trials WHERE id=?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(id));
      std::string state = s.Text(0);
      *now_done = false;
      if (state == "queued") {
        auto& u = db.Cached(
            "UPDATE trials SET state='done', verdict='cancelled', signature='cancelled:by_user', finished_at=? "
            "WHERE id=?");
        u.Bind(1, NowMs()).Bind(2, id).Run();
        *now_done = true;
      } else if (state != "done") {
        auto& u = db.Cached("UPDATE trials SET cancel_requested=1 WHERE id=?");
        u.Bind(1, id).Run();
      }
      return Status::Ok();
    });
  });
}

Result<TrialRow> Store::GetTrial(int64_t id) {
  return Guard([&]() -> Result<TrialRow> {
    return Read([&](sql::Db& db) -> Result<TrialRow> {
      auto& s = db.Cached(std::string("SELECT ") + kTrialCols + " WHERE t.id=?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(id));
      TrialRow t = ReadTrial(s);
      auto& r = db.Cached(
          "SELECT attempt, verdict, signature, evidence, failing_stage, exit_code, signal, metrics, stages, "
          "fingerprint, hardware, finished_at FROM results WHERE trial_id=? ORDER BY attempt DESC LIMIT 1");
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
                    {"finished_at", r.Int(11)}};
      }
      return t;
    });
  });
}

Result<std::vector<TrialRow>> Store::ListTrials(const TrialFilter& f) {
  return Guard([&]() -> Result<std::vector<TrialRow>> {
    return Read([&](sql::Db& db) {
      std::string q = std::string("SELECT ") + kTrialCols + " WHERE t.id > ?";
      std::vector<std::function<void(sql::Stmt&, int)>> binds;
      if (f.sweep) { q += " AND t.sweep_id=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.sweep); }); }
      if (f.suite) { q += " AND su.name=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.suite); }); }
      if (f.state) { q += " AND t.state=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.state); }); }
      if (f.verdict) { q += " AND t.verdict=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.verdict); }); }
      if (f.hardware) { q += " AND t.hardware=?"; binds.push_back([&](sql::Stmt& s, int i) { s.Bind(i, *f.hardware); }); }
      for (auto& [name, value] : f.params) {
        q += " AND json_extract(t.config, ?) = ?";
        binds.push_back([&, n = name](sql::Stmt& s, int i) { s.Bind(i, "$.\"" + n + "\""); });
        binds.push_back([&, v = value](sql::Stmt& s, int i) { s.Bind(i, v); });
      }
      q += " ORDER BY t.id LIMIT ?";
      auto& s = db.Cached(q);
      int i = 1;
      s.Bind(i++, f.after);
      for (auto& b : binds) b(s, i++);
      s.Bind(i, f.limit);
      std::vector<TrialRow> out;
      while (s.Step()) out.push_back(ReadTrial(s));
      return out;
    });
  });
}

Result<NodeRow> Store::RegisterNode(const std::string& name, const json& inventory, const json& labels,
                                    const json& fingerprint, const std::string& hardware) {
  return Guard([&]() -> Result<NodeRow> {
    return Write([&](sql::Db& db) -> Result<NodeRow> {
      const int64_t now = NowMs();
      // A node that registers again (worker restart) keeps its id, so history stays joined; a
      // quarantined node stays quarantined until an admin clears it.
      auto& s = db.Cached(
          "INSERT INTO nodes(name, inventory, labels, fingerprint, hardware, state, registered_at, last_heartbeat) "
          "VALUES(?,?,?,?,?,'online',?,?) ON CONFLICT(name) DO UPDATE SET inventory=excluded.inventory, "
          "labels=excluded.labels, fingerprint=excluded.fingerprint, hardware=excluded.hardware, "
          "state=CASE WHEN nodes.state='quarantined' THEN 'quarantined' ELSE 'online' END, "
          "registered_at=excluded.registered_at, last_heartbeat=excluded.last_heartbeat");
      s.Bind(1, name).Bind(2, inventory.dump()).Bind(3, labels.dump()).Bind(4, fingerprint.dump());
      s.Bind(5, hardware).Bind(6, now).Bind(7, now).Run();
      auto& q = db.Cached(std::string("SELECT ") + kNodeCols + " FROM nodes WHERE name=?");
      q.Bind(1, name);
      q.Step();
      return ReadNode(q);
    });
  });
}

Result<std::vector<NodeRow>> Store::ListNodes() {
  return Guard([&]() -> Result<std::vector<NodeRow>> {
    return Read([&](sql::Db& db) {
      auto& q = db.Cached(std::string("SELECT ") + kNodeCols + " FROM nodes ORDER BY id");
      std::vector<NodeRow> out;
      while (q.Step()) out.push_back(ReadNode(q));
      return out;
    });
  });
}

Status Store::SetNodeState(int64_t id, const std::string& state, const std::string& reason) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE nodes SET state=?, reason=? WHERE id=?");
      u.Bind(1, state).Bind(2, reason).Bind(3, id).Run();
      if (db.Changes() == 0) return Status::NotFound("no node " + std::to_string(id));
      return Status::Ok();
    });
  });
}

Status Store::TouchNodes(const std::vector<std::pair<int64_t, int64_t>>& last_seen) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE nodes SET last_heartbeat=? WHERE id=?");
      for (auto [id, ms] : last_seen) u.Bind(1, ms).Bind(2, id).Run();
      return Status::Ok();
    });
  });
}

Status Store::LeaseTrial(int64_t trial, int64_t node, const std::string& lease, int64_t epoch, int64_t deadline,
                         const std::string& gpus, const std::string& hardware) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached(
          "UPDATE trials SET state='leased', node_id=?, lease_id=?, epoch=?, lease_deadline=?, gpus=?, hardware=?, "
          "attempt=attempt+1, started_at=? WHERE id=? AND state='queued'");
      u.Bind(1, node).Bind(2, lease).Bind(3, epoch).Bind(4, deadline).Bind(5, gpus).Bind(6, hardware);
      u.Bind(7, NowMs()).Bind(8, trial).Run();
      if (db.Changes() == 0) return Status::Conflict("trial " + std::to_string(trial) + " is not queued");
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

Status Store::FinishTrial(const ResultRow& r, std::optional<int64_t> evidence_trial) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& ins = db.Cached(
          "INSERT OR REPLACE INTO results(trial_id, attempt, verdict, signature, evidence, failing_stage, exit_code, "
          "signal, metrics, stages, fingerprint, node_id, hardware, finished_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      const std::string fingerprint = r.fingerprint.dump();
      ins.Bind(1, r.trial_id).Bind(2, r.attempt).Bind(3, r.verdict).Bind(4, r.signature).Bind(5, r.evidence);
      ins.Bind(6, r.failing_stage).Bind(7, r.exit_code ? std::optional<int64_t>(*r.exit_code) : std::nullopt);
      ins.Bind(8, r.signal).Bind(9, r.metrics.dump()).Bind(10, r.stages.dump()).Bind(11, fingerprint);
      ins.Bind(12, r.node_id).Bind(13, r.hardware).Bind(14, r.finished_at);
      ins.Run();
      auto& q = db.Cached(
          "SELECT su.name, t.config_key, t.config, t.suite_id,"
          " COALESCE(NULLIF(?, ''), t.hardware, '') FROM trials t JOIN suites su ON su.id = t.suite_id WHERE t.id=?");
      q.Bind(1, r.hardware).Bind(2, r.trial_id);
      if (!q.Step()) return Status::NotFound("no trial " + std::to_string(r.trial_id));
      CellUpdate cell{q.Text(0), q.Text(1), q.Text(4), q.Text(2), r.verdict, r.signature, fingerprint,
                      r.trial_id, r.finished_at, KeyMetric(KeyMetricName(db, q.Int(3)), r.metrics)};
      auto& u = db.Cached(
          "UPDATE trials SET state='done', verdict=?, signature=?, finished_at=?, lease_id=NULL, lease_deadline=NULL,"
          " evidence_trial=COALESCE(?, evidence_trial), hardware=COALESCE(NULLIF(?, ''), hardware),"
          " attempt=MAX(attempt, ?), fingerprint=?, metric_name=?, metric_value=?, metric_unit=? WHERE id=?");
      u.Bind(1, r.verdict).Bind(2, r.signature).Bind(3, r.finished_at).Bind(4, evidence_trial).Bind(5, r.hardware);
      u.Bind(6, r.attempt).Bind(7, fingerprint);
      if (cell.metric) u.Bind(8, cell.metric->name).Bind(9, cell.metric->value).Bind(10, cell.metric->unit);
      else u.BindNull(8).BindNull(9).BindNull(10);
      u.Bind(11, r.trial_id).Run();
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

Status Store::FinishMany(const std::vector<int64_t>& trials, const std::string& verdict, const std::string& signature,
                         std::optional<int64_t> evidence_trial, const std::string& hardware) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached(
          "UPDATE trials SET state='done', verdict=?, signature=?, finished_at=?, evidence_trial=?, lease_id=NULL,"
          " hardware=COALESCE(NULLIF(?, ''), hardware) WHERE id=? AND state != 'done'");
      auto& q = db.Cached(
          "SELECT su.name, t.config_key, t.config FROM trials t JOIN suites su ON su.id = t.suite_id WHERE t.id=?");
      const int64_t now = NowMs();
      for (int64_t t : trials) {
        u.Bind(1, verdict).Bind(2, signature).Bind(3, now).Bind(4, evidence_trial).Bind(5, hardware).Bind(6, t).Run();
        if (db.Changes() == 0 || hardware.empty()) continue;
        q.Bind(1, t);
        if (q.Step()) UpsertCell(db, {q.Text(0), q.Text(1), hardware, q.Text(2), verdict, signature, "", t, now, {}});
        q.Reset();
      }
      return Status::Ok();
    });
  });
}

Status Store::AppendLog(int64_t trial, int64_t offset, std::string_view data, int64_t cap) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT log_size FROM trials WHERE id=?");
      s.Bind(1, trial);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(trial));
      const int64_t size = s.Int(0);
      if (offset + static_cast<int64_t>(data.size()) <= size) return Status::Ok();  // a retry of a stored chunk
      if (offset > size) return Status::Conflict("log offset " + std::to_string(offset) + " is past the end " +
                                                 std::to_string(size));
      data.remove_prefix(static_cast<size_t>(size - offset));
      offset = size;
      auto& ins = db.Cached("INSERT OR REPLACE INTO log_chunks(trial_id, offset, data) VALUES(?,?,?)");
      ins.Bind(1, trial).Bind(2, offset).BindBlob(3, data).Run();
      // Keep the head and the tail: drop whole chunks from the middle once the stored bytes pass the cap.
      if (offset + static_cast<int64_t>(data.size()) > cap) {
        auto& del = db.Cached(
            "DELETE FROM log_chunks WHERE trial_id=? AND offset >= ? AND offset + length(data) <= ?");
        del.Bind(1, trial).Bind(2, cap / 2).Bind(3, offset + static_cast<int64_t>(data.size()) - cap / 2).Run();
      }
      auto& u = db.Cached("UPDATE trials SET log_size=? WHERE id=?");
      u.Bind(1, offset + static_cast<int64_t>(data.size())).Bind(2, trial).Run();
      return Status::Ok();
    });
  });
}

Status Store::ReadLog(int64_t trial, int64_t offset, int64_t max, std::string* out, int64_t* size,
                      int64_t* next) {
  return Guard([&]() -> Status {
    return Read([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT log_size FROM trials WHERE id=?");
      s.Bind(1, trial);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(trial));
      *size = s.Int(0);
      auto& q = db.Cached(
          "SELECT offset, data FROM log_chunks WHERE trial_id=? AND offset + length(data) > ? ORDER BY offset");
      q.Bind(1, trial).Bind(2, offset);
      int64_t pos = offset;
      while (q.Step() && static_cast<int64_t>(out->size()) < max) {
        int64_t off = q.Int(0);
        std::string_view d = q.TextView(1);
        if (off > pos) {  // a gap the cap cut out: say so in the text, once
          std::string note = "\n[... " + std::to_string(off - pos) + " bytes of log cut here (log cap) ...]\n";
          out->append(note);
          pos = off;
        }
        size_t skip = static_cast<size_t>(pos - off);
        size_t take = std::min<size_t>(d.size() - skip, static_cast<size_t>(max - static_cast<int64_t>(out->size())));
        out->append(d.substr(skip, take));
        pos += static_cast<int64_t>(take);
      }
      *next = std::max(pos, std::min(offset, *size));
      return Status::Ok();
    });
  });
}

std::optional<ResultRow> Store::FindResult(int64_t suite_id, const std::string& config_key, const std::string& hardware,
                                          const std::string& fingerprint) {
  try {
    return Read([&](sql::Db& db) -> std::optional<ResultRow> {
      auto& q = db.Cached(
          "SELECT r.trial_id, r.attempt, r.verdict, r.signature, r.evidence, r.failing_stage, r.exit_code, r.signal,"
          " r.metrics, r.stages, r.fingerprint, r.hardware FROM trials t JOIN results r ON r.trial_id = t.id"
          " WHERE t.suite_id=? AND t.config_key=? AND t.state='done' AND r.hardware=? AND r.fingerprint=?"
          " AND r.verdict IN ('passed','unsupported','crashed','wrong_output','oom')"
          " ORDER BY r.finished_at DESC LIMIT 1");
      q.Bind(1, suite_id).Bind(2, config_key).Bind(3, hardware).Bind(4, fingerprint);
      if (!q.Step()) return std::nullopt;
      ResultRow r;
      r.trial_id = q.Int(0);
      r.attempt = static_cast<int>(q.Int(1));
      r.verdict = q.Text(2);
      r.signature = q.Text(3);
      r.evidence = q.Text(4);
      r.failing_stage = q.Text(5);
      if (!q.IsNull(6)) r.exit_code = static_cast<int>(q.Int(6));
      r.signal = q.OptText(7);
      r.metrics = ParseOr(q.TextView(8), json::object());
      r.stages = ParseOr(q.TextView(9), json::array());
      r.fingerprint = ParseOr(q.TextView(10), json::object());
      r.hardware = q.Text(11);
      return r;
    });
  } catch (const sql::Error&) {
    return std::nullopt;  // reuse is an optimisation: on a store error, run the trial
  }
}

Result<std::vector<TrialRow>> Store::RequeueDone(int64_t sweep, const std::vector<std::string>& verdicts) {
  return Guard([&]() -> Result<std::vector<TrialRow>> {
    return Write([&](sql::Db& db) {
      std::vector<int64_t> ids;
      auto& q = db.Cached("SELECT id FROM trials WHERE sweep_id=? AND state='done' AND verdict=?");
      for (auto& v : verdicts) {
        q.Bind(1, sweep).Bind(2, v);
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

}  // namespace gauntlet
