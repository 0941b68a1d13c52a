// Real workers on loopback: a fleet declared by inventory files (CPU-only, 2 x H200 sm_90,
// 8 x sm_120), hardware matching, concurrent GPU slots, cancel, timeout, worker and daemon SIGKILL,
// stale leases, live logs.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

json FleetGpus(const std::string& name, const std::string& cc, int n, int mem = 143771) {
  json g = json::array();
  for (int i = 0; i < n; ++i)
    g.push_back({{"index", i}, {"name", name}, {"uuid", "GPU-" + name + std::to_string(i)}, {"compute_capability", cc},
                 {"memory_mb", mem}});
  return {{"gpus", g}};
}

std::vector<json> FleetTrials(Daemon& d, int64_t sweep) {
  json j = d.GetJson("/api/v1/trials?limit=1000&sweep=" + std::to_string(sweep));
  std::vector<json> out;
  for (auto& t : j["items"]) out.push_back(d.GetJson("/api/v1/trials/" + t["id"].dump()));
  return out;
}

TEST(Fleet, TrialsLandOnlyOnMatchingNodesAndShareGpusSafely) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto cpu = StartWorker(dir.path(), d.url(), "cpu-node", json::object());
  auto h200 = StartWorker(dir.path(), d.url(), "h200-node", FleetGpus("NVIDIA H200", "9.0", 2));
  auto rtx = StartWorker(dir.path(), d.url(), "rtx-node", FleetGpus("NVIDIA RTX PRO 6000 Blackwell", "12.0", 8, 97887));
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == 3; }));
  const std::string barrier = dir.path() + "/barrier";
  json sweep = d.PostJson("/api/v1/sweeps",
                          {{"suite", "fixture-gpu"},
                           {"parameters", {{"mode", {"env"}}}},
                           {"include", {{{"mode", "barrier"}, {"i", "1"}, {"dir", barrier}, {"count", "2"}}}},
                           {"targets", {{{"arch", "sm_90"}}, {{"arch", "sm_120"}}, {{"arch", "sm_100"}}}}},
                          201);
  const int64_t id = sweep["id"];
  // sm_100: no node can ever run it, and the sweep says so instead of waiting silently.
  json sw = d.GetJson("/api/v1/sweeps/" + std::to_string(id));
  ASSERT_EQ(sw["unmatched_targets"].size(), 1u);
  EXPECT_EQ(sw["unmatched_targets"][0]["target"]["arch"], "sm_100");
  ASSERT_TRUE(WaitFor([&] {
    json s = d.GetJson("/api/v1/sweeps/" + std::to_string(id));
    return s["by_state"].value("done", 0) == s["trials"].get<int>() - s["by_state"].value("queued", 0) &&
           s["by_state"].value("queued", 0) == 5;  // the sm_100 trials wait
  }, std::chrono::seconds(60)));
  for (auto& t : FleetTrials(d, id)) {
    if (t["state"] == "queued") continue;
    ASSERT_EQ(t["verdict"], "passed") << t.dump();
    const bool sm90 = t["target"] == 0;
    EXPECT_EQ(t["node"], sm90 ? "h200-node" : "rtx-node");
    EXPECT_EQ(t["hardware"], sm90 ? "NVIDIA H200 · sm_90 · x1" : "NVIDIA RTX PRO 6000 Blackwell · sm_120 · x1");
    // One GPU each, named by CUDA_VISIBLE_DEVICES.
    if (t["config"]["mode"] == "env") {
      std::string ev = t["result"]["evidence"];
      ASSERT_EQ(ev.rfind("CUDA_VISIBLE_DEVICES=", 0), 0u) << ev;
      EXPECT_EQ(ev.find(','), std::string::npos);
    }
  }
  // The two barrier trials (sm_90 and sm_120) met: they ran at the same time.
  json cpu_sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  json done = d.WaitSweep(cpu_sweep["id"]);
  EXPECT_EQ(done["by_verdict"]["passed"], 1);
}

