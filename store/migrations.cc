#include "store/migrations.h"

#include "core/outcome_order.h"
#include "store/store_rows.h"

namespace gauntlet::store {

namespace {

// Migration 19's text: the judged verdicts' names come from the one vocabulary (core/verdict.h).
std::string RecentRunsMigration() {
  const std::string& judged = detail::JudgedSqlList();
  return R"sql(
ALTER TABLE cells ADD COLUMN recent TEXT NOT NULL DEFAULT '[]';
UPDATE cells SET recent = (SELECT json_group_array(json_array(at, batch, passed, flaky)) FROM (
  SELECT * FROM (
    SELECT r.finished_at AS at, COALESCE(t.sweep_id, 0) AS batch, r.verdict = 'passed' AS passed,
      t.flaky AND r.attempt = (SELECT MAX(attempt) FROM results WHERE trial_id = r.trial_id) AS flaky,
      r.trial_id AS tid, r.attempt AS att
    FROM results r JOIN trials t ON t.id = r.trial_id JOIN suites su ON su.id = t.suite_id
    WHERE su.name = cells.suite AND su.version = cells.suite_version AND t.config_key = cells.config_key
      AND COALESCE(NULLIF(r.hardware, ''), t.hardware, '') = cells.hardware AND r.verdict IN ()sql" +
         judged + R"sql()
      AND NOT (t.started_at IS NULL AND t.evidence_trial IS NOT NULL)
    ORDER BY r.finished_at DESC, r.trial_id DESC, r.attempt DESC LIMIT )sql" +
         std::to_string(kOrderWindow) + R"sql()
  ORDER BY at, tid, att));
ALTER TABLE labels ADD COLUMN announced INTEGER NOT NULL DEFAULT 0;
UPDATE labels SET announced = CASE WHEN withdrawn_at IS NULL THEN 1 ELSE 2 END;
)sql";
}

}  // namespace

const std::vector<std::string>& Migrations() {
  // Append only: a released migration never changes, or databases in the field diverge.
  static const std::vector<std::string> k = {
      // 1: suites, sweeps, trials (the first release: submissions only).
      R"sql(
CREATE TABLE suites(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  digest TEXT NOT NULL,
  definition TEXT NOT NULL,
  source_dir TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE(name, version));
CREATE TABLE sweeps(
  id INTEGER PRIMARY KEY,
  suite_id INTEGER NOT NULL REFERENCES suites(id),
  name TEXT NOT NULL DEFAULT '',
  request TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  trial_count INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  cancelled_at INTEGER);
CREATE TABLE trials(
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  suite_id INTEGER NOT NULL REFERENCES suites(id),
  config TEXT NOT NULL,
  config_key TEXT NOT NULL,
  target_index INTEGER NOT NULL,
  repeat_index INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'queued',
  verdict TEXT,
  signature TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER);
CREATE INDEX trials_by_sweep ON trials(sweep_id, state);
CREATE INDEX trials_by_suite ON trials(suite_id, config_key);
)sql",
      // 2: the worker protocol: nodes, leases on trials, results per attempt, log chunks.
      R"sql(
CREATE TABLE nodes(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  inventory TEXT NOT NULL,
  labels TEXT NOT NULL DEFAULT '{}',
  fingerprint TEXT NOT NULL DEFAULT '{}',
  hardware TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'online',
  reason TEXT NOT NULL DEFAULT '',
  registered_at INTEGER NOT NULL,
  last_heartbeat INTEGER NOT NULL);
ALTER TABLE trials ADD COLUMN hardware TEXT;
ALTER TABLE trials ADD COLUMN node_id INTEGER REFERENCES nodes(id);
ALTER TABLE trials ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 3;
ALTER TABLE trials ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN lease_id TEXT;
ALTER TABLE trials ADD COLUMN lease_deadline INTEGER;
ALTER TABLE trials ADD COLUMN gpus TEXT;
ALTER TABLE trials ADD COLUMN evidence_trial INTEGER;
ALTER TABLE trials ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN started_at INTEGER;
ALTER TABLE trials ADD COLUMN log_size INTEGER NOT NULL DEFAULT 0;
CREATE INDEX trials_active ON trials(state) WHERE state != 'done';
CREATE TABLE results(
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  attempt INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '',
  failing_stage TEXT NOT NULL DEFAULT '',
  exit_code INTEGER,
  signal TEXT,
  metrics TEXT NOT NULL DEFAULT '{}',
  stages TEXT NOT NULL DEFAULT '[]',
  fingerprint TEXT NOT NULL DEFAULT '{}',
  node_id INTEGER,
  hardware TEXT NOT NULL DEFAULT '',
  finished_at INTEGER NOT NULL,
  PRIMARY KEY(trial_id, attempt));
CREATE TABLE log_chunks(
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  offset INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(trial_id, offset)) WITHOUT ROWID;
)sql",
      // 3: the results index. Each trial keeps its key metric; `cells` holds the latest judged verdict
      // of every (suite, config, hardware) with counts and the verdict before it, so the matrix and
      // regressions read a few thousand rows instead of every trial.
      R"sql(
