// The Store's side of a sweep expanded after its answer (docs/DESIGN.md "Storage"): its row with the
// ids reserved for its trials, its trials added chunk by chunk, and the sweeps a restart resumes.
// The stored request (with the suite version it names) determines the trials, so the row alone is
// what must be durable before the 201; `materialized` counts what is stored since.
#include "store/store_rows.h"

namespace gauntlet::store {
using namespace detail;

Result<int64_t> Store::BeginSweep(int64_t suite_id, const std::string& name, const json& request, int priority,
                                  int64_t trials, int64_t* first_trial, const SweepOrigin& origin) {
  *first_trial = 0;
  return Guard([&]() -> Result<int64_t> {
    return Write([&](sql::Db& db) -> Result<int64_t> {
      // The row itself reserves [first, first + trials): NextTrialId counts it from now on.
      const int64_t first = NextTrialId(db);
      auto& s = db.Cached(
          "INSERT INTO sweeps(suite_id, name, request, priority, trial_count, created_at, rerun_of, submitted_by, source,"
          " first_trial, materialized) VALUES(?,?,?,?,?,?,?,?,?,?,0)");
      s.Bind(1, suite_id).Bind(2, name).Bind(3, request.dump()).Bind(4, priority).Bind(5, trials).Bind(6, NowMs());
      if (origin.rerun_of) s.Bind(7, *origin.rerun_of);
      else s.BindNull(7);
      s.Bind(8, origin.submitted_by).Bind(9, origin.source).Bind(10, first);
      s.Run();
      *first_trial = first;
      return db.LastInsertId();
    });
  });
}

Result<bool> Store::AddSweepTrials(int64_t sweep, int64_t stored, int max_attempts, const std::vector<NewTrial>& trials) {
  // Between two chunks the writers waiting (leases, heartbeats, results) go first.
  LetWaitingWritersGo();
  return Guard([&]() -> Result<bool> {
    return Write([&](sql::Db& db) -> Result<bool> {
      auto& q = db.Cached("SELECT suite_id, materialized, cancelled_at IS NOT NULL, trial_count FROM sweeps WHERE id=?");
      q.Bind(1, sweep);
      if (!q.Step()) return Status::NotFound("no sweep " + std::to_string(sweep));
      const int64_t suite_id = q.Int(0);
      const std::optional<int64_t> have = q.OptInt(1);
      const bool cancelled = q.Int(2) != 0;
      const int64_t total = q.Int(3);
      q.Reset();
      if (cancelled) return false;
      const int64_t after = stored + static_cast<int64_t>(trials.size());
      if (!have || *have != stored || after > total)
        return Status::Conflict("sweep " + std::to_string(sweep) + " has " +
                                (have ? std::to_string(*have) : std::string("all its")) + " of " + std::to_string(total) +
                                " trials stored: " + std::to_string(trials.size()) + " more after " +
                                std::to_string(stored) + " do not fit");
      const int64_t now = NowMs();
      auto& t = db.Cached(
          "INSERT INTO trials(id, sweep_id, suite_id, config, config_key, target_index, repeat_index, state, created_at,"
          " max_attempts) VALUES(?,?,?,?,?,?,?,'queued',?,?)");
      for (const NewTrial& nt : trials) {
        t.Bind(1, nt.id).Bind(2, sweep).Bind(3, suite_id).Bind(4, nt.config_json).Bind(5, nt.config_key);
        t.Bind(6, nt.target_index).Bind(7, nt.repeat_index).Bind(8, now).Bind(9, max_attempts);
        t.Run();
      }
      // Whole: NULL, as a sweep stored whole has (its reservation ends with it).
      auto& u = db.Cached("UPDATE sweeps SET materialized = NULLIF(?, trial_count) WHERE id=?");
      u.Bind(1, after).Bind(2, sweep).Run();
      return true;
    });
  });
}

Result<std::vector<int64_t>> Store::SweepTrialIds(int64_t sweep) {
  return Guard([&]() -> Result<std::vector<int64_t>> {
    return Read([&](sql::Db& db) {
      auto& q = db.Cached("SELECT id FROM trials WHERE sweep_id=? ORDER BY id");
      q.Bind(1, sweep);
      std::vector<int64_t> out;
      while (q.Step()) out.push_back(q.Int(0));
      return out;
    });
  });
}

Result<std::vector<ExpandingSweep>> Store::ExpandingSweeps() {
  return Guard([&]() -> Result<std::vector<ExpandingSweep>> {
    return Read([&](sql::Db& db) {
      // The first term is the reservations index's own condition, which keeps this a short scan.
      auto& q = db.Cached(
          "SELECT id, COALESCE(first_trial, 0), materialized FROM sweeps"
          " WHERE (materialized IS NOT NULL OR creating != 0) AND materialized IS NOT NULL AND cancelled_at IS NULL"
          " ORDER BY id");
      std::vector<ExpandingSweep> out;
      while (q.Step()) out.push_back({q.Int(0), q.Int(1), q.Int(2)});
      return out;
    });
  });
}

}  // namespace gauntlet::store