TEST(Fleet, TwoOneGpuTrialsRunAtOnceOnATwoGpuNode) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto h200 = StartWorker(dir.path(), d.url(), "h200-node", FleetGpus("NVIDIA H200", "9.0", 2));
  const std::string barrier = dir.path() + "/barrier";
  json sweep = d.PostJson("/api/v1/sweeps",
                          {{"suite", "fixture-gpu"}, {"parameters", {{"mode", {"barrier"}}, {"i", {"1", "2"}},
                                                                      {"dir", {barrier}}, {"count", {"2"}}}}},
                          201);
  json done = d.WaitSweep(sweep["id"]);
  ASSERT_EQ(done["by_verdict"]["passed"], 2) << done.dump();
  std::set<std::string> visible;
  for (auto& f : fs::directory_iterator(barrier)) {
    std::ifstream in(f.path());
    std::string v;
    in >> v;
    visible.insert(v);
  }
  EXPECT_EQ(visible, (std::set<std::string>{"0", "1"}));
}

TEST(Fleet, CancelStopsTheWholeProcessGroupWithinAHeartbeat) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--heartbeat-ms", "200"});
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "300"});
  const std::string gdir = dir.path() + "/gc";
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"grandchild"}}, {"dir", {gdir}}}}},
                          201);
  json trials = d.GetJson("/api/v1/trials?sweep=" + sweep["id"].dump());
  const std::string tid = trials["items"][0]["id"].dump();
  ASSERT_TRUE(WaitFor([&] { return fs::exists(gdir + "/grandchild.pid"); }));
  pid_t grandchild = 0;
  ASSERT_TRUE(WaitFor([&] {
    std::ifstream(gdir + "/grandchild.pid") >> grandchild;
    return grandchild > 0;
  }));
  ASSERT_TRUE(ProcessAlive(grandchild));
  // The log is readable while the stage runs.
  ASSERT_TRUE(WaitFor([&] { return d.Get("/api/v1/trials/" + tid + "/log").body.find("grandchild started") != std::string::npos; }));
  d.PostJson("/api/v1/trials/" + tid + "/cancel", json::object());
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(20));
  json t = d.GetJson("/api/v1/trials/" + tid);
  EXPECT_EQ(t["verdict"], "cancelled") << t.dump();
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(grandchild); }, std::chrono::seconds(5)))
      << "a grandchild that ignores SIGTERM outlived its trial";
}

// The worker end to end: a trial that passes while its setsid grandchild (SIGTERM ignored) still
// runs. Before the stage keeper the grandchild outlived the trial (holding, on a GPU node, its GPU).
TEST(Fleet, ATrialThatPassesLeavesNoSetsidGrandchildBehind) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "300"});
  const std::string gdir = dir.path() + "/gc";
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"grandchild"}},
                                             {"dir", {gdir}}, {"seconds", {"0"}}}}}, 201);
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(30));
  EXPECT_EQ(done["by_verdict"]["passed"], 1) << done.dump();
  pid_t grandchild = 0;
  std::ifstream(gdir + "/grandchild.pid") >> grandchild;
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(ProcessAlive(grandchild)) << "the setsid grandchild of a passed trial is still running";
}

TEST(Fleet, AStageThatOutlivesItsTimeoutIsATimeout) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "200"});
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-timeout"}}, 201);
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(30));
  EXPECT_EQ(done["by_verdict"]["timeout"], 1) << done.dump();
  json t = FleetTrials(d, sweep["id"])[0];
  EXPECT_EQ(t["signature"], "timeout:slow");
  EXPECT_EQ(t["result"]["failing_stage"], "slow");
}

// A first timeout is tried again; the trial's log keeps both attempts, the second after a line that
// names it, through the API and through `gauntlet logs` (each attempt's worker counts its log from 0).
TEST(Fleet, ARetriedTimeoutKeepsEveryAttemptsLog) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "200"});
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-timeout"}}, 201);
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(30));
  EXPECT_EQ(done["by_verdict"]["timeout"], 1) << done.dump();
  json t = FleetTrials(d, sweep["id"])[0];
  ASSERT_EQ(t["attempt"], 2) << "a first timeout is tried once more: " << t.dump();
  const std::string text = d.Get("/api/v1/trials/" + t["id"].dump() + "/log").body;
  // The worker's own header of the stage, not the stage's print: under load a python that sleeps
  // may not have printed anything within the 1 s limit (no process is expected to start in 1 s).
  const std::string said = "=== stage slow: ";
  const size_t first = text.find(said);
  const size_t mark = text.find("attempt 2 of this trial begins here; the log above is attempt 1's");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(mark, std::string::npos) << "no line labels the second attempt:\n" << text;
  EXPECT_LT(first, mark) << "attempt 1's output comes first:\n" << text;
  EXPECT_NE(text.find(said, mark), std::string::npos) << "attempt 2's output is lost:\n" << text;

  Child logs({GauntletBin(), "logs", t["id"].dump(), "--server", d.url()}, dir.path() + "/logs.out");
  EXPECT_EQ(logs.Wait(std::chrono::seconds(30)), 0) << logs.Log();
  const std::string cli = logs.Log();
  const size_t cli_mark = cli.find("attempt 2 of this trial begins here");
  ASSERT_NE(cli_mark, std::string::npos) << cli;
  EXPECT_LT(cli.find(said), cli_mark) << cli;
  EXPECT_NE(cli.find(said, cli_mark), std::string::npos) << cli;
}

