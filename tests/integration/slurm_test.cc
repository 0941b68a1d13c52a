// `gauntlet slurm`: the planner on its own (no Slurm needed), then the launcher against a real
// one-node Slurm cluster (scripts/slurm-test-env.sh: munged, slurmctld, slurmd on loopback) with a
// real daemon and no static worker. Skips, saying exactly why, where Slurm can't run here.
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "slurm/slurm.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------- planner (pure)

slurm::SlurmConfig Config(const json& j) {
  auto c = slurm::ParseSlurmConfig(j);
  EXPECT_TRUE(c.ok()) << c.status().field() << ": " << c.status().message();
  return c.ok() ? *c : slurm::SlurmConfig{};
}

const json kTwoPartitions = {
    {"partitions",
     {{{"name", "cpu"}, {"max_trials", 2}, {"max_jobs", 3}},
      {{"name", "h200"}, {"partition", "gpu"}, {"gpus", 2}, {"gres_type", "h200"}, {"constraint", "h200"},
       {"gpu_name", "NVIDIA H200"}, {"arch", "sm_90"}, {"memory_mb", 143771}, {"max_jobs", 2},
       {"time_limit", "02:00:00"}, {"labels", {{"pool", "hopper"}}}}}}};

Need GpuNeed(int gpus, const std::string& arch) {
  Need n;
  n.gpus = gpus;
  n.arch = {arch};
  return n;
}

std::vector<slurm::SlurmQueuedTrial> QueuedTrials(int n, const Need& need, int64_t first = 1) {
  std::vector<slurm::SlurmQueuedTrial> out;
  for (int i = 0; i < n; ++i) out.push_back({first + i, need});
  return out;
}

TEST(SlurmPlan, SubmitsNoMoreJobsThanTheQueueNeedsAndRoutesByHardware) {
  slurm::SlurmConfig cfg = Config(kTwoPartitions);
  auto q = QueuedTrials(3, Need{});                           // CPU: 2 per job -> 2 jobs
  for (auto& t : QueuedTrials(3, GpuNeed(1, "sm_90"), 10)) q.push_back(t);  // 1 GPU each, 2 per job -> 2 jobs
  for (auto& t : QueuedTrials(2, GpuNeed(1, "sm_100"), 20)) q.push_back(t);  // no partition has sm_100
  slurm::SlurmPlan p = slurm::PlanSlurmJobs(cfg, q, {}, {});
  EXPECT_EQ(p.submit, (std::map<std::string, int>{{"cpu", 2}, {"h200", 2}})) << p.report.dump();
  EXPECT_TRUE(p.cancel.empty());
  EXPECT_EQ(p.report["unplaceable"], 2);
  EXPECT_EQ(p.report["unplaceable_trials"], json({20, 21}));
}

TEST(SlurmPlan, CapsAtMaxJobsAndCountsJobsAlreadyThere) {
  slurm::SlurmConfig cfg = Config(kTwoPartitions);
  auto q = QueuedTrials(20, Need{});  // would need 10 jobs; max_jobs 3, one already pending
  slurm::SlurmPlan p = slurm::PlanSlurmJobs(cfg, q, {}, {{7, "cpu", "PENDING"}});
  EXPECT_EQ(p.submit["cpu"], 2);
  EXPECT_EQ(p.report["partitions"]["cpu"]["waiting_for_room"], 20 - 3 * 2);
  // A job that is running but hasn't registered yet counts as room for 2.
  p = slurm::PlanSlurmJobs(cfg, QueuedTrials(2, Need{}), {}, {{8, "cpu", "RUNNING"}});
  EXPECT_TRUE(p.submit.empty()) << p.report.dump();
}