ALTER TABLE trials ADD COLUMN metric_name TEXT;
ALTER TABLE trials ADD COLUMN metric_value REAL;
ALTER TABLE trials ADD COLUMN metric_unit TEXT;
ALTER TABLE trials ADD COLUMN fingerprint TEXT;
CREATE INDEX trials_by_hardware ON trials(hardware, verdict);
CREATE TABLE cells(
  suite TEXT NOT NULL,
  config_key TEXT NOT NULL,
  hardware TEXT NOT NULL,
  config TEXT NOT NULL,
  verdict TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  trial_id INTEGER NOT NULL,
  fingerprint TEXT NOT NULL DEFAULT '',
  metric_name TEXT,
  metric_value REAL,
  metric_unit TEXT,
  last_seen INTEGER NOT NULL,
  counts TEXT NOT NULL DEFAULT '{}',
  prev_verdict TEXT,
  prev_signature TEXT,
  prev_trial INTEGER,
  prev_metric REAL,
  PRIMARY KEY(suite, config_key, hardware)) WITHOUT ROWID;
INSERT INTO cells(suite, config_key, hardware, config, verdict, signature, trial_id, last_seen, counts)
  SELECT su.name, t.config_key, t.hardware, t.config, t.verdict, COALESCE(t.signature, ''), t.id,
         COALESCE(t.finished_at, 0), json_object(t.verdict, 1)
  FROM trials t JOIN suites su ON su.id = t.suite_id
  WHERE t.state = 'done' AND t.hardware IS NOT NULL AND t.verdict NOT IN ('cancelled')
  GROUP BY su.name, t.config_key, t.hardware HAVING t.finished_at = MAX(t.finished_at);
)sql",
      // 4: fewer indexes on the hot path. A lease and a report change a trial's state, hardware and
      // verdict; every index holding those columns moved its entry each time. Sweep reads need only
      // the sweep id; the active-trials scan runs once, at start; the matrix reads the results index.
      R"sql(
DROP INDEX IF EXISTS trials_by_hardware;
DROP INDEX IF EXISTS trials_active;
DROP INDEX IF EXISTS trials_by_sweep;
CREATE INDEX trials_of_sweep ON trials(sweep_id);
)sql",
      // 5: cells per suite version, with what flakiness needs. A matrix shows one suite version by
      // default (a new version may change what a config means), and a cell is `flaky` when one config
      // got different judged verdicts on the same hardware class, suite version and fingerprint:
      // `judged` maps each fingerprint to the judged verdicts seen under it. Suites keep the order in
      // which their parameters were declared (the matrix's default rows). Old cells were kept across
      // versions: each is filed under its latest trial's version, and `judged` is rebuilt from the
      // trials. `shadowed` notes a suites-folder file that was not loaded because the API had registered
// that name. (The verdict names below are this migration's, frozen: see core/verdict.cc.)
      R"sql(
