// Issue 33: suites travel with their files. A suite pushed with `gauntlet suites push` (or loaded
// with `serve --suites DIR`) carries its folder as a bundle; a worker in another folder, on which
// the suite's own folder does not exist, fetches it once and runs `{suite_dir}/check.py` from it.
// And `serve --tokens FILE --local-worker` gives its local worker a credential that works.
#include <filesystem>

#include "core/bundle.h"
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {
namespace fs = std::filesystem;

// A stage script that proves where it runs from: its own folder is $GAUNTLET_SUITE_DIR, and a helper
// module beside it (in lib/) answers for the backend.
const char* kCheckPy = R"(import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "lib"))
import helper
assert here == os.environ["GAUNTLET_SUITE_DIR"], (here, os.environ["GAUNTLET_SUITE_DIR"])
print('{"metrics": {"answer": %d}}' % helper.answer(sys.argv[1]))
)";

json CheckSuite(const std::string& name) {
  return {{"name", name},
          {"parameters", {{"backend", {"matmul", "conv"}}}},
          {"stages", {{{"name", "check"}, {"kind", "command"}, {"timeout_s", 60},
                       {"argv", {"python3", "{suite_dir}/check.py", "{backend}"}}}}}};
}

// Writes the suite, check.py and lib/helper.py into `dir`; returns the suite file.
std::string WriteSuiteFolder(const std::string& dir, const std::string& name) {
  fs::create_directories(dir + "/lib");
  std::ofstream(dir + "/check.py") << kCheckPy;
  std::ofstream(dir + "/lib/helper.py") << "def answer(b):\n    return {'matmul': 42, 'conv': 7}[b]\n";
  std::ofstream(dir + "/" + name + ".json") << CheckSuite(name).dump(2);
  return dir + "/" + name + ".json";
}

struct Env {
  TempDir home;  // the daemon's database, the CLI's files
  std::string empty_suites() const {
    fs::create_directories(home.path() + "/no-suites");
    return home.path() + "/no-suites";
  }
};

Out Cli(const TempDir& dir, const std::string& url, std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), GauntletBin());
  env.push_back("GAUNTLET_SERVER=" + url);
  return RunProgram(dir, args, env);
}

// Every trial of `sweep` with its verdict and metric `answer`, by backend.
std::map<std::string, std::pair<std::string, double>> Outcomes(Daemon& d, int64_t sweep) {
  std::map<std::string, std::pair<std::string, double>> out;
  const json list = d.GetJson("/api/v1/trials?sweep=" + std::to_string(sweep));  // kept: the loop reads into it
  for (auto& t : list["items"]) {
    auto full = d.GetJson("/api/v1/trials/" + std::to_string(t["id"].get<int64_t>()));
    double answer = -1;
    if (full.contains("result") && full["result"]["metrics"].contains("answer"))
      answer = full["result"]["metrics"]["answer"]["value"].get<double>();
    out[full["config"]["backend"]] = {full["verdict"].is_string() ? full["verdict"].get<std::string>() : "", answer};
  }
  return out;
}

TEST(SuiteBundle, PushedSuiteRunsFromItsBundleAfterItsFolderIsGone) {
  Env e;
  Daemon d(e.home.path(), e.empty_suites());
  auto src = std::make_unique<TempDir>();
  const std::string file = WriteSuiteFolder(src->path(), "bundled-check");
  Out push = Cli(e.home, d.url(), {"suites", "push", file});
  ASSERT_EQ(push.code, 0) << push.out << push.err;
  EXPECT_NE(push.out.find("version 1 registered"), std::string::npos) << push.out;
  EXPECT_NE(push.out.find("3 file(s)"), std::string::npos) << push.out;  // the suite, check.py, lib/helper.py
  json suite = d.GetJson("/api/v1/suites/bundled-check");
  ASSERT_TRUE(suite.contains("bundle")) << suite.dump();
  const std::string sha = suite["bundle"];
  src.reset();  // the folder is gone: only the bundle has check.py now
  ASSERT_FALSE(fs::exists(file));

  TempDir far;  // the worker's own folder, elsewhere
  auto worker = StartWorker(far.path(), d.url(), "far-node", json::object(), {"--max-trials", "2"});
  const std::string sweep_file = e.home.Write("sweep.json", json{{"suite", "bundled-check"}}.dump());
  Out sub = Cli(e.home, d.url(), {"submit", sweep_file, "--wait"});
  ASSERT_EQ(sub.code, 0) << sub.out << sub.err << worker->Log();
  auto got = Outcomes(d, 1);
  EXPECT_EQ(got["matmul"], std::make_pair(std::string("passed"), 42.0)) << worker->Log();
  EXPECT_EQ(got["conv"], std::make_pair(std::string("passed"), 7.0));
  // Unpacked once, under the worker's folder, by its hash.
  EXPECT_TRUE(fs::exists(far.path() + "/work-far-node/bundles/" + sha + "/lib/helper.py"));
  const std::string log = worker->Log();
  size_t fetched = 0;
  for (size_t at = log.find("suite bundle " + sha.substr(0, 12) + " fetched"); at != std::string::npos;
       at = log.find("suite bundle " + sha.substr(0, 12) + " fetched", at + 1))
    ++fetched;
  EXPECT_EQ(fetched, 1u) << log;

  // The same folder pushed again is the same version; a changed file is a new one.
  TempDir again;
  const std::string file2 = WriteSuiteFolder(again.path(), "bundled-check");
  Out same = Cli(e.home, d.url(), {"suites", "push", file2});
  EXPECT_NE(same.out.find("version 1 unchanged"), std::string::npos) << same.out << same.err;
  std::ofstream(again.path() + "/lib/helper.py") << "def answer(b):\n    return 1\n";
  Out changed = Cli(e.home, d.url(), {"suites", "push", file2});
  EXPECT_NE(changed.out.find("version 2 registered"), std::string::npos) << changed.out << changed.err;
}

