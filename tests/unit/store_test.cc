// The store: migrations (fresh, and from an old schema on a file), suite versions, sweep expansion
// persisted in one transaction, trial filters and paging, logs with their cap, transactions.
#include <gtest/gtest.h>

#include <algorithm>

#include "store/analytics.h"
#include "store/migrations.h"
#include "store/store.h"
#include "core/sweep.h"
#include "store/config_values.h"
#include "tests/support/bulk_store.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

json SuiteDef(int v = 1) {
  return {{"name", "s"}, {"version", v}, {"parameters", {{"a", {"x", "y"}}}},
          {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
}

TEST(Store, MigratesFreshDatabaseToLatest) {
  auto s = store::Store::Open(":memory:");
  ASSERT_TRUE(s.ok()) << s.status().message();
  int v = (*s)->Read([](store::sql::Db& db) { return db.UserVersion(); });
  EXPECT_EQ(v, static_cast<int>(store::Migrations().size()));
}

TEST(Store, MigratesAnOldSchemaFileKeepingItsRows) {
  test::TempDir dir;
  const std::string path = dir.path() + "/old.db";
  {
    store::sql::Db db(path);
    store::Migrate(db, 1);  // a database written by the first release
    ASSERT_EQ(db.UserVersion(), 1);
    db.Exec("INSERT INTO suites(name, version, digest, definition, created_at) VALUES('old', 1, 'd', '{}', 1)");
    db.Exec("INSERT INTO sweeps(suite_id, request, trial_count, created_at) VALUES(1, '{}', 1, 1)");
    db.Exec("INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, created_at)"
            " VALUES(1, 1, '{\"a\":\"x\"}', 'a=x', 0, 1)");
  }
  auto s = store::Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->Read([](store::sql::Db& db) { return db.UserVersion(); }), static_cast<int>(store::Migrations().size()));
  auto t = (*s)->GetTrial(1);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->state, TrialState::kQueued);
  EXPECT_EQ(t->attempt, 0);  // a column added by migration 2, with its default
}

// A big sweep is stored in chunks so that other writes go ahead between them; once CreateSweep
// returns it is whole, its ids consecutive. One whose chunks did not all commit (the daemon died
// while storing it) was never acknowledged and is gone at the next start, its trials with it.
TEST(Store, ABigSweepIsStoredInChunksWholeOrNotAtAll) {
  test::TempDir dir;
  const std::string path = dir.path() + "/big.db";
  int64_t sweep = 0, first = 0;
  const size_t n = 3 * 4096 + 7;  // more than two chunks, the last one partial
  {
    auto s = std::move(*store::Store::Open(path));
    auto suite = s->PutSuite("s", SuiteDef(), "");
    std::vector<store::NewTrial> trials;
    for (size_t i = 0; i < n; ++i) trials.push_back({json{{"a", "x"}}.dump(), "a=x", 0, static_cast<int>(i)});
    auto id = s->CreateSweep(suite->id, "big", json::object(), 0, 3, trials, &first);
    ASSERT_TRUE(id.ok()) << id.status().message();
    sweep = *id;
    auto listed = s->ListSweeps(0, 10);
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ(listed->front().trial_count, static_cast<int64_t>(n));
    auto last = s->GetTrial(first + static_cast<int64_t>(n) - 1);
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(last->sweep_id, sweep);
    EXPECT_EQ(last->repeat_index, static_cast<int>(n) - 1) << "consecutive ids, in the order given";
    EXPECT_EQ(s->GetSweep(sweep)->by_state["queued"], static_cast<int64_t>(n));
  }
  {
    // What a death between chunks leaves: the sweep still `creating`, some of its trials stored.
    store::sql::Db db(path);
    db.Exec("UPDATE sweeps SET creating=1 WHERE id=" + std::to_string(sweep));
  }
  auto s = std::move(*store::Store::Open(path));
  EXPECT_EQ(s->ListSweeps(0, 10)->size(), 0u);
  EXPECT_FALSE(s->GetSweep(sweep).ok());
  EXPECT_FALSE(s->GetTrial(first).ok()) << "its trials went with it";
}