TEST(Fleet, VerdictsFromExitStatusSignalsAndSuiteRules) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto w = StartWorker(dir.path(), d.url(), "w", json::object());
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"prune", false},
                                             {"parameters", {{"mode", {"pass", "fail", "unsupported", "signal"}}}}}, 201);
  d.WaitSweep(sweep["id"]);
  std::map<std::string, json> by_mode;
  for (auto& t : FleetTrials(d, sweep["id"])) by_mode[t["config"]["mode"]] = t;
  EXPECT_EQ(by_mode["pass"]["verdict"], "passed");
  EXPECT_EQ(by_mode["pass"]["result"]["metrics"]["score"]["value"], 1.0);
  EXPECT_EQ(by_mode["fail"]["verdict"], "crashed");
  EXPECT_EQ(by_mode["fail"]["signature"], "crashed:fixture_exploded");  // the suite's own rule
  EXPECT_EQ(by_mode["unsupported"]["verdict"], "unsupported");
  EXPECT_EQ(by_mode["signal"]["verdict"], "crashed");
  EXPECT_EQ(by_mode["signal"]["result"]["signal"], "SIGSEGV");
  EXPECT_EQ(by_mode["pass"]["result"]["fingerprint"]["python"].is_string(), true);
}

TEST(Fleet, AWorkerKilledMidTrialLosesNoTrial) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--lease-ttl-ms", "1500", "--heartbeat-ms", "300"});
  auto a = StartWorker(dir.path(), d.url(), "a", json::object());
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"2"}}}}}, 201);
  const std::string tid = d.GetJson("/api/v1/trials?sweep=" + sweep["id"].dump())["items"][0]["id"].dump();
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/trials/" + tid)["state"] == "running"; }));
  a->Signal(SIGKILL);
  a->Wait(std::chrono::seconds(5));
  auto b = StartWorker(dir.path(), d.url(), "b", json::object());
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(40));
  json t = d.GetJson("/api/v1/trials/" + tid);
  EXPECT_EQ(t["verdict"], "passed") << t.dump();
  EXPECT_EQ(t["node"], "b");
  EXPECT_EQ(t["attempt"], 2);
}

TEST(Fleet, ADaemonKilledMidSweepLosesNothingAndEndsEachTrialOnce) {
  TempDir dir;
  auto d = std::make_unique<Daemon>(dir.path(), FixtureSuites(), std::vector<std::string>{"--lease-ttl-ms", "5000", "--heartbeat-ms", "300"});
  auto w = StartWorker(dir.path(), d->url(), "w", json::object());
  json sweep = d->PostJson("/api/v1/sweeps",
                           {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"2"}}, {"tag", {"a", "b", "c"}}}}},
                           201);
  ASSERT_TRUE(WaitFor([&] { return d->GetJson("/api/v1/sweeps/" + sweep["id"].dump())["by_state"].value("running", 0) >= 1; }));
  d->Kill();
  d->Start();  // same database, same port: the worker's heartbeats and reports find it again
  json done = d->WaitSweep(sweep["id"], std::chrono::seconds(60));
  EXPECT_EQ(done["by_verdict"]["passed"], 3) << done.dump();
  for (auto& t : FleetTrials(*d, sweep["id"])) EXPECT_EQ(t["result"]["attempt"], t["attempt"]) << t.dump();
}