TEST(SuiteBundle, SuiteDirWithoutFilesIsRefusedNamingTheField) {
  Env e;
  Daemon d(e.home.path(), e.empty_suites());
  TempDir src;
  const std::string file = WriteSuiteFolder(src.path(), "no-files");
  Out push = Cli(e.home, d.url(), {"suites", "push", file, "--no-files"});
  EXPECT_EQ(push.code, 2) << push.out;
  EXPECT_NE(push.err.find("stages[0].argv[1]"), std::string::npos) << push.err;
  EXPECT_NE(push.err.find("{suite_dir}"), std::string::npos) << push.err;
  auto r = d.Get("/api/v1/suites/no-files");
  EXPECT_EQ(r.status, 404) << r.body;  // nothing stored
  // The API says the same, and refuses a bundle it does not hold.
  net::Client c(d.url(), "");
  auto put = c.Send("PUT", "/api/v1/suites/no-files", CheckSuite("no-files").dump());
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 422);
  EXPECT_EQ(json::parse(put->body)["field"], "stages[0].argv[1]") << put->body;
  auto missing = c.Send("PUT", "/api/v1/suites/no-files?bundle=" + std::string(64, 'a'), CheckSuite("no-files").dump());
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 422);
  EXPECT_EQ(json::parse(missing->body)["field"], "bundle") << missing->body;
}

TEST(SuiteBundle, BundlesOverTheLimitOrMalformedAreRefused) {
  Env e;
  Daemon d(e.home.path(), e.empty_suites());
  net::Client c(d.url(), "");
  // Over the limit: 413, the limit named, whichever layer refuses it.
  const std::string big(kMaxBundleBytes + 10, 'x');
  auto r = c.Send("PUT", "/api/v1/bundles/" + BundleSha256(big), big, "application/octet-stream");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find(std::to_string(kMaxBundleBytes)), std::string::npos) << r->body;
  // A body that does not hash to its path's name.
  const std::string good = "gauntlet-bundle 1\nfile - 2 a.py\nhiend\n";
  r = c.Send("PUT", "/api/v1/bundles/" + std::string(64, 'b'), good, "application/octet-stream");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 422);
  EXPECT_EQ(json::parse(r->body)["field"], "sha256");
  // A path out of the bundle's folder, named by its true hash.
  const std::string evil = "gauntlet-bundle 1\nfile - 2 ../a.py\nhiend\n";
  r = c.Send("PUT", "/api/v1/bundles/" + BundleSha256(evil), evil, "application/octet-stream");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_EQ(json::parse(r->body)["field"], "body");
  EXPECT_EQ(d.Get("/api/v1/bundles/" + BundleSha256(evil)).status, 404);  // nothing stored
  r = c.Send("PUT", "/api/v1/bundles/" + BundleSha256(good), good, "application/octet-stream");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(d.Get("/api/v1/bundles/" + BundleSha256(good)).body, good);

  // The CLI names the limit too, before sending anything.
  TempDir src;
  const std::string file = WriteSuiteFolder(src.path(), "too-big");
  std::ofstream(src.path() + "/weights.bin") << std::string(kMaxBundleBytes, 'w');
  Out push = Cli(e.home, d.url(), {"suites", "push", file});
  EXPECT_EQ(push.code, 2);
  EXPECT_NE(push.err.find("16 MiB"), std::string::npos) << push.err;
  EXPECT_EQ(d.Get("/api/v1/suites/too-big").status, 404);
}