TEST(Store, RefusesADatabaseNewerThanItKnows) {
  test::TempDir dir;
  {
    store::sql::Db db(dir.path() + "/new.db");
    db.Exec("PRAGMA user_version=999");
  }
  auto s = store::Store::Open(dir.path() + "/new.db");
  EXPECT_FALSE(s.ok());
}

TEST(Store, AFailedMigrationLeavesThePreviousVersion) {
  store::sql::Db db(":memory:");
  store::Migrate(db, 1);
  db.Exec("CREATE TABLE results(x)");  // makes migration 2 fail after its ALTERs ran
  EXPECT_THROW(store::Migrate(db), store::sql::Error);
  EXPECT_EQ(db.UserVersion(), 1);
  // The ALTERs before the failing CREATE TABLE results were rolled back with it.
  auto s = db.Prepare("SELECT COUNT(*) FROM pragma_table_info('trials') WHERE name='attempt'");
  s.Step();
  EXPECT_EQ(s.Int(0), 0);
}

TEST(Store, TransactionRollsBackUnlessCommitted) {
  store::sql::Db db(":memory:");
  db.Exec("CREATE TABLE t(x)");
  {
    store::sql::Txn txn(db);
    db.Exec("INSERT INTO t VALUES(1)");
  }
  {
    store::sql::Txn txn(db);
    db.Exec("INSERT INTO t VALUES(2)");
    txn.Commit();
  }
  auto s = db.Prepare("SELECT group_concat(x) FROM t");
  s.Step();
  EXPECT_EQ(s.Text(0), "2");
}

TEST(Store, AChangedSuiteIsANewVersionAndTheSameOneIsNot) {
  auto s = std::move(*store::Store::Open(":memory:"));
  bool created = false;
  auto v1 = s->PutSuite("s", SuiteDef(), "/x", &created);
  ASSERT_TRUE(v1.ok());
  EXPECT_TRUE(created);
  auto again = s->PutSuite("s", SuiteDef(), "/x", &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(again->id, v1->id);
  json changed = SuiteDef();
  changed["parameters"]["a"].push_back("z");
  auto v2 = s->PutSuite("s", changed, "/x", &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(s->GetSuite("s")->version, 2);
  EXPECT_EQ(s->GetSuite("s", 1)->definition, SuiteDef());
  EXPECT_EQ(s->ListSuites()->size(), 1u);
}

TEST(Store, TrialsFilterAndPage) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  std::vector<store::NewTrial> trials;
  for (int i = 0; i < 25; ++i)
    trials.push_back({json{{"a", i % 2 ? "x" : "y"}}.dump(), i % 2 ? "a=x" : "a=y", 0, i});
  int64_t first = 0;
  auto sweep = s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &first);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(first, 1);
  store::TrialFilter f;
  f.sweep = *sweep;
  f.params = {{"a", "x"}};
  f.limit = 5;
  std::vector<int64_t> seen;
  while (true) {
    auto page = s->ListTrials(f);
    ASSERT_TRUE(page.ok());
    for (auto& t : *page) {
      EXPECT_EQ(t.config["a"], "x");
      seen.push_back(t.id);
    }
    if (page->size() < 5) break;
    f.after = page->back().id;
  }
  EXPECT_EQ(seen.size(), 12u);
  auto sw = s->GetSweep(*sweep);
  EXPECT_EQ(sw->by_state["queued"], 25);
}