CREATE TABLE cells5(
  suite TEXT NOT NULL,
  suite_version INTEGER NOT NULL,
  config_key TEXT NOT NULL,
  hardware TEXT NOT NULL,
  config TEXT NOT NULL,
  verdict TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  trial_id INTEGER NOT NULL,
  fingerprint TEXT NOT NULL DEFAULT '',
  metric_name TEXT,
  metric_value REAL,
  metric_unit TEXT,
  last_seen INTEGER NOT NULL,
  counts TEXT NOT NULL DEFAULT '{}',
  prev_verdict TEXT,
  prev_signature TEXT,
  prev_trial INTEGER,
  prev_metric REAL,
  judged TEXT NOT NULL DEFAULT '{}',
  flaky INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(suite, suite_version, config_key, hardware)) WITHOUT ROWID;
INSERT INTO cells5(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id, fingerprint,
                   metric_name, metric_value, metric_unit, last_seen, counts, prev_verdict, prev_signature,
                   prev_trial, prev_metric)
  SELECT c.suite, COALESCE(su.version, 1), c.config_key, c.hardware, c.config, c.verdict, c.signature, c.trial_id,
         c.fingerprint, c.metric_name, c.metric_value, c.metric_unit, c.last_seen, c.counts, c.prev_verdict,
         c.prev_signature, c.prev_trial, c.prev_metric
  FROM cells c LEFT JOIN trials t ON t.id = c.trial_id LEFT JOIN suites su ON su.id = t.suite_id;
UPDATE cells5 SET judged = COALESCE((
  SELECT json_group_object(fp, json(vs)) FROM (
    SELECT COALESCE(t.fingerprint, '') AS fp, json_group_array(DISTINCT t.verdict) AS vs
    FROM trials t JOIN suites su ON su.id = t.suite_id
    WHERE su.name = cells5.suite AND su.version = cells5.suite_version AND t.config_key = cells5.config_key
      AND t.hardware = cells5.hardware AND t.state = 'done'
      AND t.verdict IN ('passed', 'unsupported', 'crashed', 'wrong_output', 'oom')
    GROUP BY fp)), '{}');
UPDATE cells5 SET flaky = EXISTS(SELECT 1 FROM json_each(cells5.judged) WHERE json_array_length(value) > 1);
DROP TABLE cells;
ALTER TABLE cells5 RENAME TO cells;
ALTER TABLE suites ADD COLUMN param_order TEXT;
ALTER TABLE suites ADD COLUMN shadowed TEXT;
)sql",
      // 6: the first week's workflow (issue 20). A sweep says where it came from: the sweep it reruns,
      // who submitted it (a token's name, or its role) and through what (cli, api, rerun, dashboard).
      // `notified_at` marks a finished sweep whose sweep.finished (and regressions) were queued for the
      // webhooks: set in the same write that queues them, so a restart never announces one twice and
      // never forgets one; sweeps already finished before this migration count as announced.
      // webhook_deliveries is the durable delivery queue: each row is one event for one receiver, with
      // the exact body that is signed and sent on every attempt.
      R"sql(
ALTER TABLE sweeps ADD COLUMN rerun_of INTEGER REFERENCES sweeps(id);
ALTER TABLE sweeps ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN source TEXT NOT NULL DEFAULT 'api';
ALTER TABLE sweeps ADD COLUMN notified_at INTEGER;
UPDATE sweeps SET notified_at = created_at
  WHERE NOT EXISTS(SELECT 1 FROM trials WHERE trials.sweep_id = sweeps.id AND trials.state != 'done');
CREATE TABLE webhook_deliveries(
  id INTEGER PRIMARY KEY,
  hook TEXT NOT NULL,
  event TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_at INTEGER,
  last_status INTEGER,
  last_error TEXT NOT NULL DEFAULT '',
  delivered_at INTEGER);
CREATE INDEX webhook_pending ON webhook_deliveries(next_at) WHERE state = 'pending';
CREATE INDEX sweeps_unannounced ON sweeps(id) WHERE notified_at IS NULL;
)sql",
      // 7: confirmation and bisection (issue 21). `attempt_counts` holds the verdicts of a trial's
      // confirming attempts before its last (the last is the trial's own verdict), `confirmed` how
      // many of them agreed with a failure that then stood, and `flaky` whether one of them
      // disagreed with the final verdict: a sweep's matrix reads them without a join on results.
      // A sweep has a `kind` (grid, bisect) and, for a bisection, its search state.
      R"sql(
