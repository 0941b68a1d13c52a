#include "slurm/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/self_exe.h"
#include "core/sweep.h"
#include "core/yaml_json.h"
#include "http/http.h"
#include "net/client_config.h"
#include "net/http_client.h"
#include "proc/process.h"

extern char** environ;

namespace gauntlet::slurm {
using proc::FindProgram;
using proc::Process;
using proc::ProcessSpec;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};
int g_wake[2] = {-1, -1};
void OnSignal(int) {
  g_stop = true;
  if (g_wake[1] >= 0) {
    char c = 1;
    [[maybe_unused]] auto n = write(g_wake[1], &c, 1);
  }
}

struct ToolResult {
  int code = -1;
  std::string output;
};

// Runs a Slurm client (sbatch, squeue, scancel) without a shell, with this process's environment
// plus `extra`, and returns its exit code and merged output.
ToolResult RunTool(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra = {}) {
  ProcessSpec spec;
  spec.argv = argv;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) spec.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (auto& [k, v] : extra) spec.env[k] = v;
  spec.argv[0] = FindProgram(argv[0], spec.env.count("PATH") ? spec.env["PATH"] : "/usr/bin:/bin");
  ToolResult r;
  auto proc = Process::Start(spec);
  if (!proc.ok()) {
    r.output = proc.status().message();
    return r;
  }
  auto info = (*proc)->Run(std::chrono::steady_clock::now() + std::chrono::seconds(60),
                           [&](std::string_view chunk) { r.output.append(chunk); }, [] { return false; });
  r.code = info.exit_code.value_or(-1);
  return r;
}

struct LauncherOptions {
  std::string config_file;
  net::Conn conn;
  std::string worker_token;   // for the jobs' workers; default: the launcher's token
  std::string worker_server;  // the URL the jobs' workers use; default: --server
  std::string exe;            // gauntlet on the compute nodes; default: this executable
  std::string name = "slurm";
  double interval_s = 10;
  bool once = false, dry_run = false, keep_pending = false;
  std::string state_file;
  std::string sbatch = "sbatch", squeue = "squeue", scancel = "scancel";
};

class Launcher {
 public:
  Launcher(LauncherOptions o, SlurmConfig cfg) : o_(std::move(o)), cfg_(std::move(cfg)), client_(o_.conn.server, o_.conn.token) {}

  // One pass: read, plan, act. Returns false when the daemon or Slurm couldn't be read (the next
  // pass retries); the plan's report goes to the log, the state file and (with --once) stdout.
  bool Pass(json* report) {
    std::vector<SlurmQueuedTrial> queued;
    if (!ReadQueue(&queued)) return false;
    std::vector<FleetNode> nodes;
    if (!ReadNodes(&nodes)) return false;
    std::vector<SlurmJob> jobs;
    if (!ReadJobs(&jobs)) return false;
    SlurmPlan plan = PlanSlurmJobs(cfg_, queued, nodes, jobs);
    json submitted = json::array(), cancelled = json::array();
    for (auto& [entry, n] : plan.submit)
      for (int i = 0; i < n; ++i) {
        auto id = Submit(entry);
        if (id) submitted.push_back({{"job", *id}, {"partition", entry}});
      }
    for (int64_t id : plan.cancel)
      if (Cancel(id)) cancelled.push_back(id);
    json jl = json::array();
    for (auto& j : jobs) jl.push_back({{"job", j.id}, {"partition", j.entry}, {"state", j.state}});
    *report = plan.report;
    (*report)["launcher"] = o_.name;
    (*report)["jobs"] = jl;
    (*report)["submitted"] = submitted;
    (*report)["cancelled"] = cancelled;
    (*report)["dry_run"] = o_.dry_run;
    if (!submitted.empty() || !cancelled.empty() || plan.report["unplaceable"].get<int>() != last_unplaceable_)
      spdlog::info("slurm: {} queued, {} for idle workers, {} no partition fits; submitted {}, cancelled {}",
                   queued.size(), plan.report["covered_by_idle_workers"].get<int>(),
                   plan.report["unplaceable"].get<int>(), submitted.dump(), cancelled.dump());
    last_unplaceable_ = plan.report["unplaceable"].get<int>();
    WriteState(*report);
    // Tell the daemon, so its nodes view shows the jobs still pending in Slurm (best effort: the
    // next pass says it again).
    json shown = *report;
    shown["kind"] = "slurm";
    auto sent = client_.Send("PUT", "/api/v1/launchers/" + http::UrlEncode(o_.name), shown.dump(), "application/json",
                             std::chrono::seconds(10));
    IgnoreError(sent.status(), "best effort: the next pass reports the jobs again");
    return true;
  }