TEST(SlurmPlan, IdleWorkersThatFitTakeTheTrialsAndEmptyPendingJobsAreCancelled) {
  slurm::SlurmConfig cfg = Config(kTwoPartitions);
  slurm::FleetNode idle;
  idle.id = 1;
  idle.state = NodeState::kOnline;
  idle.waiting = true;  // a static CPU worker, long-polling
  auto q = QueuedTrials(4, Need{});
  slurm::SlurmPlan p = slurm::PlanSlurmJobs(cfg, q, {idle}, {{30, "cpu", "PENDING"}, {31, "cpu", "PENDING"}});
  EXPECT_TRUE(p.submit.empty());
  EXPECT_EQ(p.cancel, (std::vector<int64_t>{30, 31}));
  EXPECT_EQ(p.report["covered_by_idle_workers"], 4);
  // The queue drained: pending jobs go, running ones are left to exit when idle.
  p = slurm::PlanSlurmJobs(cfg, {}, {}, {{40, "cpu", "RUNNING"}, {41, "h200", "PENDING"}, {42, "h200", "PENDING"}});
  EXPECT_EQ(p.cancel, (std::vector<int64_t>{41, 42}));
  // A registered worker of ours with room takes the trial before any new job.
  slurm::FleetNode ours;
  ours.state = NodeState::kOnline;
  ours.slurm_job = 40;
  ours.running = 1;
  p = slurm::PlanSlurmJobs(cfg, QueuedTrials(1, Need{}), {ours}, {{40, "cpu", "RUNNING"}});
  EXPECT_TRUE(p.submit.empty()) << p.report.dump();
  ours.running = 2;  // full: a new job
  p = slurm::PlanSlurmJobs(cfg, QueuedTrials(1, Need{}), {ours}, {{40, "cpu", "RUNNING"}});
  EXPECT_EQ(p.submit["cpu"], 1) << p.report.dump();
}

