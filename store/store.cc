#include "store/store.h"

#include <chrono>
#include <functional>
#include <thread>
#include <tuple>

#include "store/migrations.h"
#include "store/store_file.h"
#include "store/store_rows.h"
#include "store/results_index.h"

namespace gauntlet::store {
using nlohmann::json;
using namespace detail;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}


Store::Store(std::string path) : path_(std::move(path)), memory_(path_ == ":memory:" || path_.empty()) {}
Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  std::unique_ptr<Store> s(new Store(path));
  if (!s->memory_)
    if (Status empty = CheckNotEmpty(path); !empty.ok()) return empty;
  try {
    s->writer_ = std::make_unique<sql::Db>(s->memory_ ? ":memory:" : path);
    // A damaged file is never served (docs/RELIABILITY.md): checked before anything writes to it.
    if (!s->memory_) {
      std::vector<std::string> problems;
      auto qc = s->writer_->Prepare("PRAGMA quick_check(20)");
      while (qc.Step())
        if (qc.Text(0) != "ok") problems.push_back(qc.Text(0));
      if (!problems.empty()) return Status(Code::kUnavailable, DamagedStoreMessage(path, problems));
    }
    Migrate(*s->writer_);
    // A sweep whose chunks did not all commit (the daemon died while storing it) was never
    // acknowledged: it goes, whole, before anything reads the store.
    sql::Txn txn(*s->writer_);
    s->writer_->Exec("DELETE FROM trials WHERE sweep_id IN (SELECT id FROM sweeps WHERE creating != 0)");
    s->writer_->Exec("DELETE FROM sweeps WHERE creating != 0");
    txn.Commit();
  } catch (const sql::Error& e) {
    const int code = e.code() & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) return Status(Code::kUnavailable, DamagedStoreMessage(path, {e.what()}));
    return Status(Code::kUnavailable, e.what());
  }
  s->committer_ = std::thread([p = s.get()] { p->CommitLoop(); });
  return s;
}

Store::Lease::Lease(Store* s) : store(s), db(nullptr) {
  if (s->memory_) {
    mem_lock = std::unique_lock(s->write_mu_.native());
    db = s->writer_.get();
    return;
  }
  {
    MutexLock lock(s->pool_mu_);
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
    MutexLock lock(store->pool_mu_);
    store->pool_.push_back(std::move(owned));
  }
}