  // On exit: pending jobs would start workers nobody watches for; running ones finish their trials
  // and exit when idle.
  void CancelPending() {
    std::vector<SlurmJob> jobs;
    if (!ReadJobs(&jobs)) return;
    for (auto& j : jobs)
      if (j.state == "PENDING") Cancel(j.id);
  }

  Status Prepare() {
    if (o_.dry_run) return Status::Ok();
    std::error_code ec;
    fs::create_directories(cfg_.log_dir, ec);
    fs::create_directories(cfg_.workdir, ec);
    for (auto& p : cfg_.partitions) {
      const std::string path = (fs::path(cfg_.log_dir) / (SlurmJobName(o_.name, p.name) + ".sbatch")).string();
      std::ofstream out(path, std::ios::trunc);
      out << SlurmJobScript(cfg_, p, o_.exe, o_.worker_server, o_.name);
      if (!out) return Status::Internal("cannot write the job script " + path);
      out.close();
      fs::permissions(path, fs::perms::owner_all | fs::perms::group_read, ec);
      scripts_[p.name] = path;
    }
    return Status::Ok();
  }

 private:
  std::optional<json> GetJson(const std::string& target) {
    auto r = client_.Send("GET", target, "", "application/json", std::chrono::seconds(30));
    if (!r.ok()) {
      spdlog::warn("slurm: {} {}: {}", o_.conn.server, target, r.status().message());
      return std::nullopt;
    }
    if (r->status != 200) {
      spdlog::warn("slurm: GET {}: HTTP {}: {}", target, r->status, r->body.substr(0, 300));
      return std::nullopt;
    }
    try {
      return json::parse(r->body);
    } catch (const std::exception& e) {
      spdlog::warn("slurm: GET {}: {}", target, e.what());
      return std::nullopt;
    }
  }

  // The requirement of (sweep, target), from the sweep's request and the suite's `requires`;
  // both are immutable once stored, so they are fetched once.
  std::optional<Need> NeedOf(const json& trial) {
    const int64_t sweep = trial.value("sweep", int64_t{0});
    const int target = trial.value("target", 0);
    auto key = std::make_pair(sweep, target);
    if (auto it = needs_.find(key); it != needs_.end()) return it->second;
    auto sw = GetJson("/api/v1/sweeps/" + std::to_string(sweep));
    if (!sw) return std::nullopt;
    auto req = ParseSweepRequest(sw->value("request", json::object()));
    if (!req.ok()) {
      spdlog::warn("slurm: sweep {}: {}", sweep, req.status().message());
      return std::nullopt;
    }
    const std::string suite = trial.value("suite", "");
    const std::string sk = suite + "@" + std::to_string(trial.value("suite_version", 0));
    if (!suite_reqs_.count(sk)) {
      auto s = GetJson("/api/v1/suites/" + http::UrlEncode(suite) + "?version=" +
                       std::to_string(trial.value("suite_version", 0)));
      if (!s) return std::nullopt;
      Requirements r;
      if (Status st = ParseRequirements(s->value("requires", json::object()), "requires", &r); !st.ok()) {
        spdlog::warn("slurm: suite {}: {}", sk, st.message());
        return std::nullopt;
      }
      suite_reqs_[sk] = r;
    }
    Target t = target < static_cast<int>(req->targets.size()) ? req->targets[target] : Target{};
    Need n = MakeNeed(suite_reqs_[sk], t.req, t.gpu_name);
    needs_[key] = n;
    return n;
  }

  bool ReadQueue(std::vector<SlurmQueuedTrial>* out) {
    std::string after;
    for (;;) {
      auto page = GetJson("/api/v1/trials?state=queued&limit=5000" + (after.empty() ? "" : "&after=" + after));
      if (!page) return false;
      const json items = page->value("items", json::array());
      for (auto& t : items) {
        auto need = NeedOf(t);
        if (!need) continue;  // logged; the trial is looked at again next pass
        out->push_back({t.value("id", int64_t{0}), *need});
      }
      if (!page->contains("next") || (*page)["next"].is_null()) return true;
      after = (*page)["next"].dump();
    }
  }