TEST(SlurmPlan, ScriptAndSbatchArgumentsCarryGresConstraintTimeAndLabels) {
  slurm::SlurmConfig cfg = Config(kTwoPartitions);
  cfg.log_dir = "/var/log/g";
  cfg.workdir = "/scratch/g";
  const slurm::SlurmPartition& h = cfg.partitions[1];
  auto args = slurm::SbatchArgs(cfg, h, "site");
  std::set<std::string> a(args.begin(), args.end());
  for (const char* want : {"--parsable", "--job-name=gauntlet-site-h200", "--gres=gpu:h200:2", "--constraint=h200",
                           "--time=02:00:00", "--partition=gpu", "--output=/var/log/g/gauntlet-site-h200-%j.out"})
    EXPECT_TRUE(a.count(want)) << want;
  std::string s = slurm::SlurmJobScript(cfg, h, "/opt/gauntlet/bin/gauntlet", "http://gauntlet:8080", "site");
  EXPECT_NE(s.find("exec '/opt/gauntlet/bin/gauntlet' worker --server 'http://gauntlet:8080'"), std::string::npos) << s;
  EXPECT_NE(s.find("--labels 'pool=hopper,slurm_launcher=site,slurm_partition=h200'\",slurm_job=${SLURM_JOB_ID}\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("--exit-when-idle"), std::string::npos);
  EXPECT_EQ(s.find("--token"), std::string::npos) << "the token never goes on a command line";
}

TEST(SlurmPlan, ConfigErrorsNameTheField) {
  auto c = slurm::ParseSlurmConfig({{"partitions", {{{"name", "g"}, {"gpus", 1}}}}});
  EXPECT_FALSE(c.ok());
  c = slurm::ParseSlurmConfig({{"partitions", {{{"name", "g"}, {"frobnicate", 1}}}}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().field(), "partitions[0].frobnicate");
  c = slurm::ParseSlurmConfig({{"partitions", {{{"name", "g"}, {"labels", {{"slurm_job", "1"}}}}}}});
  EXPECT_FALSE(c.ok());
}

// ---------------------------------------------------------------- against a real Slurm

struct CommandResult {
  int code = -1;
  std::string out;
};
CommandResult Sh(const std::string& cmd) {
  CommandResult r;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.out.append(buf.data(), n);
  int st = pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The private cluster: `up` in the constructor, `down` (cancel jobs, stop the three daemons by
// their pid files) in the destructor, whatever the test did.
class SlurmCluster {
 public:
  explicit SlurmCluster(const std::string& dir) : dir_(dir) {
    auto r = Sh("bash " + SourceDir() + "/scripts/slurm-test-env.sh up " + dir_);
    code_ = r.code;
    out_ = r.out;
    if (ok()) setenv("SLURM_CONF", (dir_ + "/slurm.conf").c_str(), 1);
    for (const char* f : {"munged.pid", "slurmctld.pid", "slurmd.pid"}) {
      pid_t pid = 0;
      std::ifstream(dir_ + "/" + f) >> pid;
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~SlurmCluster() {
    Sh("bash " + SourceDir() + "/scripts/slurm-test-env.sh down " + dir_);
    unsetenv("SLURM_CONF");
  }
  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string& output() const { return out_; }
  const std::vector<pid_t>& pids() const { return pids_; }
  // Job ids of ours in squeue (any state), by job name prefix.
  std::vector<std::pair<int64_t, std::string>> Jobs() {
    std::vector<std::pair<int64_t, std::string>> out;
    auto r = Sh("squeue --noheader --format='%i %T %j'");
    std::istringstream in(r.out);
    int64_t id;
    std::string state, name;
    while (in >> id >> state >> name)
      if (name.rfind("gauntlet-", 0) == 0) out.emplace_back(id, state);
    return out;
  }

 private:
  std::string dir_, out_;
  int code_ = -1;
  std::vector<pid_t> pids_;
};

// What the phases of the scenario below share: the cluster, the daemon, the launcher and its report.
struct Scenario {
  TempDir& dir;
  SlurmCluster& slurm;
  Daemon& d;
  Child& launcher;
  std::string state;  // the launcher's --state-file
  json report() const {
    std::ifstream in(state);
    json j;
    try {
      in >> j;
    } catch (...) {
    }
    return j;
  }
};

// 1. A drained Slurm node: the job pends. When the queue drains (the sweep is cancelled), the
//    launcher cancels its pending job.
void PendingJobIsCancelledWhenTheQueueDrains(Scenario& sc) {
  auto& [dir, slurm, d, launcher, state] = sc;
  auto report = [&] { return sc.report(); };
  ASSERT_EQ(Sh("scontrol update nodename=$(hostname -s) state=drain reason=gauntlet-test").code, 0);
  json a = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {"a", "b"}}}}},
                      201);
  ASSERT_TRUE(WaitFor([&] {
    auto jobs = slurm.Jobs();
    return jobs.size() == 1 && jobs[0].second == "PENDING";
  })) << launcher.Log();
  // Two trials, two per job: one job, and no more however many passes run meanwhile.
  ASSERT_TRUE(WaitFor([&] { return report()["partitions"]["cpu"]["jobs"]["pending"] == 1; })) << report().dump();
  EXPECT_EQ(slurm.Jobs().size(), 1u);
  // The pending job shows in the daemon's nodes view, under the launcher that submitted it.
  ASSERT_TRUE(WaitFor([&] {
    json n = d.GetJson("/api/v1/nodes");
    for (auto& l : n["launchers"])
      for (auto& j : l["jobs"])
        if (j.value("state", "") == "PENDING") return true;
    return false;
  })) << d.GetJson("/api/v1/nodes").dump();
  d.PostJson("/api/v1/sweeps/" + a["id"].dump() + "/cancel", json::object());
  ASSERT_TRUE(WaitFor([&] { return slurm.Jobs().empty(); })) << launcher.Log();
  // The launcher logs the cancel once scancel has returned, which can be after Slurm shows no job.
  EXPECT_TRUE(WaitFor([&] { return launcher.Log().find("cancelled pending job") != std::string::npos; }))
      << launcher.Log();

}

// 2. The node is back. Three CPU trials (2 per job: 2 jobs), one sm_90 trial (the GPU entry) and one
//    sm_100 trial that no partition offers (no job for it; it stays queued).
void TrialsRunOnLaunchedWorkers(Scenario& sc, std::set<int64_t>* seen_jobs) {
  auto& [dir, slurm, d, launcher, state] = sc;
  auto report = [&] { return sc.report(); };
  ASSERT_EQ(Sh("scontrol update nodename=$(hostname -s) state=resume").code, 0);
  json b = d.PostJson("/api/v1/sweeps",
                      {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {"x", "y", "z"}}}}}, 201);
  json g = d.PostJson("/api/v1/sweeps",
                      {{"suite", "fixture-gpu"}, {"parameters", {{"mode", {"pass"}}, {"i", {"1"}}}},
                       {"targets", {{{"arch", "sm_90"}}, {{"arch", "sm_100"}}}}},
                      201);
    json nodes_with_jobs;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (auto& [id, st] : slurm.Jobs()) seen_jobs->insert(id);
        // While they run, the launcher's workers are in GET /api/v1/nodes with their job ids.
        const json nodes = d.GetJson("/api/v1/nodes");  // the loop below must not outlive it
        for (auto& n : nodes["items"])
          if (n["labels"].contains("slurm_job")) nodes_with_jobs[n["name"].get<std::string>()] = n["labels"];
        json sb = d.GetJson("/api/v1/sweeps/" + b["id"].dump());
        json sg = d.GetJson("/api/v1/sweeps/" + g["id"].dump());
        return sb["finished"] == true && sg["by_state"].value("done", 0) == 1;
      },
      std::chrono::seconds(120)))
      << launcher.Log();
  json sb = d.GetJson("/api/v1/sweeps/" + b["id"].dump());
  EXPECT_EQ(sb["by_verdict"]["passed"], 3) << sb.dump();
  std::set<std::string> trial_nodes;
  const json done_trials = d.GetJson("/api/v1/trials?limit=100&state=done");
  ASSERT_EQ(done_trials["items"].size(), 2u + 3u + 1u) << done_trials.dump();  // a: cancelled; b; g's sm_90
  for (auto& t : done_trials["items"]) {
    if (t["verdict"] == "cancelled") continue;
    EXPECT_EQ(t["verdict"], "passed") << t.dump();
    trial_nodes.insert(t["node"].get<std::string>());
    if (t["suite"] == "fixture-gpu") EXPECT_EQ(t["hardware"], "NVIDIA H200 · sm_90 · x1");
  }
  for (auto& n : trial_nodes) {
    ASSERT_TRUE(nodes_with_jobs.contains(n)) << n << " is not a Slurm-launched worker: " << nodes_with_jobs.dump();
    EXPECT_EQ(nodes_with_jobs[n]["slurm_launcher"], "t");
    EXPECT_TRUE(seen_jobs->count(std::stoll(nodes_with_jobs[n]["slurm_job"].get<std::string>())));
  }
  // Never more jobs than the queue needed: 2 CPU jobs (3 trials, 2 per job) and 1 GPU job.
  int cpu_jobs = 0, gpu_jobs = 0;
  for (auto& [name, labels] : nodes_with_jobs.items()) (labels["slurm_partition"] == "cpu" ? cpu_jobs : gpu_jobs)++;
  EXPECT_LE(cpu_jobs, 2) << nodes_with_jobs.dump();
  EXPECT_EQ(gpu_jobs, 1) << nodes_with_jobs.dump();
  // The sm_100 trial: no partition offers it, so it waits, named in the launcher's report.
  ASSERT_TRUE(WaitFor([&] { return report()["unplaceable"] == 1; })) << report().dump();

}