TEST(Fleet, AStaleLeaseGets409) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--lease-ttl-ms", "300"});
  auto reg = d.PostJson("/api/v1/nodes/register", {{"name", "manual"}, {"inventory", json::object()}});
  const std::string node = reg["node"].dump();
  json sweep = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  json g1 = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}});
  ASSERT_TRUE(g1.contains("lease")) << g1.dump();
  const std::string tid = g1["trial"].dump();
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/trials/" + tid)["state"] == "queued"; }, std::chrono::seconds(10)));
  json g2 = d.PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}});
  ASSERT_EQ(g2["trial"], g1["trial"]);
  EXPECT_GT(g2["epoch"].get<int64_t>(), g1["epoch"].get<int64_t>());
  const std::string old = g1["lease"];
  EXPECT_EQ(d.Post("/api/v1/leases/" + old + "/result", json{{"verdict", "passed"}}.dump()).status, 409);
  EXPECT_EQ(d.Post("/api/v1/leases/" + old + "/log?offset=0", "late").status, 409);
  EXPECT_EQ(d.Post("/api/v1/leases/" + old + "/heartbeat", "{}").status, 409);
  const std::string cur = g2["lease"];
  EXPECT_EQ(d.Post("/api/v1/leases/" + cur + "/log?offset=0", "hello").status, 200);
  EXPECT_EQ(d.Post("/api/v1/leases/" + cur + "/result", json{{"verdict", "passed"}}.dump()).status, 200);
  EXPECT_EQ(d.Post("/api/v1/leases/" + cur + "/result", json{{"verdict", "passed"}}.dump()).status, 200);  // idempotent
  EXPECT_EQ(d.Get("/api/v1/trials/" + tid + "/log").body, "hello");
  EXPECT_EQ(d.PostJson("/api/v1/nodes/" + node + "/drain", json::object())["state"], "draining");
  json nodes = d.GetJson("/api/v1/nodes");
  EXPECT_EQ(nodes["items"][0]["state"], "draining");
}

TEST(Fleet, TheWorkerBuffersItsReportWhileTheDaemonIsDown) {
  TempDir dir;
  auto d = std::make_unique<Daemon>(dir.path(), FixtureSuites(), std::vector<std::string>{"--lease-ttl-ms", "30000"});
  auto w = StartWorker(dir.path(), d->url(), "w", json::object());
  json sweep = d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"1.5"}}}}}, 201);
  const std::string tid = d->GetJson("/api/v1/trials?sweep=" + sweep["id"].dump())["items"][0]["id"].dump();
  ASSERT_TRUE(WaitFor([&] { return d->GetJson("/api/v1/trials/" + tid)["state"] == "running"; }));
  d->Stop();
  // The trial finishes while the daemon is away; its report waits in the worker.
  ASSERT_TRUE(WaitFor([&] { return w->Log().find("cannot") != std::string::npos || true; }));
  d->Start();
  json done = d->WaitSweep(sweep["id"], std::chrono::seconds(40));
  EXPECT_EQ(done["by_verdict"]["passed"], 1) << done.dump();
  EXPECT_EQ(d->GetJson("/api/v1/trials/" + tid)["attempt"], 1);
}

}  // namespace
}  // namespace gauntlet::test

namespace gauntlet::test {
namespace {

// A worker whose daemon goes away says so (once, with why), and says when it is back; it takes
// trials again without a restart of its own.
TEST(Fleet, AWorkerSaysWhenItLosesTheDaemonAndWhenItIsBack) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object());
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == 1; }));
  EXPECT_EQ(d.Stop(), 0);
  const std::string lost = "lost the daemon at " + d.url() + ": ";
  ASSERT_TRUE(WaitFor([&] { return w->Log().find(lost) != std::string::npos; }, std::chrono::seconds(60))) << w->Log();
  d.Start();  // the same port and database
  ASSERT_TRUE(WaitFor([&] { return w->Log().find("reached the daemon at " + d.url() + " again after ") != std::string::npos; },
                      std::chrono::seconds(60)))
      << w->Log();
  // Said once while it lasted, and the worker serves again.
  const std::string log = w->Log();
  EXPECT_EQ(log.find(lost, log.find(lost) + 1), std::string::npos) << log;
  json s = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  EXPECT_TRUE(d.WaitSweep(s["id"])["finished"].get<bool>());
}

}  // namespace
}  // namespace gauntlet::test
