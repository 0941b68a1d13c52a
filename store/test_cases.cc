// A trial's test cases (migration 13, table test_cases): written with its result, read for
// GET /api/v1/trials/{id}. Bounded on the way in whatever the worker sent.
#include "store/store.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using namespace detail;

namespace {
// `s` cut to at most `max` bytes on a UTF-8 boundary.
std::string Cut(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}
}  // namespace

void Store::InsertTestCasesLocked(sql::Db& db, const ResultRow& r) {
  // An attempt reported again replaces its cases. Looked for first: nearly every report is an
  // attempt's first, and SQLite's DELETE of a key range plans a two-pass delete (an ephemeral table
  // of the keys) even when it finds nothing: 28k instructions of a lease cycle's ~480k, against a
  // few thousand for this one-row read.
  auto& any = db.Cached("SELECT 1 FROM test_cases WHERE trial_id=? AND attempt=? LIMIT 1");
  any.Bind(1, r.trial_id).Bind(2, r.attempt);
  const bool earlier = any.Step();
  any.Reset();
  if (earlier) {
    auto& del = db.Cached("DELETE FROM test_cases WHERE trial_id=? AND attempt=?");
    del.Bind(1, r.trial_id).Bind(2, r.attempt).Run();
  }
  auto& ins = db.Cached(
      "INSERT INTO test_cases(trial_id, attempt, seq, stage, name, outcome, verdict, signature, evidence, seconds)"
      " VALUES(?,?,?,?,?,?,?,?,?,?)");
  const size_t n = std::min(r.tests.size(), kMaxStoredTestCases);
  for (size_t i = 0; i < n; ++i) {
    const TestCaseRow& c = r.tests[i];
    ins.Bind(1, r.trial_id).Bind(2, r.attempt).Bind(3, static_cast<int64_t>(i)).Bind(4, Cut(c.stage, kMaxTestField));
    ins.Bind(5, Cut(c.name, kMaxTestField)).Bind(6, Cut(c.outcome, 16)).Bind(7, Name(c.verdict));
    ins.Bind(8, Cut(c.signature, kMaxTestField)).Bind(9, Cut(c.evidence, kMaxTestField)).Bind(10, c.seconds);
    ins.Run();
  }
  // The count of those not stored went into the results row itself (InsertResultLocked).
}

int64_t TestsNotStored(const ResultRow& r) {
  return r.tests_not_stored + static_cast<int64_t>(r.tests.size() - std::min(r.tests.size(), kMaxStoredTestCases));
}

Result<TrialTests> Store::GetTrialTests(int64_t id) {
  return Guard([&]() -> Result<TrialTests> {
    return Read([&](sql::Db& db) -> Result<TrialTests> {
      TrialTests t;
      // The latest attempt that reported tests (a retried infra_error may have reported none).
      auto& a = db.Cached(
          "SELECT r.attempt, r.tests_not_stored FROM results r WHERE r.trial_id=? AND (r.tests_not_stored > 0 OR"
          " EXISTS(SELECT 1 FROM test_cases c WHERE c.trial_id=r.trial_id AND c.attempt=r.attempt))"
          " ORDER BY r.attempt DESC LIMIT 1");
      a.Bind(1, id);
      if (!a.Step()) {
        a.Reset();
        return t;
      }
      t.attempt = static_cast<int>(a.Int(0));
      t.not_stored = a.Int(1);
      a.Reset();
      auto& q = db.Cached(
          "SELECT stage, name, outcome, verdict, signature, evidence, seconds FROM test_cases"
          " WHERE trial_id=? AND attempt=? ORDER BY seq");
      q.Bind(1, id).Bind(2, t.attempt);
      while (q.Step()) {
        TestCaseRow c{q.Text(0), q.Text(1), q.Text(2), ParseVerdict(q.Text(3)).value_or(Verdict::kCrashed), q.Text(4),
                      q.Text(5)};
        if (!q.IsNull(6)) c.seconds = q.Double(6);
        t.cases.push_back(std::move(c));
      }
      q.Reset();
      return t;
    });
  });
}

}  // namespace gauntlet::store