  bool ReadNodes(std::vector<FleetNode>* out) {
    auto j = GetJson("/api/v1/nodes");
    if (!j) return false;
    const json items = j->value("items", json::array());
    for (auto& n : items) {
      FleetNode f;
      f.id = n.value("id", int64_t{0});
      f.name = n.value("name", "");
      f.state = ParseNodeState(n.value("state", "")).value_or(NodeState::kOffline);
      auto inv = ParseInventory(n.value("inventory", json::object()));
      if (inv.ok()) f.inv = *inv;
      const json labels = n.value("labels", json::object());  // items() must not outlive it
      for (auto& [k, v] : labels.items())
        if (v.is_string()) f.inv.labels[k] = v.get<std::string>();
      f.busy_gpus = n.contains("busy_gpus") && n["busy_gpus"].is_array() ? static_cast<int>(n["busy_gpus"].size())
                                                                         : n.value("busy_gpus", 0);
      f.running = static_cast<int>(n.value("running", json::array()).size());
      f.waiting = n.value("waiting", false);
      if (f.inv.labels.count("slurm_job") && f.inv.labels["slurm_launcher"] == o_.name) {
        try {
          f.slurm_job = std::stoll(f.inv.labels["slurm_job"]);
        } catch (...) {
        }
      }
      out->push_back(std::move(f));
    }
    return true;
  }

  // This launcher's jobs: squeue by job name (gauntlet-NAME-ENTRY), so a restarted launcher finds
  // the jobs of the one before it.
  bool ReadJobs(std::vector<SlurmJob>* out) {
    std::string names;
    std::map<std::string, std::string> entry_of;
    for (auto& p : cfg_.partitions) {
      const std::string n = SlurmJobName(o_.name, p.name);
      entry_of[n] = p.name;
      names += (names.empty() ? "" : ",") + n;
    }
    auto r = RunTool({o_.squeue, "--noheader", "--me", "--name=" + names, "--format=%i|%T|%j"});
    if (r.code != 0) {
      spdlog::warn("slurm: squeue failed ({}): {}", r.code, r.output.substr(0, 300));
      return false;
    }
    std::istringstream in(r.output);
    std::string line;
    while (std::getline(in, line)) {
      auto a = line.find('|'), b = line.rfind('|');
      if (a == std::string::npos || b == a) continue;
      SlurmJob j;
      try {
        j.id = std::stoll(line.substr(0, a));
      } catch (...) {
        continue;
      }
      j.state = line.substr(a + 1, b - a - 1);
      auto it = entry_of.find(line.substr(b + 1));
      if (it == entry_of.end()) continue;
      j.entry = it->second;
      out->push_back(j);
    }
    return true;
  }

  std::optional<int64_t> Submit(const std::string& entry) {
    const SlurmPartition* p = nullptr;
    for (auto& c : cfg_.partitions)
      if (c.name == entry) p = &c;
    std::vector<std::string> argv = {o_.sbatch};
    for (auto& a : SbatchArgs(cfg_, *p, o_.name)) argv.push_back(a);
    if (o_.dry_run) {
      argv.push_back((fs::path(cfg_.log_dir) / (SlurmJobName(o_.name, entry) + ".sbatch")).string());
      std::string line;
      for (auto& a : argv) line += (line.empty() ? "" : " ") + a;
      spdlog::info("slurm: dry run: {}", line);
      return std::nullopt;
    }
    argv.push_back(scripts_[entry]);
    std::map<std::string, std::string> env;
    // sbatch exports its environment to the job (Slurm's default --export=ALL): the worker reads
    // its token from there, so it never shows on a command line.
    if (!o_.worker_token.empty()) env["GAUNTLET_TOKEN"] = o_.worker_token;
    auto r = RunTool(argv, env);
    // --parsable prints "ID" or "ID;CLUSTER" on the last line.
    int64_t id = 0;
    std::istringstream in(r.output);
    std::string line;
    while (std::getline(in, line)) {
      try {
        size_t used = 0;
        int64_t v = std::stoll(line, &used);
        if (used > 0 && (used == line.size() || line[used] == ';')) id = v;
      } catch (...) {
      }
    }
    if (r.code != 0 || id == 0) {
      spdlog::error("slurm: sbatch for {} failed ({}): {}", entry, r.code, r.output.substr(0, 500));
      return std::nullopt;
    }
    spdlog::info("slurm: submitted job {} ({})", id, entry);
    return id;
  }

  bool Cancel(int64_t id) {
    if (o_.dry_run) {
      spdlog::info("slurm: dry run: scancel --state=PENDING {}", id);
      return false;
    }
    // Only while still pending: one that started meanwhile runs its worker, which exits when idle.
    auto r = RunTool({o_.scancel, "--state=PENDING", std::to_string(id)});
    if (r.code != 0) {
      spdlog::warn("slurm: scancel {} failed ({}): {}", id, r.code, r.output.substr(0, 300));
      return false;
    }
    spdlog::info("slurm: cancelled pending job {}", id);
    return true;
  }

