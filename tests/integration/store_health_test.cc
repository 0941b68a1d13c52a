// Issue 31: heavy reads end (a deadline, a row bound, SIGTERM), a damaged or empty store is never
// served, a running store is backed up consistently, and sweep listings summarise their values.
// Real `gauntlet serve` processes on loopback, real SQLite files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <future>
#include <thread>

#include "store/store_file.h"
#include "tests/support/bulk_store.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;


json Problem(const net::ClientResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.body.substr(0, 400);
  EXPECT_EQ(r.content_type, "application/problem+json");
  json j = json::parse(r.body, nullptr, false);
  return j.is_object() ? j : json::object();
}

bool Has(const json& problem, const std::string& words) {
  return problem.value("detail", "").find(words) != std::string::npos;
}

// CPU time (user + system) the process has used, in clock ticks (/proc/PID/stat fields 14 and 15).
long CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> f; ++i) {
    if (i == 14) utime = std::stol(f);
    if (i == 15) stime = std::stol(f);
  }
  return utime + stime;
}

TEST(QueryBounds, AQueryOverTheRowBoundIsA422SayingWhatToNarrow) {
  TempDir dir;
  dir.Write("suites/.keep", "");
  json suite = GridSuite("bulk", {10, 10, 20});
  suite["parameters"]["p2"] = {{"values", suite["parameters"]["p2"]}, {"ordered", true}};  // regressions read its cells
  const int64_t sweep = FillSweep(dir.path() + "/gauntlet.db", suite, 2000);
  Daemon d(dir.path(), dir.path() + "/suites", {"--query-max-rows", "500"});
  const std::string sw = std::to_string(sweep);
  json p = Problem(d.Get("/api/v1/matrix?sweep=" + sw + "&rows=p0,p1"), 422);
  EXPECT_EQ(p.value("field", ""), "sweep");
  EXPECT_TRUE(Has(p, "more than 500 rows")) << p.dump();
  EXPECT_TRUE(Has(p, "narrow it")) << p.dump();
  p = Problem(d.Get("/api/v1/compare?a=" + sw + "&b=" + sw), 422);
  EXPECT_EQ(p.value("field", ""), "a");
  p = Problem(d.Get("/api/v1/regressions"), 422);  // 2 x 2,000 cells read without suite=
  EXPECT_TRUE(Has(p, "suite=")) << p.dump();
  p = Problem(d.Get("/api/v1/trials?sweep=" + sw + "&limit=1000"), 422);
  EXPECT_TRUE(Has(p, "smaller limit")) << p.dump();
  // Within the bound the same routes answer.
  EXPECT_EQ(d.Get("/api/v1/trials?sweep=" + sw + "&limit=100").status, 200);
  EXPECT_EQ(d.Get("/api/v1/matrix?suite=bulk&rows=p0").status, 422);  // the cells: 4,000 rows
  EXPECT_EQ(d.Get("/api/v1/health").status, 200);
}

TEST(QueryBounds, AQueryPastItsDeadlineIsA503SayingWhatToNarrow) {
  TempDir dir;
  dir.Write("suites/.keep", "");
  const int64_t sweep = FillSweep(dir.path() + "/gauntlet.db", GridSuite("bulk", {10, 10, 40, 50}), 100000);
  // 1 ms: no read of 100,000 trials ends in time, whatever the machine.
  Daemon d(dir.path(), dir.path() + "/suites", {"--query-timeout-ms", "1"});
  const std::string sw = std::to_string(sweep);
  for (const std::string& target : {"/api/v1/matrix?sweep=" + sw + "&rows=p0,p1", "/api/v1/compare?a=" + sw + "&b=" + sw}) {
    auto r = d.Get(target);
    json p = Problem(r, 503);
    EXPECT_TRUE(Has(p, "--query-timeout-ms")) << target << ": " << p.dump();
    EXPECT_TRUE(Has(p, "narrow it")) << target << ": " << p.dump();
    EXPECT_FALSE(r.Header("Retry-After").empty());
  }
  EXPECT_EQ(d.Get("/api/v1/health").status, 200);
}

