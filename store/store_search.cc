// The Store's side of search sweeps (bisection: the search state, trials added one at a time) and of
// confirmation (the attempts a restart goes on from).
#include "store/store_rows.h"

namespace gauntlet::store {
using namespace detail;

Status Store::SetSweepSearch(int64_t sweep, SweepKind kind, const json& search) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& u = db.Cached("UPDATE sweeps SET kind=?, search=? WHERE id=?");
      u.Bind(1, Name(kind)).Bind(2, search.dump()).Bind(3, sweep).Run();
      if (db.Changes() == 0) return Status::NotFound("no sweep " + std::to_string(sweep));
      return Status::Ok();
    });
  });
}

Result<int64_t> Store::AddTrial(int64_t sweep, int max_attempts, const NewTrial& nt) {
  return Guard([&]() -> Result<int64_t> {
    return Write([&](sql::Db& db) -> Result<int64_t> {
      auto& q = db.Cached("SELECT suite_id FROM sweeps WHERE id=?");
      q.Bind(1, sweep);
      if (!q.Step()) return Status::NotFound("no sweep " + std::to_string(sweep));
      const int64_t suite_id = q.Int(0);
      q.Reset();
      // Past the ids that sweeps still being stored or expanded have reserved.
      const int64_t id = NextTrialId(db);
      auto& t = db.Cached(
          "INSERT INTO trials(id, sweep_id, suite_id, config, config_key, target_index, repeat_index, state, created_at,"
          " max_attempts) VALUES(?,?,?,?,?,?,?,'queued',?,?)");
      t.Bind(1, id).Bind(2, sweep).Bind(3, suite_id).Bind(4, nt.config_json).Bind(5, nt.config_key);
      t.Bind(6, nt.target_index).Bind(7, nt.repeat_index).Bind(8, NowMs()).Bind(9, max_attempts).Run();
      auto& u = db.Cached("UPDATE sweeps SET trial_count = trial_count + 1 WHERE id=?");
      u.Bind(1, sweep).Run();
      return id;
    });
  });
}

std::vector<std::pair<Verdict, std::string>> Store::AttemptsBefore(int64_t trial, int attempt) {
  std::vector<std::pair<Verdict, std::string>> out;
  try {
    Read([&](sql::Db& db) {
      auto& q = db.Cached("SELECT verdict, signature FROM results WHERE trial_id=? AND attempt>0 AND attempt<=? ORDER BY attempt");
      q.Bind(1, trial).Bind(2, attempt);
      while (q.Step()) out.emplace_back(VerdictColumn(q.TextView(0)), q.Text(1));
      q.Reset();
    });
  } catch (const sql::Error&) {
    out.clear();  // the confirmation starts over: more attempts, never a wrong verdict
  }
  return out;
}

}  // namespace gauntlet::store