// Sorting by a column pages through the whole listing, not one page at a time: every trial exactly
// once, in (value, id) order, ascending and descending, with the cursor still a trial id.
TEST(Store, TrialsSortByAColumnAcrossPages) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  std::vector<store::NewTrial> trials;
  for (int i = 0; i < 23; ++i) trials.push_back({json{{"a", i % 2 ? "x" : "y"}}.dump(), i % 2 ? "a=x" : "a=y", 0, i});
  int64_t first = 0;
  auto sweep = s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &first);
  ASSERT_TRUE(sweep.ok());
  const std::vector<std::string> verdicts = {"passed", "crashed", "oom", "", "unsupported"};  // "": still queued
  std::vector<std::pair<std::string, int64_t>> expect;
  for (int i = 0; i < 23; ++i) {
    const std::string& v = verdicts[i * 7 % verdicts.size()];
    if (!v.empty()) {
      store::ResultRow r;
      r.trial_id = first + i;
      r.attempt = 1;
      r.verdict = ParseVerdict(v).value();
      r.hardware = "H200";
      r.finished_at = 1000 + i;
      ASSERT_TRUE(s->FinishTrial(r).ok());
    }
    expect.emplace_back(v, first + i);
  }
  for (bool desc : {false, true}) {
    auto want = expect;
    std::sort(want.begin(), want.end());
    if (desc) std::reverse(want.begin(), want.end());
    store::TrialFilter f;
    f.sweep = *sweep;
    f.sort = "verdict";
    f.descending = desc;
    f.limit = 4;
    std::vector<std::pair<std::string, int64_t>> got;
    while (true) {
      auto page = s->ListTrials(f);
      ASSERT_TRUE(page.ok()) << page.status().message();
      for (auto& t : *page) got.emplace_back(NameOr(t.verdict), t.id);
      if (page->size() < 4) break;
      f.after = page->back().id;
    }
    EXPECT_EQ(got, want) << (desc ? "descending" : "ascending");
  }
  store::TrialFilter bad;
  bad.sort = "colour";
  auto r = s->ListTrials(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "sort");
}

// Two repeats of one config finish on two GPUs, and the one that finished last is reported first.
// The cell the explorer reads from the index and the one a sweep's page reads from its trials must
// both show the later finish (the crash), whatever order the reports came in.
TEST(Store, ResultsReportedOutOfOrderShowTheLaterFinishInEveryView) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  const std::string config = json{{"a", "x"}}.dump();
  std::vector<store::NewTrial> trials = {{config, "a=x", 0, 0}, {config, "a=x", 0, 1}};
  int64_t first = 0;
  auto sweep = s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &first);
  ASSERT_TRUE(sweep.ok());
  auto finish = [&](int64_t trial, const std::string& verdict, int64_t at) {
    store::ResultRow r;
    r.trial_id = trial;
    r.attempt = 1;
    r.verdict = ParseVerdict(verdict).value();
    r.signature = verdict == "passed" ? "" : "crashed:illegal_memory_access";
    r.hardware = "NVIDIA H200 · sm_90 · x1";
    r.finished_at = at;
    ASSERT_TRUE(s->FinishTrial(r).ok());
  };
  finish(first, "crashed", 2000);   // finished second, reported first
  finish(first + 1, "passed", 1000);
  for (bool by_sweep : {true, false}) {
    store::MatrixQuery q;
    q.suite = "s";
    q.rows = {"a"};
    if (by_sweep) q.sweep = *sweep;
    auto m = store::Matrix(*s, q);
    ASSERT_TRUE(m.ok()) << m.status().message();
    ASSERT_EQ((*m)["cells"].size(), 1u) << m->dump();
    const json& cell = (*m)["cells"][0];
    EXPECT_EQ(cell["verdict"], "crashed") << (by_sweep ? "trials: " : "index: ") << cell.dump();
    EXPECT_EQ(cell["trial"], first) << cell.dump();
    EXPECT_EQ(cell["passed"], 0) << cell.dump();
  }
}

// An attempt's test cases are what its latest report said: a second report of the same attempt
// replaces them (fewer, or none), and another attempt's stay apart.
TEST(Store, AReportOfTheSameAttemptAgainReplacesItsTestCases) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  const std::string config = json{{"a", "x"}}.dump();
  std::vector<store::NewTrial> trials = {{config, "a=x", 0, 0}};
  int64_t trial = 0;
  ASSERT_TRUE(s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &trial).ok());
  auto report = [&](int attempt, std::vector<std::string> names) {
    store::ResultRow r;
    r.trial_id = trial;
    r.attempt = attempt;
    r.verdict = Verdict::kPassed;
    for (auto& n : names) r.tests.push_back(store::TestCaseRow{"kernels", n, "passed"});
    ASSERT_TRUE(s->RecordAttempt(r).ok());
  };
  auto names = [&]() {
    auto t = s->GetTrialTests(trial);
    EXPECT_TRUE(t.ok());
    std::vector<std::string> out;
    for (auto& c : t->cases) out.push_back(std::to_string(t->attempt) + ":" + c.name);
    return out;
  };
  report(1, {"a", "b", "c"});
  EXPECT_EQ(names(), (std::vector<std::string>{"1:a", "1:b", "1:c"}));
  report(1, {"d"});
  EXPECT_EQ(names(), (std::vector<std::string>{"1:d"})) << "the same attempt's earlier cases are gone";
  report(2, {"e", "f"});
  EXPECT_EQ(names(), (std::vector<std::string>{"2:e", "2:f"}));
  report(2, {});
  EXPECT_EQ(names(), (std::vector<std::string>{"1:d"})) << "attempt 2 now reports none; attempt 1's are kept";
}