TEST(QueryBounds, SigtermDuringALongQueryStopsTheDaemonAndAnswersIt) {
  TempDir dir;
  dir.Write("suites/.keep", "");
  const int64_t sweep = FillSweep(dir.path() + "/gauntlet.db", GridSuite("bulk", {10, 10, 40, 50}), 200000);
  Daemon d(dir.path(), dir.path() + "/suites", {"--query-timeout-ms", "600000", "--query-max-rows", "0"});
  const long idle = CpuTicks(d.child().pid());
  // The compare of a sweep with itself reads it twice and folds 200,000 items: seconds of work.
  auto answer = std::async(std::launch::async, [&] {
    net::Client c(d.url(), "");
    c.SetTimeout(std::chrono::seconds(600));
    return c.Send("GET", "/api/v1/compare?a=" + std::to_string(sweep) + "&b=" + std::to_string(sweep));
  });
  // The query is running once the daemon has spent a fifth of a second of CPU on it.
  ASSERT_TRUE(WaitFor([&] { return CpuTicks(d.child().pid()) - idle >= sysconf(_SC_CLK_TCK) / 5; },
                      std::chrono::seconds(60)));
  d.child().Signal(SIGTERM);
  const int st = d.child().Wait(std::chrono::seconds(60));
  ASSERT_NE(st, -1) << "the daemon did not stop";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << d.Log();
  auto r = answer.get();
  ASSERT_TRUE(r.ok()) << r.status().message();
  json p = Problem(*r, 503);
  EXPECT_TRUE(Has(p, "stopping")) << p.dump();
}

// Overwrites `pages` pages of `path` in its middle with bytes that are no b-tree page.
void Garble(const std::string& path, int pages) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const int64_t size = f.tellg(), page = 4096;
  ASSERT_GT(size, 20 * page);
  const std::string junk(page, '\xa5');
  for (int i = 0; i < pages; ++i) {
    f.seekp((size / page / 2 + i * 3) * page);
    f.write(junk.data(), junk.size());
  }
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(StoreHealth, ADamagedStoreRefusesToStartNamingTheFileAndTheFixAndIsNotWritten) {
  TempDir dir;
  dir.Write("suites/.keep", "");
  const std::string db = dir.path() + "/gauntlet.db";
  FillSweep(db, GridSuite("bulk", {10, 10, 20}), 5000);  // closed: checkpointed, no WAL left
  auto good = store::CheckStoreFile(db, false);
  ASSERT_TRUE(good.ok() && good->ok);
  Garble(db, 4);
  const std::string before = Bytes(db);
  Child serve({GauntletBin(), "serve", "--db", db, "--suites", dir.path() + "/suites", "--listen", "127.0.0.1:0"},
              dir.path() + "/serve.log");
  const int st = serve.Wait(std::chrono::seconds(60));
  ASSERT_NE(st, -1) << "a damaged store was served: " << serve.Log();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  const std::string log = serve.Log();
  EXPECT_NE(log.find(db + " is damaged"), std::string::npos) << log;
  EXPECT_NE(log.find("quick_check"), std::string::npos) << log;
  EXPECT_NE(log.find("restore the latest backup"), std::string::npos) << log;
  EXPECT_EQ(Bytes(db), before) << "the refused store was written to";
  // doctor says the same on demand, and passes a good store.
  Child doctor({GauntletBin(), "doctor", "--db", db}, dir.path() + "/doctor.log");
  const int ds = doctor.Wait(std::chrono::seconds(60));
  EXPECT_TRUE(WIFEXITED(ds) && WEXITSTATUS(ds) == 1) << doctor.Log();
  EXPECT_NE(doctor.Log().find("damaged: " + db), std::string::npos) << doctor.Log();
  const std::string fresh = dir.path() + "/fresh.db";
  FillSweep(fresh, GridSuite("bulk", {3}), 10);
  Child ok({GauntletBin(), "doctor", "--db", fresh}, dir.path() + "/doctor-ok.log");
  const int os = ok.Wait(std::chrono::seconds(60));
  EXPECT_TRUE(WIFEXITED(os) && WEXITSTATUS(os) == 0) << ok.Log();
  EXPECT_NE(ok.Log().find("ok: " + fresh + " passed PRAGMA quick_check"), std::string::npos) << ok.Log();
}

TEST(StoreHealth, AnEmptyFileIsRefusedAPathThatDoesNotExistIsANewStore) {
  TempDir dir;
  dir.Write("suites/.keep", "");
  const std::string empty = dir.Write("empty.db", "");
  Child serve({GauntletBin(), "serve", "--db", empty, "--suites", dir.path() + "/suites", "--listen", "127.0.0.1:0"},
              dir.path() + "/serve.log");
  const int st = serve.Wait(std::chrono::seconds(60));
  ASSERT_NE(st, -1) << "an empty file was served as a new store";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  EXPECT_NE(serve.Log().find(empty + " is an empty file"), std::string::npos) << serve.Log();
  EXPECT_NE(serve.Log().find("remove the file"), std::string::npos) << serve.Log();
  EXPECT_EQ(Bytes(empty), "");
  // A path that does not exist is a new store.
  Daemon d(dir.path(), dir.path() + "/suites");
  EXPECT_EQ(d.GetJson("/api/v1/health")["status"], "ok");
}