ALTER TABLE trials ADD COLUMN attempt_counts TEXT;
ALTER TABLE trials ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN flaky INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sweeps ADD COLUMN kind TEXT NOT NULL DEFAULT 'grid';
ALTER TABLE sweeps ADD COLUMN search TEXT;
)sql",
      // 8: each node's credential (SHA-256 hex of the token its registration returned), so a
      // worker token acts only for the node it registered. '' for nodes registered before.
      R"sql(
ALTER TABLE nodes ADD COLUMN credential TEXT NOT NULL DEFAULT '';
)sql",
      // 9: a sweep stored in chunks (a big one, so that leases and heartbeats commit between its
      // chunks) is `creating` until its last chunk commits; one found so at start was never
      // acknowledged and is removed with its trials (Store::Open).
      R"sql(
ALTER TABLE sweeps ADD COLUMN creating INTEGER NOT NULL DEFAULT 0;
)sql",
      // 10: declared support per suite name (PUT /api/v1/suites/{name}/declared): the
      // claims of a published support table, held against the runs by GET /api/v1/drift.
      R"sql(
CREATE TABLE declared(
  suite TEXT PRIMARY KEY,
  body TEXT NOT NULL,
  updated_at INTEGER NOT NULL) WITHOUT ROWID;
)sql",
      // 11: a cell's results filed by reuse are counted apart from its runs (issue 29: a
      // copied verdict is no run; "6/6 passed" from one run). Those already counted as runs are moved:
      // a reused trial never started and links the trial whose verdict it took.
      R"sql(
ALTER TABLE cells ADD COLUMN reused INTEGER NOT NULL DEFAULT 0;
CREATE TEMP TABLE reused_runs AS
  SELECT su.name AS suite, su.version AS version, t.config_key AS config_key, t.hardware AS hardware,
         t.verdict AS verdict, COUNT(*) AS n
  FROM trials t JOIN suites su ON su.id = t.suite_id
  WHERE t.state = 'done' AND t.started_at IS NULL AND t.evidence_trial IS NOT NULL AND t.hardware IS NOT NULL
    AND t.verdict NOT IN ('skipped', 'cancelled')
  GROUP BY 1, 2, 3, 4, 5;
UPDATE cells SET
  reused = (SELECT SUM(n) FROM reused_runs r WHERE r.suite = cells.suite AND r.version = cells.suite_version
            AND r.config_key = cells.config_key AND r.hardware = cells.hardware),
  counts = (SELECT json_group_object(key, value) FROM (
              SELECT c.key AS key, c.value - COALESCE((SELECT r.n FROM reused_runs r WHERE r.suite = cells.suite
                AND r.version = cells.suite_version AND r.config_key = cells.config_key AND r.hardware = cells.hardware
                AND r.verdict = c.key), 0) AS value
              FROM json_each(cells.counts) c) WHERE value > 0)
  WHERE EXISTS(SELECT 1 FROM reused_runs r WHERE r.suite = cells.suite AND r.version = cells.suite_version
               AND r.config_key = cells.config_key AND r.hardware = cells.hardware);
DROP TABLE reused_runs;
)sql",
      // 12: the kernels a trial's attempt launched, as the kernel recorder saw them
      // (core/kernel_record.h: top kernels by time, totals, dropped records; bounded by the API),
      // and the family that carried it, for the matrix's dispatch layer. NULL: not recorded.
      R"sql(
ALTER TABLE results ADD COLUMN kernels TEXT;
ALTER TABLE trials ADD COLUMN dispatch TEXT;
)sql",
      // 13: each attempt's test cases as its test runner reported them (docs/API.md "Trial"
      // `tests`): at most kMaxStoredTestCases per attempt, names and evidence cut to their bounds
      // (store/test_cases.h); `tests_not_stored` counts the cases reported beyond them.
      R"sql(
CREATE TABLE test_cases(
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  attempt INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  stage TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  outcome TEXT NOT NULL,
  verdict TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '',
  seconds REAL,
  PRIMARY KEY(trial_id, attempt, seq)) WITHOUT ROWID;