TEST(Store, LogAppendsAreIdempotentAndTheCapKeepsHeadAndTail) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  int64_t first = 0;
  ASSERT_TRUE(s->CreateSweep(suite->id, "", json::object(), 0, 3, {{"{}", "", 0, 0}}, &first).ok());
  ASSERT_TRUE(s->AppendLog(first, 0, "hello ", 100).ok());
  ASSERT_TRUE(s->AppendLog(first, 0, "hello ", 100).ok());  // a retried chunk
  ASSERT_TRUE(s->AppendLog(first, 6, "world", 100).ok());
  EXPECT_EQ(s->AppendLog(first, 50, "gap", 100).code(), Code::kConflict);
  std::string text;
  int64_t size = 0, next = 0;
  ASSERT_TRUE(s->ReadLog(first, 0, 1 << 20, &text, &size, &next).ok());
  EXPECT_EQ(text, "hello world");
  EXPECT_EQ(next, 11);
  // Past the cap: the middle goes, head and tail stay, and the reader is told what was cut.
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(s->AppendLog(first, size + i * 10, std::string(9, static_cast<char>('a' + i)) + "\n", 100).ok());
  text.clear();
  ASSERT_TRUE(s->ReadLog(first, 0, 1 << 20, &text, &size, &next).ok());
  EXPECT_EQ(size, 211);
  EXPECT_EQ(text.rfind("hello world", 0), 0u);
  EXPECT_NE(text.find("cut here"), std::string::npos);
  EXPECT_NE(text.find("ttttttttt"), std::string::npos);
  EXPECT_EQ(next, 211);
}

// Issue 31: a trial that logs without end must not fill the daemon's disk. With 512 KiB chunks (the
// worker's) and a 2 MiB cap, 40 MiB of log leaves at most the cap and a chunk stored, the head and
// the tail readable, and the read says how many bytes were cut where.
TEST(Store, ALogPastTheCapKeepsHeadAndTailAndSaysWhatWasCut) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  int64_t trial = 0;
  ASSERT_TRUE(s->CreateSweep(suite->id, "", json::object(), 0, 3, {{"{}", "", 0, 0}}, &trial).ok());
  const int64_t cap = 2 << 20, chunk = 512 << 10;
  int64_t offset = 0;
  for (int i = 0; i < 80; ++i) {
    ASSERT_TRUE(s->AppendLog(trial, offset, std::string(chunk, static_cast<char>('A' + i % 26)), cap).ok());
    offset += chunk;
  }
  const int64_t stored = s->Read([&](store::sql::Db& db) {
    auto st = db.Prepare("SELECT coalesce(sum(length(data)), 0) FROM log_chunks WHERE trial_id=?");
    st.Bind(1, trial);
    st.Step();
    return st.Int(0);
  });
  EXPECT_LE(stored, cap + chunk) << "the stored log is bounded by the cap";
  std::string text;
  int64_t size = 0, next = 0;
  ASSERT_TRUE(s->ReadLog(trial, 0, 64 << 20, &text, &size, &next).ok());
  EXPECT_EQ(size, offset) << "the log's size is what was written";
  EXPECT_EQ(text[0], 'A');
  EXPECT_EQ(text.back(), static_cast<char>('A' + 79 % 26));
  const size_t mark = text.find(" bytes of log cut here (log cap)");
  ASSERT_NE(mark, std::string::npos);
  const size_t open = text.rfind("[... ", mark);
  ASSERT_NE(open, std::string::npos);
  const int64_t cut = std::stoll(text.substr(open + 5, mark - open - 5));
  EXPECT_EQ(cut + stored, offset) << "the marker names exactly the bytes that are gone";
}