TEST(StoreHealth, ABackupWhileTheDaemonWritesPassesQuickCheckAndHoldsTheRows) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> acked{0};  // the highest sweep id answered 201 so far
  std::thread writer([&] {
    net::Client c(d.url(), "");
    for (int i = 0; !stop; ++i) {
      json body = {{"suite", "fixture-cmd"}, {"name", "w" + std::to_string(i)}, {"parameters", {{"mode", {"pass"}}}}};
      auto r = c.Send("POST", "/api/v1/sweeps", body.dump(), "application/json");
      if (r.ok() && r->status == 201) acked = json::parse(r->body)["id"].get<int64_t>();
    }
  });
  ASSERT_TRUE(WaitFor([&] { return acked >= 20; }));
  const int64_t before = acked;
  const std::string out = dir.path() + "/copy.db";
  Child backup({GauntletBin(), "backup", "--db", d.db(), out}, dir.path() + "/backup.log");
  const int st = backup.Wait(std::chrono::seconds(120));
  const int64_t during = acked;
  stop = true;
  writer.join();
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << backup.Log();
  EXPECT_NE(backup.Log().find("passed PRAGMA quick_check"), std::string::npos) << backup.Log();
  EXPECT_GT(acked.load(), before) << "the daemon did not write while the backup ran";
  auto check = store::CheckStoreFile(out, /*full=*/true);
  ASSERT_TRUE(check.ok()) << check.status().message();
  EXPECT_TRUE(check->ok) << (check->problems.empty() ? "" : check->problems[0]);
  // Every sweep acknowledged before the backup began is in the copy, each with all its trials.
  store::sql::Db copy(out, /*readonly=*/true);
  auto s = copy.Prepare(
      "SELECT COUNT(*), MIN(id), MAX(id), SUM(trial_count = (SELECT COUNT(*) FROM trials t WHERE t.sweep_id = sweeps.id))"
      " FROM sweeps");
  ASSERT_TRUE(s.Step());
  EXPECT_GE(s.Int(2), before);
  EXPECT_LE(s.Int(2), during + 1);
  EXPECT_EQ(s.Int(0), s.Int(2) - s.Int(1) + 1) << "sweeps missing from the copy";
  EXPECT_EQ(s.Int(3), s.Int(0)) << "a sweep's trials are not all in the copy";
  // A second backup never overwrites the first.
  Child again({GauntletBin(), "backup", "--db", d.db(), out}, dir.path() + "/again.log");
  const int as = again.Wait(std::chrono::seconds(60));
  EXPECT_TRUE(WIFEXITED(as) && WEXITSTATUS(as) == 2) << again.Log();
}

TEST(SweepListing, ASweepOverManyValuesIsSummarisedInTheListAndWholeOnItsPage) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  json suite = GridSuite("many", {5000, 2});
  net::Client c(d.url(), "");
  auto put = c.Send("PUT", "/api/v1/suites/many", suite.dump(), "application/json");
  ASSERT_TRUE(put.ok() && put->status == 201) << (put.ok() ? put->body : put.status().message());
  json created = d.PostJson("/api/v1/sweeps", {{"suite", "many"}, {"parameters", {{"p0", suite["parameters"]["p0"]}, {"p1", {"v0"}}}}}, 201);
  auto list = d.Get("/api/v1/sweeps");
  ASSERT_EQ(list.status, 200);
  EXPECT_LT(list.body.size(), 8000u) << "the listing repeats the values";
  json item = json::parse(list.body)["items"][0];
  EXPECT_FALSE(item.contains("request"));
  EXPECT_EQ(item["request_summary"]["parameters"]["p0"]["count"], 5000);
  EXPECT_EQ(item["request_summary"]["parameters"]["p0"]["first"], json({"v0", "v1", "v2"}));
  EXPECT_EQ(item["request_summary"]["parameters"]["p1"], json({"v0"}));
  json page = d.GetJson("/api/v1/sweeps/" + std::to_string(created["id"].get<int64_t>()));
  EXPECT_EQ(page["request"]["parameters"]["p0"].size(), 5000u);
}

}  // namespace
}  // namespace gauntlet::test