// 3. Idle, the workers exit and their jobs end.
void IdleWorkersExit(Scenario& sc, const std::set<int64_t>& seen_jobs) {
  auto& [dir, slurm, d, launcher, state] = sc;
  ASSERT_TRUE(WaitFor([&] { return slurm.Jobs().empty(); }, std::chrono::seconds(60)))
      << "Slurm-launched workers did not exit when idle";
  EXPECT_LE(seen_jobs.size(), 3u);
  for (auto& f : fs::directory_iterator(dir.path() + "/slurm-log"))
    if (f.path().extension() == ".out") {
      std::ifstream in(f.path());
      std::string log((std::istreambuf_iterator<char>(in)), {});
      EXPECT_NE(log.find("idle"), std::string::npos) << f.path() << ":\n" << log;
    }
}

TEST(Slurm, TrialsRunOnSlurmLaunchedWorkersWhichThenExit) {
  TempDir dir;
  std::vector<pid_t> slurm_pids;
  {
    SlurmCluster slurm(dir.path() + "/slurm");
    if (!slurm.ok()) {
      // 3: can't install slurm-wlm/munge here; 4: a daemon didn't start (the output says which).
      GTEST_SKIP() << "Slurm can't run here: scripts/slurm-test-env.sh up exited " << slurm.code()
                   << ":\n" << slurm.output();
    }
    slurm_pids = slurm.pids();
    ASSERT_EQ(slurm_pids.size(), 3u);

    Daemon d(dir.path(), FixtureSuites());
    // One inventory declaring an H200 for the GPU partition's workers: this machine has no GPU, but
    // the job still asks Slurm for --gres=gpu:1 (counted GRES) and --constraint.
    const std::string inv = dir.Write("h200.json", json({{"gpus", {{{"index", 0}, {"name", "NVIDIA H200"},
                                                                     {"uuid", "GPU-slurm-0"},
                                                                     {"compute_capability", "9.0"},
                                                                     {"memory_mb", 143771}}}}})
                                                       .dump());
    const json worker_args = {"--preflight", "off", "--wait-s", "1"};
    const std::string cfg = dir.Write(
        "slurm.json",
        json({{"workdir", dir.path() + "/slurm-work"},
              {"log_dir", dir.path() + "/slurm-log"},
              {"partitions",
               {{{"name", "cpu"}, {"max_trials", 2}, {"max_jobs", 2}, {"cpus", 1}, {"time_limit", "00:10:00"},
                 {"idle_exit_s", 1}, {"worker_args", worker_args}},
                {{"name", "h200"}, {"gpus", 1}, {"constraint", "gauntlet-test"}, {"inventory", inv},
                 {"max_jobs", 1}, {"time_limit", "00:10:00"}, {"idle_exit_s", 1}, {"worker_args", worker_args},
                 {"labels", {{"pool", "hopper"}}}}}}})
            .dump());
    const std::string state = dir.path() + "/launcher-state.json";
    Child launcher({GauntletBin(), "slurm", "--config", cfg, "--server", d.url(), "--name", "t", "--interval-s", "0.2",
                    "--state-file", state},
                   dir.path() + "/launcher.log");

    Scenario sc{dir, slurm, d, launcher, state};
    PendingJobIsCancelledWhenTheQueueDrains(sc);
    if (HasFatalFailure()) return;
    std::set<int64_t> seen_jobs;
    TrialsRunOnLaunchedWorkers(sc, &seen_jobs);
    if (HasFatalFailure()) return;
    IdleWorkersExit(sc, seen_jobs);

    launcher.Signal(SIGTERM);
    EXPECT_EQ(launcher.Wait(std::chrono::seconds(20)), 0) << launcher.Log();
  }
  // The cluster's destructor stopped munged, slurmctld and slurmd.
  for (pid_t pid : slurm_pids) EXPECT_TRUE(WaitFor([&] { return kill(pid, 0) != 0; }, std::chrono::seconds(10))) << pid;
}

}  // namespace
}  // namespace gauntlet::test