// The store's half of the disk-full row (docs/RELIABILITY.md) without a file system to fill:
// SQLite's max_page_count on the writer makes a write fail with SQLITE_FULL, as a full disk does.
// The integration test DiskFull.* fills a real tmpfs where it can mount one.
TEST(StoreDiskFull, AWriteThatFindsNoSpaceIsUnavailableAndHealthRecovers) {
  test::TempDir dir;
  auto s = std::move(*store::Store::Open(dir.path() + "/g.db"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  ASSERT_TRUE(suite.ok());
  const int64_t pages = s->Read([](store::sql::Db& db) {
    auto st = db.Prepare("PRAGMA page_count");
    st.Step();
    return st.Int(0);
  });
  s->Write([&](store::sql::Db& db) { db.Exec("PRAGMA max_page_count = " + std::to_string(pages)); });
  std::vector<store::NewTrial> trials;
  for (int i = 0; i < 2000; ++i) trials.push_back({json{{"a", std::string(200, 'x')}}.dump(), "k" + std::to_string(i), 0, 0});
  int64_t first = 0;
  auto r = s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &first);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("disk full", 0), 0u) << r.status().message();
  auto trouble = s->WriteTrouble();
  ASSERT_TRUE(trouble.has_value());
  EXPECT_EQ(trouble->rfind("disk full", 0), 0u);
  EXPECT_EQ(s->ListSweeps(0, 10)->size(), 0u);  // nothing of it was stored
  s->Write([](store::sql::Db& db) { db.Exec("PRAGMA max_page_count = 1073741823"); });  // space is back
  ASSERT_TRUE(s->CreateSweep(suite->id, "n", json::object(), 0, 3, trials, &first).ok());
  EXPECT_FALSE(s->WriteTrouble().has_value());
}

}  // namespace
}  // namespace gauntlet


namespace gauntlet {
namespace {

// The SQL edge of the vocabulary (store_rows.h): a row whose state or verdict is no name of
// core/verdict.h is an error the caller sees (Internal), never a default state or verdict; the
// names the store writes read back as the same enums.
TEST(Store, AnUnknownStateOrVerdictInARowIsAnErrorNotADefault) {
  auto s = std::move(*store::Store::Open(":memory:"));
  auto suite = s->PutSuite("s", SuiteDef(), "");
  int64_t first = 0;
  ASSERT_TRUE(s->CreateSweep(suite->id, "", json::object(), 0, 3, {{"{}", "", 0, 0}}, &first).ok());
  store::ResultRow r;
  r.trial_id = first;
  r.attempt = 1;
  r.verdict = Verdict::kWrongOutput;
  r.signature = "wrong_output:x";
  r.hardware = "hw";
  ASSERT_TRUE(s->FinishTrial(r).ok());
  auto t = s->GetTrial(first);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->state, TrialState::kDone);
  EXPECT_EQ(t->verdict, Verdict::kWrongOutput);
  store::TrialFilter f;
  f.verdict = Verdict::kWrongOutput;
  f.state = TrialState::kDone;
  auto listed = s->ListTrials(f);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);

  s->Write([&](store::sql::Db& db) { db.Exec("UPDATE trials SET verdict='Wrong Output' WHERE id=" + std::to_string(first)); });
  t = s->GetTrial(first);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kInternal);
  EXPECT_NE(t.status().message().find("unknown verdict 'Wrong Output'"), std::string::npos) << t.status().message();

  s->Write([&](store::sql::Db& db) {
    db.Exec("UPDATE trials SET verdict=NULL, state='finished' WHERE id=" + std::to_string(first));
  });
  t = s->GetTrial(first);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kInternal);
  EXPECT_NE(t.status().message().find("unknown trial state 'finished'"), std::string::npos) << t.status().message();
  bool now_done = false;
  EXPECT_EQ(s->CancelTrial(first, &now_done).code(), Code::kInternal);
}