ALTER TABLE results ADD COLUMN tests_not_stored INTEGER NOT NULL DEFAULT 0;
)sql",
      // 14: suite bundles (core/bundle.h), the files of a suite's folder as one archive
      // stored by its SHA-256; a suite version names its bundle ('' for none). Immutable rows: a
      // bundle is never rewritten, only added.
      R"sql(
CREATE TABLE bundles(
  sha256 TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  files INTEGER NOT NULL,
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL);
ALTER TABLE suites ADD COLUMN bundle TEXT NOT NULL DEFAULT '';
)sql",
      // 15: where the current attempt's log begins in its trial's log, and which
      // attempt that is. A worker counts its log from 0; a retried attempt's bytes go after the
      // earlier attempts' instead of over them.
      R"sql(
ALTER TABLE trials ADD COLUMN log_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN log_attempt INTEGER NOT NULL DEFAULT 0;
)sql",
      // 16: a big sweep is answered once its row is stored, and expanded into its
      // trials afterwards, chunk by chunk (docs/DESIGN.md "Storage"). first_trial: the first of the
      // consecutive ids reserved for its trials (grid order); materialized: how many of them are
      // stored while that is not all (NULL: all are), which a restart resumes from. The index keeps
      // the reservations (expanding sweeps, and sweeps still `creating`) one short scan away.
      R"sql(
ALTER TABLE sweeps ADD COLUMN first_trial INTEGER;
ALTER TABLE sweeps ADD COLUMN materialized INTEGER;
CREATE INDEX sweeps_reserving ON sweeps(id) WHERE materialized IS NOT NULL OR creating != 0;
)sql",
      // 17: what each attempt's verdict was judged from (core/basis.h: the runner's report, a status
      // code, an exception, ..., the exit status alone). '' for results reported before it existed.
      R"sql(
ALTER TABLE results ADD COLUMN basis TEXT NOT NULL DEFAULT '';
)sql",
      // 18: the triage loop (store/labels.h): labels people give unclassified failures, each a rule
      // that re-judged stored trials, and every verdict a label changed with what it was before.
      R"sql(
CREATE TABLE labels(
  id INTEGER PRIMARY KEY,
  signature TEXT NOT NULL,
  match TEXT NOT NULL DEFAULT '',
  suite TEXT,
  verdict TEXT NOT NULL,
  new_signature TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  withdrawn_at INTEGER,
  withdrawn_by TEXT,
  rejudged INTEGER NOT NULL DEFAULT 0);
CREATE TABLE verdict_audit(
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  label_id INTEGER NOT NULL REFERENCES labels(id),
  from_verdict TEXT NOT NULL,
  from_signature TEXT NOT NULL,
  to_verdict TEXT NOT NULL,
  to_signature TEXT NOT NULL,
  from_basis TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL,
  by TEXT NOT NULL DEFAULT '');
CREATE INDEX verdict_audit_by_trial ON verdict_audit(trial_id);
CREATE INDEX verdict_audit_by_label ON verdict_audit(label_id);
)sql",
      // 19: broke or flaky by order (docs/SCHEDULING.md "Broke or flaky"): each cell keeps its
      // latest judged runs, [finished_at, sweep, passed, flaky trial] oldest first, which its flag is
      // read from (core/outcome_order.h RunsAreFlaky). Filled from the stored results, as
      // store/cell_rebuild.cc files them; a cell's flag is read again at its next run. And which of
      // a label's changes webhooks were told of (verdicts.relabelled): 1 its labelling, 2 its
      // withdrawal too; labels from before it count as told.
      RecentRunsMigration(),
  };
  return k;
}

void Migrate(sql::Db& db, int target) {
  const auto& ms = Migrations();
  if (target < 0) target = static_cast<int>(ms.size());
  int v = db.UserVersion();
  if (v > static_cast<int>(ms.size()))
    throw sql::Error(SQLITE_ERROR, "database schema version " + std::to_string(v) +
                                       " is newer than this gauntlet knows (" + std::to_string(ms.size()) + ")");
  for (; v < target; ++v) {
    sql::Txn txn(db);
    db.Exec(ms[v]);
    db.Exec("PRAGMA user_version=" + std::to_string(v + 1));
    txn.Commit();
  }
}

}  // namespace gauntlet::store