Result<SuiteRow> Store::PutSuite(const std::string& name, const json& def, const std::string& source_dir,
                                 bool* created, const std::vector<std::string>& param_order, const std::string& bundle) {
  return Guard([&]() -> Result<SuiteRow> {
    const std::string text = def.dump();
    // Changed files make a new version as a changed definition does; a suite without files keeps
    // the digest it always had.
    const std::string digest = Digest(text + "\n" + source_dir + (bundle.empty() ? "" : "\nbundle:" + bundle));
    return Write([&](sql::Db& db) -> Result<SuiteRow> {
      auto& q = db.Cached(std::string("SELECT ") + kSuiteCols + ", digest FROM suites WHERE name=? ORDER BY version DESC LIMIT 1");
      q.Bind(1, name);
      int next = 1;
      if (q.Step()) {
        if (q.Text(9) == digest) {
          if (created) *created = false;
          SuiteRow same = ReadSuite(q);
          // A version stored before the declared order was kept learns it from the same text.
          if (!param_order.empty() && q.IsNull(6)) {
            const int64_t id = same.id;
            q.Reset();
            auto& up = db.Cached("UPDATE suites SET param_order=? WHERE id=?");
            up.Bind(1, json(param_order).dump()).Bind(2, id).Run();
            same.param_order = param_order;
          }
          return same;
        }
        next = static_cast<int>(q.Int(2)) + 1;
      }
      // A stated version is honoured when it is new; a changed definition never reuses a number.
      int stated = def.value("version", 0);
      int version = std::max(next, stated);
      auto& ins = db.Cached(
          "INSERT INTO suites(name, version, digest, definition, source_dir, created_at, param_order, bundle)"
          " VALUES(?,?,?,?,?,?,?,?)");
      ins.Bind(1, name).Bind(2, version).Bind(3, digest).Bind(4, text).Bind(5, source_dir).Bind(6, NowMs());
      if (param_order.empty()) ins.BindNull(7);
      else ins.Bind(7, json(param_order).dump());
      ins.Bind(8, bundle);
      ins.Run();
      SuiteRow r{db.LastInsertId(), name, version, def, source_dir, NowMs(), {}};
      r.bundle = bundle;
      r.param_order = param_order;
      if (r.param_order.empty()) {
        const json params = def.value("parameters", json::object());  // items() must not outlive it
        for (auto& [p, v] : params.items()) r.param_order.push_back(p);
      }
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

Status Store::NoteShadowed(int64_t id, const std::string& note) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE suites SET shadowed=NULLIF(?, '') WHERE id=?");
      u.Bind(1, note).Bind(2, id).Run();
      return Status::Ok();
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

namespace {
// Trials per write of a sweep stored in chunks: a few milliseconds each, so a lease or heartbeat
// waits at most that long for the store, not the seconds a 500,000-trial sweep takes whole.
constexpr size_t kSweepChunk = 4096;

void InsertTrials(sql::Db& db, int64_t sweep, int64_t suite_id, int64_t now, int max_attempts,
                  const std::vector<NewTrial>& trials, size_t from, size_t to, int64_t first_trial) {
  auto& t = db.Cached(
      "INSERT INTO trials(id, sweep_id, suite_id, config, config_key, target_index, repeat_index, state, created_at,"
      " max_attempts) VALUES(?,?,?,?,?,?,?,'queued',?,?)");
  for (size_t i = from; i < to; ++i) {
    const NewTrial& nt = trials[i];
    t.Bind(1, first_trial + static_cast<int64_t>(i)).Bind(2, sweep).Bind(3, suite_id).Bind(4, nt.config_json);
    t.Bind(5, nt.config_key).Bind(6, nt.target_index).Bind(7, nt.repeat_index).Bind(8, now).Bind(9, max_attempts);
    t.Run();
  }
}
}  // namespace

void Store::LetWaitingWritersGo() {
  // Bounded: a steady stream of writers must not hold a sweep's storing back for ever.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (waiting_writers_.load() > 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

Result<int64_t> Store::CreateSweep(int64_t suite_id, const std::string& name, const json& request, int priority,
                                   int max_attempts, const std::vector<NewTrial>& trials, int64_t* first_trial,
                                   const SweepOrigin& origin) {
  // One sweep's trials get consecutive ids (the caller counts from *first_trial): the first write
  // reserves them all (the sweep row, `creating` while chunked, names the range; NextTrialId).
  const bool chunked = trials.size() > kSweepChunk;
  const int64_t now = NowMs();
  *first_trial = 0;
  auto sweep = Guard([&]() -> Result<int64_t> {
    return Write([&](sql::Db& db) -> Result<int64_t> {
      const int64_t count = static_cast<int64_t>(trials.size());
      const int64_t first = NextTrialId(db);
      auto& s = db.Cached(
          "INSERT INTO sweeps(suite_id, name, request, priority, trial_count, created_at, rerun_of, submitted_by, source,"
          " creating, first_trial) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
      s.Bind(1, suite_id).Bind(2, name).Bind(3, request.dump()).Bind(4, priority).Bind(5, count).Bind(6, now);
      if (origin.rerun_of) s.Bind(7, *origin.rerun_of);
      else s.BindNull(7);
      s.Bind(8, origin.submitted_by).Bind(9, origin.source).Bind(10, chunked ? 1 : 0).Bind(11, first);
      s.Run();
      const int64_t id = db.LastInsertId();
      InsertTrials(db, id, suite_id, now, max_attempts, trials, 0, std::min(trials.size(), kSweepChunk), first);
      *first_trial = first;
      return id;
    });
  });
  if (!sweep.ok() || !chunked) return sweep;
  Status st = Status::Ok();
  for (size_t at = kSweepChunk; st.ok() && at < trials.size(); at += kSweepChunk) {
    LetWaitingWritersGo();
    st = Guard([&]() -> Status {
      return Write([&](sql::Db& db) -> Status {
        InsertTrials(db, *sweep, suite_id, now, max_attempts, trials, at, std::min(trials.size(), at + kSweepChunk),
                     *first_trial);
        return Status::Ok();
      });
    });
  }
  LetWaitingWritersGo();
  if (st.ok())
    st = Guard([&]() -> Status {
      return Write([&](sql::Db& db) -> Status {
        auto& u = db.Cached("UPDATE sweeps SET creating=0 WHERE id=?");
        u.Bind(1, *sweep).Run();
        return Status::Ok();
      });
    });
  if (st.ok()) return sweep;
  // Not acknowledged, so not kept: what did commit goes now (or, if this fails too, at the next start).
  IgnoreError(Guard([&]() -> Status {
                return Write([&](sql::Db& db) -> Status {
                  auto& d = db.Cached("DELETE FROM trials WHERE sweep_id=?");
                  d.Bind(1, *sweep).Run();
                  auto& e = db.Cached("DELETE FROM sweeps WHERE id=?");
                  e.Bind(1, *sweep).Run();
                  return Status::Ok();
                });
              }),
              "a sweep still marked creating is removed at the next Open; st says what failed");
  return st;
}

namespace {
void FillCounts(sql::Db& db, SweepRow& r) {
  // A reused trial never started and links the trial whose verdict it took (a skip links its
  // evidence too, but is pruning's, not reuse's).
  auto& c = db.Cached(
      "SELECT state, verdict, COUNT(*), started_at IS NULL AND evidence_trial IS NOT NULL AND state = 'done'"
      " AND verdict NOT IN ('skipped', 'cancelled') AS reused FROM trials WHERE sweep_id=? GROUP BY state, verdict, reused");
  c.Bind(1, r.id);
  while (c.Step()) {
    std::string state = c.Text(0);
    int64_t n = c.Int(2);
    r.by_state[state] = r.by_state.value(state, 0) + n;
    if (!c.IsNull(1)) r.by_verdict[c.Text(1)] = r.by_verdict.value(c.Text(1), int64_t{0}) + n;
    if (c.Int(3)) r.reused += n;
  }
}
constexpr const char* kSweepCols =
    "s.id, s.suite_id, su.name, su.version, s.name, s.request, s.priority, s.trial_count, s.created_at, "
    "s.cancelled_at, s.rerun_of, s.submitted_by, s.source, s.kind, s.search, s.materialized, COALESCE(s.first_trial, 0)"
    " FROM sweeps s JOIN suites su ON su.id = s.suite_id";
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
  r.rerun_of = s.OptInt(10);
  r.submitted_by = s.Text(11);
  r.source = s.Text(12);
  r.kind = SweepKindColumn(s.TextView(13));
  if (!s.IsNull(14)) r.search = json::parse(s.TextView(14), nullptr, false);
  if (r.search.is_discarded()) r.search = nullptr;
  r.materialized = s.OptInt(15);
  r.first_trial = s.Int(16);
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

Result<std::vector<SweepRow>> Store::ListSweeps(int64_t after, int limit, const SweepFilter& f) {
  return Guard([&]() -> Result<std::vector<SweepRow>> {
    return Read([&](sql::Db& db) {
      // Each filter is always bound (NULL: off), so the statement text is one and stays cached.
      auto& s = db.Cached(std::string("SELECT ") + kSweepCols +
                          " WHERE s.id < ? AND s.creating = 0 AND (?3 IS NULL OR su.name = ?3) AND (?4 IS NULL OR s.submitted_by = ?4)"
                          " AND (?5 IS NULL OR s.source = ?5) AND (?6 IS NULL OR CASE"
                          " WHEN s.cancelled_at IS NOT NULL THEN 'cancelled' WHEN s.materialized IS NOT NULL THEN 'running'"
                          " WHEN EXISTS(SELECT 1 FROM trials t WHERE t.sweep_id = s.id AND t.state != 'done') THEN 'running'"
                          " ELSE 'finished' END = ?6) ORDER BY s.id DESC LIMIT ?2");
      s.Bind(1, after > 0 ? after : INT64_MAX).Bind(2, limit);
      auto opt = [&](int i, const std::optional<std::string>& v) {
        if (v) s.Bind(i, *v);
        else s.BindNull(i);
      };
      opt(3, f.suite);
      opt(4, f.submitted_by);
      opt(5, f.source);
      opt(6, f.state ? std::optional<std::string>(Name(*f.state)) : std::nullopt);
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
      while (s.Step()) (TrialStateColumn(s.TextView(1)) == TrialState::kQueued ? cancelled : stopping)->push_back(s.Int(0));
      auto& chk = db.Cached("SELECT materialized IS NOT NULL AND cancelled_at IS NULL FROM sweeps WHERE id=?");
      chk.Bind(1, id);
      if (!chk.Step()) return Status::NotFound("no sweep " + std::to_string(id));
      const bool expanding = chk.Int(0) != 0;  // trials not stored yet: the cancel stops their expansion
      chk.Reset();
      // A finished sweep has nothing to cancel: marking it cancelled would rewrite its history.
      if (cancelled->empty() && stopping->empty() && !expanding)
        return Status::Conflict("sweep " + std::to_string(id) + " has finished: nothing is left to cancel");
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
      const TrialState state = TrialStateColumn(s.TextView(0));
      *now_done = false;
      if (state == TrialState::kQueued) {
        auto& u = db.Cached(
            "UPDATE trials SET state='done', verdict='cancelled', signature='cancelled:by_user', finished_at=? "
            "WHERE id=?");
        u.Bind(1, NowMs()).Bind(2, id).Run();
        *now_done = true;
      } else if (state != TrialState::kDone) {
        auto& u = db.Cached("UPDATE trials SET cancel_requested=1 WHERE id=?");
        u.Bind(1, id).Run();
      }
      return Status::Ok();
    });
  });
}

Result<NodeRow> Store::RegisterNode(const std::string& name, const json& inventory, const json& labels,
                                    const json& fingerprint, const std::string& hardware, const std::string& credential) {
  return Guard([&]() -> Result<NodeRow> {
    return Write([&](sql::Db& db) -> Result<NodeRow> {
      const int64_t now = NowMs();
      // A node that registers again (worker restart) keeps its id, so history stays joined; a
      // quarantined node stays quarantined until an admin clears it.
      auto& s = db.Cached(
          "INSERT INTO nodes(name, inventory, labels, fingerprint, hardware, state, registered_at, last_heartbeat, "
          "credential) VALUES(?,?,?,?,?,'online',?,?,?) ON CONFLICT(name) DO UPDATE SET inventory=excluded.inventory, "
          "labels=excluded.labels, fingerprint=excluded.fingerprint, hardware=excluded.hardware, "
          "state=CASE WHEN nodes.state='quarantined' THEN 'quarantined' ELSE 'online' END, "
          "registered_at=excluded.registered_at, last_heartbeat=excluded.last_heartbeat, "
          "credential=CASE WHEN excluded.credential='' THEN nodes.credential ELSE excluded.credential END");
      s.Bind(1, name).Bind(2, inventory.dump()).Bind(3, labels.dump()).Bind(4, fingerprint.dump());
      s.Bind(5, hardware).Bind(6, now).Bind(7, now).Bind(8, credential).Run();
      auto& q = db.Cached(std::string("SELECT ") + kNodeCols + " FROM nodes WHERE name=?");
      q.Bind(1, name);
      q.Step();
      return ReadNode(q);
    });
  });
}

Result<std::optional<NodeRow>> Store::FindNode(const std::string& name) {
  return Guard([&]() -> Result<std::optional<NodeRow>> {
    return Read([&](sql::Db& db) -> std::optional<NodeRow> {
      auto& q = db.Cached(std::string("SELECT ") + kNodeCols + " FROM nodes WHERE name=?");
      q.Bind(1, name);
      if (!q.Step()) return std::nullopt;
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

Status Store::SetNodeState(int64_t id, NodeState state, const std::string& reason) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE nodes SET state=?, reason=? WHERE id=?");
      u.Bind(1, Name(state)).Bind(2, reason).Bind(3, id).Run();
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

}  // namespace gauntlet::store