// Issue 31: a bounded read ends once the daemon stops queries, and over its rows, with the answer
// that says why; the same query unbounded reads everything.
TEST(StoreQueries, ABoundedReadEndsWhenQueriesStopOrItsRowsRunOut) {
  test::TempDir dir;
  const std::string db = dir.path() + "/g.db";
  const int64_t sweep = test::FillSweep(db, test::GridSuite("bulk", {10, 10, 20}), 4000);
  auto s = std::move(*store::Store::Open(db));
  store::MatrixQuery q;
  q.sweep = sweep;
  q.rows = {"p0", "p1"};
  ASSERT_TRUE(store::Matrix(*s, q).ok());
  store::QueryBudget few(store::QueryLimits{0, 100}, nullptr);
  auto over = store::Matrix(*s, q, &few);
  EXPECT_EQ(over.status().code(), Code::kInvalid);
  EXPECT_EQ(over.status().field(), "sweep");
  EXPECT_NE(over.status().message().find("more than 100 rows"), std::string::npos) << over.status().message();
  s->StopQueries();
  store::QueryBudget b = s->NewQuery();
  auto stopped = store::Matrix(*s, q, &b);
  EXPECT_EQ(stopped.status().code(), Code::kUnavailable);
  EXPECT_NE(stopped.status().message().find("stopping"), std::string::npos) << stopped.status().message();
  store::QueryBudget t = s->NewQuery();
  store::TrialFilter f;
  f.sweep = sweep;
  EXPECT_EQ(s->ListTrials(f, &t).status().code(), Code::kUnavailable);
  EXPECT_TRUE(s->ListTrials(f).ok());  // unbounded reads (the daemon's own) go on
}

// A matrix whose hidden parameter declares thousands of values: every cell is mixed, each
// breakdown lists at most 50 values per parameter and counts the rest, in declared order.
TEST(StoreQueries, ABreakdownListsTheFirstValuesInDeclaredOrderAndCountsTheRest) {
  test::TempDir dir;
  const std::string db = dir.path() + "/g.db";
  const int64_t sweep = test::FillSweep(db, test::GridSuite("bulk", {2, 400}), 4000);
  auto s = std::move(*store::Store::Open(db));
  store::MatrixQuery q;
  q.sweep = sweep;
  q.rows = {"p0"};
  auto m = store::Matrix(*s, q);
  ASSERT_TRUE(m.ok()) << m.status().message();
  bool seen = false;
  for (auto& c : (*m)["cells"])
    for (auto& b : c.value("breakdown", nlohmann::json::array())) {
      const auto& vs = b["values"]["p1"];
      ASSERT_LE(vs.size(), 50u);
      const int64_t more = b.value("values_more", nlohmann::json::object()).value("p1", int64_t{0});
      // Distinct values: listed and counted together are at most the declared 400, at most the configs.
      EXPECT_LE(static_cast<int64_t>(vs.size()) + more, std::min<int64_t>(b["configs"].get<int64_t>(), 400));
      if (more > 0) {
        EXPECT_EQ(vs.size(), 50u);
      }
      for (size_t i = 1; i < vs.size(); ++i)
        EXPECT_LT(std::stoi(vs[i - 1].get<std::string>().substr(1)), std::stoi(vs[i].get<std::string>().substr(1)));
      seen = seen || more > 0;
    }
  EXPECT_TRUE(seen) << "no breakdown had more than 50 values: the test did not test the bound";
}

// The matrix's config reader: what ConfigJson stores is read as the full parser would read it; any
// other text is left to the full parser (false), never read wrong.
TEST(StoreQueries, AFlatConfigIsReadAsTheParserReadsItAndAnythingElseIsLeftToIt) {
  const std::vector<std::string> params = {"b", "a", "absent"};
  std::vector<std::string> v;
  ASSERT_TRUE(store::FlatConfigValues(ConfigJson({{"a", "x y"}, {"b", "7"}}).dump(), params, &v));
  EXPECT_EQ(v, (std::vector<std::string>{"7", "x y", ""}));
  ASSERT_TRUE(store::FlatConfigValues(" { \"a\" : \"1\" , \"a\":\"2\" } ", params, &v));
  EXPECT_EQ(v[1], "2") << "a later duplicate wins, as in nlohmann's parser";
  ASSERT_TRUE(store::FlatConfigValues("{}", params, &v));
  EXPECT_EQ(v, (std::vector<std::string>{"", "", ""}));
  for (const char* other : {R"({"a": 1})", R"({"a": "q\"uote"})", R"({"a": ["x"]})", "{\"a\": \"\xc3\xa9\"}",
                            R"({"a": "x")", R"({"a": "x"} trailing)", R"([])", ""})
    EXPECT_FALSE(store::FlatConfigValues(other, params, &v)) << other;
}

}  // namespace
}  // namespace gauntlet