TEST(SuiteBundle, SuitesFolderTravelsToWorkersElsewhere) {
  Env e;
  TempDir suites;
  const std::string dir = suites.path() + "/mine";
  WriteSuiteFolder(dir, "folder-check");
  Daemon d(e.home.path(), dir);
  // The folder moves away once loaded: a worker can only have check.py from the bundle.
  fs::rename(dir, suites.path() + "/moved");
  TempDir far;
  auto worker = StartWorker(far.path(), d.url(), "far-node", json::object());
  const std::string sweep_file = e.home.Write("sweep.json", json{{"suite", "folder-check"}}.dump());
  Out sub = Cli(e.home, d.url(), {"submit", sweep_file, "--wait"});
  ASSERT_EQ(sub.code, 0) << sub.out << sub.err << worker->Log();
  auto got = Outcomes(d, 1);
  EXPECT_EQ(got["matmul"].first, "passed") << worker->Log();
  EXPECT_EQ(got["conv"].second, 7.0);
}

// The tour's identical resubmit: `gauntlet diff 1 2` said "2 changed": a config pruned by one
// probe in one run and by another in the next (it fails for two reasons), or pruned in one and run
// in the other, for the same verdict. Both are the same verdict of the same config.
TEST(DiffTour, AnIdenticalResubmitChangesNothing) {
  Env e;
  Daemon d(e.home.path(), SourceDir() + "/suites");
  auto worker = StartWorker(e.home.path(), d.url(), "cpu-node", json::object(), {"--max-trials", "2"});
  json sweep = json::parse(ReadFile(SourceDir() + "/suites/demo/sweep.json"));
  sweep["parameters"]["delay"] = "0.01";
  const std::string f = e.home.Write("tour.json", sweep.dump());
  for (int i = 0; i < 2; ++i) {
    Out sub = Cli(e.home, d.url(), {"submit", f, "--wait"});
    ASSERT_NE(sub.code, 2) << sub.out << sub.err;
  }
  Out diff = Cli(e.home, d.url(), {"diff", "1", "2"});
  EXPECT_EQ(diff.code, 0) << diff.out << diff.err;
  EXPECT_EQ(diff.out.find("changed"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("36 same (gone and same not listed: --all lists them)"), std::string::npos) << diff.out;
  Out all = Cli(e.home, d.url(), {"diff", "1", "2", "--all"});
  EXPECT_GE(Lines(all.out).size(), 37u) << all.out;  // the header and every cell
  // COLUMNS is honoured by every table (the trials' config column was 140 characters wide).
  Out narrow = Cli(e.home, d.url(), {"trials", "--sweep", "1"}, {"COLUMNS=100"});
  ASSERT_EQ(narrow.code, 0) << narrow.err;
  for (auto& l : Lines(narrow.out)) {
    size_t cols = 0;
    for (unsigned char ch : l) cols += (ch & 0xC0) != 0x80;  // code points: "…" is one column
    EXPECT_LE(cols, 100u) << l;
  }
  EXPECT_NE(narrow.out.find("…"), std::string::npos) << narrow.out;
  // `gauntlet logs` on a skipped trial (the tour's `logs 7` may be one) says what happened.
  const json skipped = d.GetJson("/api/v1/trials?sweep=1&verdict=skipped&limit=1");
  ASSERT_FALSE(skipped["items"].empty()) << skipped.dump();
  Out logs = Cli(e.home, d.url(), {"logs", skipped["items"][0]["id"].dump()});
  EXPECT_EQ(logs.code, 0);
  EXPECT_NE(logs.err.find("has no log: it was skipped, never run (pruned: "), std::string::npos) << logs.err;
  EXPECT_NE(logs.err.find("the log that explains it: gauntlet logs "), std::string::npos) << logs.err;
}

// A bad file in `--suites DIR` is reported, naming the file and field, and the rest load.
TEST(SuiteBundle, ABadFileInTheSuitesFolderIsReportedAndSkipped) {
  Env e;
  TempDir suites;
  WriteSuiteFolder(suites.path(), "good-one");
  std::ofstream(suites.path() + "/broken.yaml") << "name: broken\nparameters: {x: [1]}\nstages:\n  - {name: k, kind: teleport, argv: [a]}\n";
  Daemon d(e.home.path(), suites.path());
  EXPECT_EQ(d.Get("/api/v1/suites/good-one").status, 200);
  EXPECT_EQ(d.Get("/api/v1/suites/broken").status, 404);
  EXPECT_TRUE(WaitFor([&] { return d.Log().find("suite file skipped") != std::string::npos; })) << d.Log();
  EXPECT_NE(d.Log().find("broken.yaml: stages[0].kind"), std::string::npos) << d.Log();
}

// `serve --tokens FILE --local-worker`: the local worker registers (it once got a 401 and the
// daemon had no worker), and runs a sweep.
TEST(ServeLocalWorker, RunsUnderTokens) {
  Env e;
  Out tok = RunProgram(e.home, {GauntletBin(), "token", "--role", "submit"});
  ASSERT_EQ(tok.code, 0);
  auto tl = Lines(tok.out);
  ASSERT_GE(tl.size(), 2u) << tok.out;
  const std::string token = tl[0].substr(tl[0].find(": ") + 2);
  std::ofstream(e.home.path() + "/tokens") << tl[1].substr(tl[1].find(": ") + 2) << "\n";
  Daemon d(e.home.path(), SourceDir() + "/tests/fixtures/suites",
           {"--tokens", e.home.path() + "/tokens", "--local-worker"});
  const std::string sweep_file =
      e.home.Write("sweep.json", json{{"suite", "fixture-cmd"}, {"parameters", {{"mode", "pass"}}}}.dump());
  Out sub = Cli(e.home, d.url(), {"submit", sweep_file, "--wait", "--token", token});
  ASSERT_EQ(sub.code, 0) << sub.out << sub.err << d.Log();
  auto nodes = Cli(e.home, d.url(), {"nodes", "--format", "json", "--token", token});
  EXPECT_NE(nodes.out.find("\"local\""), std::string::npos) << nodes.out << nodes.err;
}

// Ctrl-C during `submit --wait`, a real SIGINT to a real process: the sweep keeps running and the
// user is told how to stop it; a second Ctrl-C stops it. No worker: the trials stay queued.
struct Interrupted {
  Env e;
  std::unique_ptr<Daemon> d;
  std::unique_ptr<Child> submit;
  void Start() {
    d = std::make_unique<Daemon>(e.home.path(), SourceDir() + "/tests/fixtures/suites");
    const std::string f = e.home.Write("sweep.json", json{{"suite", "fixture-cmd"}, {"parameters", {{"mode", "pass"}}}}.dump());
    submit = std::make_unique<Child>(std::vector<std::string>{GauntletBin(), "submit", f, "--wait", "--wait-for-nodes"},
                                     e.home.path() + "/submit.log",
                                     std::vector<std::string>{"GAUNTLET_SERVER=" + d->url()});
    // The sweep's JSON line is printed once Ctrl-C is handled.
    ASSERT_TRUE(WaitFor([&] { return submit->Log().find("\"id\":1") != std::string::npos; })) << submit->Log();
  }
};

TEST(SubmitWaitInterrupt, FirstCtrlCLeavesTheSweepRunningAndSaysHowToStopIt) {
  Interrupted t;
  ASSERT_NO_FATAL_FAILURE(t.Start());
  t.submit->Signal(SIGINT);
  const int st = t.submit->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(WIFEXITED(st)) << st << t.submit->Log();
  EXPECT_EQ(WEXITSTATUS(st), 130);
  EXPECT_NE(t.submit->Log().find("^C: sweep 1 keeps running; gauntlet cancel 1 stops it"), std::string::npos)
      << t.submit->Log();
  json sweep = t.d->GetJson("/api/v1/sweeps/1");
  EXPECT_TRUE(sweep["cancelled_at"].is_null()) << sweep.dump();
}

TEST(SubmitWaitInterrupt, SecondCtrlCCancelsTheSweep) {
  Interrupted t;
  ASSERT_NO_FATAL_FAILURE(t.Start());
  t.submit->Signal(SIGINT);
  ASSERT_TRUE(WaitFor([&] { return t.submit->Log().find("keeps running") != std::string::npos; })) << t.submit->Log();
  t.submit->Signal(SIGINT);
  const int st = t.submit->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(WIFEXITED(st)) << st << t.submit->Log();
  EXPECT_EQ(WEXITSTATUS(st), 130);
  EXPECT_NE(t.submit->Log().find("^C: sweep 1 cancelled"), std::string::npos) << t.submit->Log();
  json sweep = t.d->GetJson("/api/v1/sweeps/1");
  EXPECT_FALSE(sweep["cancelled_at"].is_null()) << sweep.dump();
}

}  // namespace
}  // namespace gauntlet::test
