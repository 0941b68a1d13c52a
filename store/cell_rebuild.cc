#include "store/cell_rebuild.h"

#include <nlohmann/json.hpp>

#include "store/results_index.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

void RebuildCell(sql::Db& db, const std::string& suite, int64_t version, const std::string& config_key,
                 const std::string& hardware) {
  auto id = db.Prepare("SELECT id, COALESCE(json_extract(definition, '$.key_metric'), '') FROM suites WHERE name = ? AND version = ?");
  id.Bind(1, suite).Bind(2, version);
  if (!id.Step()) return;
  const int64_t suite_id = id.Int(0);
  const std::string key_metric = id.Text(1);
  auto del = db.Prepare("DELETE FROM cells WHERE suite = ? AND suite_version = ? AND config_key = ? AND hardware = ?");
  del.Bind(1, suite).Bind(2, version).Bind(3, config_key).Bind(4, hardware).Run();
  // Skips first: a skip only opens a cell or counts, and never hides a real verdict, whatever its order.
  auto skips = db.Prepare(
      "SELECT t.id, t.config, COALESCE(t.signature, ''), COALESCE(t.finished_at, 0) FROM trials t"
      " WHERE t.suite_id = ? AND t.config_key = ? AND t.hardware = ? AND t.state = 'done' AND t.verdict = 'skipped'"
      " AND NOT EXISTS(SELECT 1 FROM results r WHERE r.trial_id = t.id) ORDER BY t.finished_at, t.id");
  skips.Bind(1, suite_id).Bind(2, config_key).Bind(3, hardware);
  while (skips.Step())
    UpsertCell(db, {suite, config_key, hardware, skips.Text(1), Verdict::kSkipped, skips.Text(2), "", skips.Int(0),
                    skips.Int(3), {}, version});
  // Every attempt's result, as FinishTrial and RecordAttempt filed them: the last one of a trial
  // carries its confirmation (flaky) and whether it was filed by reuse.
  auto rs = db.Prepare(
      "SELECT r.trial_id, t.config, r.verdict, r.signature, r.fingerprint, r.metrics, r.finished_at,"
      " t.flaky AND r.attempt = (SELECT MAX(attempt) FROM results WHERE trial_id = r.trial_id),"
      " t.started_at IS NULL AND t.evidence_trial IS NOT NULL"
      " FROM results r JOIN trials t ON t.id = r.trial_id"
      " WHERE t.suite_id = ? AND t.config_key = ? AND COALESCE(NULLIF(r.hardware, ''), t.hardware, '') = ?"
      " ORDER BY r.finished_at, r.trial_id, r.attempt");
  rs.Bind(1, suite_id).Bind(2, config_key).Bind(3, hardware);
  while (rs.Step()) {
    CellUpdate u{suite, config_key, hardware, rs.Text(1), detail::VerdictColumn(rs.TextView(2)), rs.Text(3),
                 rs.Text(4), rs.Int(0), rs.Int(6), KeyMetric(key_metric, json::parse(rs.TextView(5), nullptr, false)),
                 version};
    u.flaky = rs.Int(7) != 0;
    u.reused = rs.Int(8) != 0;
    UpsertCell(db, u);
  }
}

}  // namespace gauntlet::store