  void WriteState(const json& report) {
    if (o_.state_file.empty()) return;
    const std::string tmp = o_.state_file + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << report.dump(2) << "\n";
    }
    std::error_code ec;
    fs::rename(tmp, o_.state_file, ec);
  }

  LauncherOptions o_;
  SlurmConfig cfg_;
  net::Client client_;
  std::map<std::pair<int64_t, int>, Need> needs_;
  std::map<std::string, Requirements> suite_reqs_;
  std::map<std::string, std::string> scripts_;
  int last_unplaceable_ = -1;
};

int RunLauncher(LauncherOptions o) {
  net::Resolve(&o.conn);
  if (o.worker_token.empty()) o.worker_token = o.conn.token;
  if (o.worker_server.empty()) o.worker_server = o.conn.server;
  if (o.exe.empty()) o.exe = SelfExe();
  auto j = ReadJsonOrYaml(o.config_file);
  if (!j.ok()) {
    std::cerr << "gauntlet slurm: " << j.status().message() << "\n";
    return 2;
  }
  auto cfg = ParseSlurmConfig(*j);
  if (!cfg.ok()) {
    std::cerr << "gauntlet slurm: " << o.config_file << ": " << cfg.status().field() << ": " << cfg.status().message()
              << "\n";
    return 2;
  }
  // Jobs run in the submitter's folder on another host: paths they see must be absolute.
  cfg->log_dir = fs::absolute(cfg->log_dir).string();
  cfg->workdir = fs::absolute(cfg->workdir).string();
  for (auto& p : cfg->partitions)
    if (!p.inventory.empty()) p.inventory = fs::absolute(p.inventory).string();
  Launcher l(o, *cfg);
  if (Status s = l.Prepare(); !s.ok()) {
    std::cerr << "gauntlet slurm: " << s.message() << "\n";
    return 2;
  }
  if (o.once) {
    json report;
    if (!l.Pass(&report)) return 1;
    std::cout << report.dump(2) << "\n";
    return 0;
  }
  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) return 1;
  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  spdlog::info("slurm: launcher '{}' watching {} every {}s ({} partition entries)", o.name, o.conn.server, o.interval_s,
               cfg->partitions.size());
  while (!g_stop) {
    json report;
    l.Pass(&report);
    // Wait for the next pass, or a signal (the self-pipe wakes the poll at once).
    pollfd pfd{g_wake[0], POLLIN, 0};
    poll(&pfd, 1, static_cast<int>(o.interval_s * 1000));
  }
  if (!o.keep_pending && !o.dry_run) l.CancelPending();
  spdlog::info("slurm: launcher stopped");
  return 0;
}

}  // namespace

void AddSlurmCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<LauncherOptions>();
  auto s = app.add_subcommand("slurm", "Start workers as Slurm jobs when queued trials need hardware no idle worker has");
  s->add_option("--config", o->config_file, "launcher config (JSON/YAML): partitions, gres, constraint, GPU model, time limit")
      ->required();
  s->add_option("--server", o->conn.server, "daemon URL")->envname("GAUNTLET_SERVER");
  s->add_option("--token", o->conn.token, "token the launcher reads the queue with")->envname("GAUNTLET_TOKEN");
  s->add_option("--worker-token", o->worker_token, "worker token for the jobs' workers (default: --token)")
      ->envname("GAUNTLET_WORKER_TOKEN");
  s->add_option("--worker-server", o->worker_server, "daemon URL as the compute nodes reach it (default: --server)");
  s->add_option("--exe", o->exe, "gauntlet executable on the compute nodes (default: this one)");
  s->add_option("--name", o->name, "launcher name: in job names (gauntlet-NAME-ENTRY) and worker labels")
      ->capture_default_str()
      ->check([](const std::string& v) { return SlurmSafeLabel(v) ? std::string() : std::string("letters, digits, _ - . only"); });
  s->add_option("--interval-s", o->interval_s, "seconds between passes")->capture_default_str()->check(CLI::Range(0.05, 3600.0));
  s->add_flag("--once", o->once, "one pass, print its report (JSON) and exit");
  s->add_flag("--dry-run", o->dry_run, "log the sbatch/scancel commands instead of running them");
  s->add_flag("--keep-pending", o->keep_pending, "on exit, leave pending jobs queued (default: cancel them)");
  s->add_option("--state-file", o->state_file, "write each pass's report (JSON) here");
  s->add_option("--sbatch", o->sbatch, "sbatch program")->capture_default_str();
  s->add_option("--squeue", o->squeue, "squeue program")->capture_default_str();
  s->add_option("--scancel", o->scancel, "scancel program")->capture_default_str();
  s->callback([=] { *code = RunLauncher(*o); });
}

}  // namespace gauntlet::slurm
