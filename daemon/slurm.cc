#include "daemon/slurm.h"

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

#include "api/http_client.h"
#include "daemon/cli_common.h"
#include "daemon/sweep.h"
#include "daemon/yaml_json.h"
#include "workers/process.h"

extern char** environ;

namespace gauntlet {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Labels travel on the worker's command line as k=v,k=v: no separators inside, nothing a shell
// would need quoted beyond what SlurmJobScript quotes anyway.
bool SafeLabel(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':'))
      return false;
  return true;
}

// "sm_90" / "sm_120" -> "9.0" / "12.0".
std::string ArchToCc(const std::string& arch) {
  std::string d = arch.substr(3);
  while (!d.empty() && !isdigit(static_cast<unsigned char>(d.back()))) d.pop_back();
  if (d.size() < 2) return "";
  return d.substr(0, d.size() - 1) + "." + d.substr(d.size() - 1);
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

template <typename T>
Status Get(const json& j, const char* key, const std::string& field, T* out) {
  if (!j.contains(key)) return Status::Ok();
  try {
    *out = j.at(key).get<T>();
  } catch (const std::exception&) {
    return Status::Invalid(std::string(key) + " has the wrong type", field + "." + key);
  }
  return Status::Ok();
}

bool Alive(const std::string& state) {
  return state == "PENDING" || state == "CONFIGURING" || state == "RUNNING" || state == "REQUEUED" ||
         state == "RESIZING" || state == "SUSPENDED";
}
}  // namespace

int SlurmPartition::Slots(const Need& need) const {
  if (!CouldEverFit(offer, need)) return 0;
  const int total = max_trials > 0 ? max_trials : (gpus > 0 ? gpus : std::max(1, cpus));
  if (need.gpus == 0) return total;
  return std::min(total, static_cast<int>(offer.gpus.size()) / need.gpus);
}

Result<SlurmConfig> ParseSlurmConfig(const json& j) {
  if (!j.is_object()) return Status::Invalid("the config is an object with a partitions list", "");
  SlurmConfig cfg;
  if (Status s = Get(j, "workdir", "", &cfg.workdir); !s.ok()) return s;
  if (Status s = Get(j, "log_dir", "", &cfg.log_dir); !s.ok()) return s;
  if (!j.contains("partitions") || !j["partitions"].is_array() || j["partitions"].empty())
    return Status::Invalid("partitions is a non-empty list", "partitions");
  std::set<std::string> names;
  for (size_t i = 0; i < j["partitions"].size(); ++i) {
    const json& e = j["partitions"][i];
    const std::string f = "partitions[" + std::to_string(i) + "]";
    if (!e.is_object()) return Status::Invalid("each partition is an object", f);
    SlurmPartition p;
    std::string arch;
    json labels = json::object();
    Status s;
    for (Status st : {Get(e, "name", f, &p.name), Get(e, "partition", f, &p.partition), Get(e, "gpus", f, &p.gpus),
                      Get(e, "gres_type", f, &p.gres_type), Get(e, "constraint", f, &p.constraint),
                      Get(e, "gpu_name", f, &p.gpu_name), Get(e, "compute_capability", f, &p.compute_capability),
                      Get(e, "arch", f, &arch), Get(e, "memory_mb", f, &p.memory_mb), Get(e, "labels", f, &labels),
                      Get(e, "time_limit", f, &p.time_limit), Get(e, "max_jobs", f, &p.max_jobs),
                      Get(e, "max_trials", f, &p.max_trials), Get(e, "cpus", f, &p.cpus), Get(e, "mem", f, &p.mem),
                      Get(e, "account", f, &p.account), Get(e, "qos", f, &p.qos),
                      Get(e, "idle_exit_s", f, &p.idle_exit_s), Get(e, "inventory", f, &p.inventory),
                      Get(e, "sbatch_args", f, &p.sbatch_args), Get(e, "worker_args", f, &p.worker_args)})
      if (!st.ok()) return st;
    for (auto& [k, v] : e.items()) {
      static const std::set<std::string> known = {
          "name", "partition", "gpus", "gres_type", "constraint", "gpu_name", "compute_capability", "arch",
          "memory_mb", "labels", "time_limit", "max_jobs", "max_trials", "cpus", "mem", "account", "qos",
          "idle_exit_s", "inventory", "sbatch_args", "worker_args"};
      if (!known.count(k)) return Status::Invalid("unknown key '" + k + "'", f + "." + k);
    }
    if (p.name.empty()) p.name = p.partition.empty() ? "default" : p.partition;
    if (!SafeLabel(p.name)) return Status::Invalid("name is letters, digits, _ - . / :", f + ".name");
    if (!names.insert(p.name).second) return Status::Invalid("two partitions are named '" + p.name + "'", f + ".name");
    if (p.gpus < 0 || p.gpus > 64) return Status::Invalid("gpus is 0 to 64", f + ".gpus");
    if (p.max_jobs < 0) return Status::Invalid("max_jobs is 0 or more", f + ".max_jobs");
    if (p.max_trials < 0 || p.cpus < 0) return Status::Invalid("max_trials and cpus are 0 or more", f);
    if (p.idle_exit_s <= 0) return Status::Invalid("idle_exit_s is positive", f + ".idle_exit_s");
    if (p.time_limit.empty()) return Status::Invalid("time_limit is required (Slurm --time)", f + ".time_limit");
    if (!arch.empty()) {
      if (arch.rfind("sm_", 0) != 0 || ArchToCc(arch).empty())
        return Status::Invalid("arch is written like sm_90", f + ".arch");
      p.compute_capability = ArchToCc(arch);
    }
    for (auto& [k, v] : labels.items()) {
      if (!v.is_string()) return Status::Invalid("label values are strings", f + ".labels." + k);
      if (!SafeLabel(k) || !SafeLabel(v.get<std::string>()))
        return Status::Invalid("labels are letters, digits, _ - . / :", f + ".labels." + k);
      if (k.rfind("slurm_", 0) == 0) return Status::Invalid("slurm_* labels are the launcher's own", f + ".labels." + k);
      p.labels[k] = v.get<std::string>();
    }
    // What a job offers: the declared inventory if given (it is what the worker will register),
    // else `gpus` GPUs of the named model.
    if (!p.inventory.empty()) {
      auto inv = ReadJsonOrYaml(p.inventory);
      if (!inv.ok()) return Status::Invalid(inv.status().message(), f + ".inventory");
      auto parsed = ParseInventory(*inv);
      if (!parsed.ok()) return Status::Invalid(p.inventory + ": " + parsed.status().message(), f + ".inventory");
      p.offer = *parsed;
      if (p.gpus == 0) p.gpus = static_cast<int>(p.offer.gpus.size());
    } else if (p.gpus > 0) {
      if (p.gpu_name.empty() || p.compute_capability.empty())
        return Status::Invalid("a GPU partition names its gpu_name and arch (or compute_capability)", f);
      json gpus = json::array();
      for (int g = 0; g < p.gpus; ++g)
        gpus.push_back({{"index", g}, {"name", p.gpu_name}, {"uuid", "slurm-" + std::to_string(g)},
                        {"compute_capability", p.compute_capability}, {"memory_mb", p.memory_mb}});
      auto parsed = ParseInventory({{"gpus", gpus}});
      if (!parsed.ok()) return Status::Invalid(parsed.status().message(), f);
      p.offer = *parsed;
    }
    for (auto& [k, v] : p.labels) p.offer.labels[k] = v;
    cfg.partitions.push_back(std::move(p));
  }
  return cfg;
}

std::string SlurmJobName(const std::string& launcher, const std::string& entry) {
  return "gauntlet-" + launcher + "-" + entry;
}

SlurmPlan PlanSlurmJobs(const SlurmConfig& cfg, const std::vector<SlurmQueuedTrial>& queued,
                        const std::vector<FleetNode>& nodes, const std::vector<SlurmJob>& jobs) {
  SlurmPlan plan;
  // Room that can take a trial: a registered worker of ours, or a job of ours that hasn't
  // registered yet (pending or starting), or a job we would submit.
  struct Bin {
    const SlurmPartition* p;
    int64_t job = 0;
    std::string kind;  // registered, starting, pending, new
    int slots = 0, gpus = 0;
    int used = 0;
  };
  std::map<std::string, const SlurmPartition*> by_name;
  for (auto& p : cfg.partitions) by_name[p.name] = &p;
  std::map<int64_t, const SlurmJob*> our_jobs;
  std::map<std::string, int> alive;
  for (auto& j : jobs)
    if (by_name.count(j.entry) && Alive(j.state)) {
      our_jobs[j.id] = &j;
      alive[j.entry]++;
    }
  auto total_slots = [](const SlurmPartition& p) {
    return p.max_trials > 0 ? p.max_trials : (p.gpus > 0 ? p.gpus : std::max(1, p.cpus));
  };
  std::map<std::string, std::vector<Bin>> bins;
  std::set<int64_t> registered;
  for (auto& n : nodes) {
    if (n.slurm_job == 0 || !our_jobs.count(n.slurm_job) || n.state != "online") continue;
    const SlurmPartition* p = by_name[our_jobs[n.slurm_job]->entry];
    registered.insert(n.slurm_job);
    bins[p->name].push_back({p, n.slurm_job, "registered", std::max(0, total_slots(*p) - n.running),
                             std::max(0, static_cast<int>(n.inv.gpus.size()) - n.busy_gpus)});
  }
  // Oldest first: the job most likely to start soonest gets the work; the newest pending ones are
  // the ones left empty, and cancelled.
  for (auto& [id, j] : our_jobs) {
    if (registered.count(id)) continue;
    const SlurmPartition* p = by_name[j->entry];
    bins[p->name].push_back({p, id, j->state == "PENDING" ? "pending" : "starting", total_slots(*p),
                             static_cast<int>(p->offer.gpus.size())});
  }
  // Registered first, then starting, then pending (stable within a kind: by job id).
  for (auto& [name, list] : bins)
    std::stable_sort(list.begin(), list.end(), [](const Bin& a, const Bin& b) {
      auto rank = [](const std::string& k) { return k == "registered" ? 0 : k == "starting" ? 1 : 2; };
      return rank(a.kind) < rank(b.kind);
    });

  json entries = json::object();
  for (auto& p : cfg.partitions)
    entries[p.name] = {{"queued", 0}, {"waiting_for_room", 0}, {"submit", 0}, {"cancel", json::array()}};
  int covered = 0, unplaceable = 0;
  json unplaceable_ids = json::array();
  for (auto& t : queued) {
    // Another worker that is idle now and could run it will lease it within a long-poll.
    bool idle_elsewhere = false;
    for (auto& n : nodes) {
      if (n.slurm_job != 0 && our_jobs.count(n.slurm_job)) continue;
      if (n.state == "online" && n.waiting && CouldEverFit(n.inv, t.need)) {
        idle_elsewhere = true;
        break;
      }
    }
    if (idle_elsewhere) {
      ++covered;
      continue;
    }
    const SlurmPartition* p = nullptr;
    for (auto& cand : cfg.partitions)
      if (cand.Slots(t.need) > 0) {
        p = &cand;
        break;
      }
    if (!p) {
      ++unplaceable;
      if (unplaceable_ids.size() < 20) unplaceable_ids.push_back(t.id);
      continue;
    }
    entries[p->name]["queued"] = entries[p->name]["queued"].get<int>() + 1;
    auto& list = bins[p->name];
    Bin* fit = nullptr;
    for (auto& b : list)
      if (b.slots - b.used > 0 && b.gpus >= t.need.gpus) {
        fit = &b;
        break;
      }
    if (!fit && alive[p->name] < p->max_jobs) {
      list.push_back({p, 0, "new", total_slots(*p), static_cast<int>(p->offer.gpus.size())});
      alive[p->name]++;
      fit = &list.back();
    }
    if (!fit) {
      entries[p->name]["waiting_for_room"] = entries[p->name]["waiting_for_room"].get<int>() + 1;
      continue;
    }
    fit->used++;
    fit->gpus -= t.need.gpus;
  }
  for (auto& [name, list] : bins) {
    json counts = {{"registered", 0}, {"starting", 0}, {"pending", 0}};
    for (auto& b : list) {
      if (b.kind == "new") {
        plan.submit[name]++;
        continue;
      }
      counts[b.kind] = counts[b.kind].get<int>() + 1;
      if (b.kind == "pending" && b.used == 0) {
        plan.cancel.push_back(b.job);
        entries[name]["cancel"].push_back(b.job);
      }
    }
    entries[name]["jobs"] = counts;
    entries[name]["submit"] = plan.submit[name];
  }
  for (auto it = plan.submit.begin(); it != plan.submit.end();)
    it = it->second == 0 ? plan.submit.erase(it) : std::next(it);
  plan.report = {{"queued", queued.size()},
                 {"covered_by_idle_workers", covered},
                 {"unplaceable", unplaceable},
                 {"unplaceable_trials", unplaceable_ids},
                 {"partitions", entries}};
  return plan;
}

std::vector<std::string> SbatchArgs(const SlurmConfig& cfg, const SlurmPartition& p, const std::string& launcher) {
  const std::string name = SlurmJobName(launcher, p.name);
  std::vector<std::string> a = {"--parsable", "--job-name=" + name, "--nodes=1", "--ntasks=1",
                                "--time=" + p.time_limit,
                                "--output=" + (fs::path(cfg.log_dir) / (name + "-%j.out")).string()};
  if (!p.partition.empty()) a.push_back("--partition=" + p.partition);
  if (p.gpus > 0) a.push_back("--gres=gpu:" + (p.gres_type.empty() ? "" : p.gres_type + ":") + std::to_string(p.gpus));
  if (!p.constraint.empty()) a.push_back("--constraint=" + p.constraint);
  if (p.cpus > 0) a.push_back("--cpus-per-task=" + std::to_string(p.cpus));
  if (!p.mem.empty()) a.push_back("--mem=" + p.mem);
  if (!p.account.empty()) a.push_back("--account=" + p.account);
  if (!p.qos.empty()) a.push_back("--qos=" + p.qos);
  for (auto& x : p.sbatch_args) a.push_back(x);
  return a;
}

std::string SlurmJobScript(const SlurmConfig& cfg, const SlurmPartition& p, const std::string& exe,
                           const std::string& server, const std::string& launcher) {
  std::string labels;
  for (auto& [k, v] : p.labels) labels += k + "=" + v + ",";
  labels += "slurm_launcher=" + launcher + ",slurm_partition=" + p.name;
  const int slots = p.max_trials > 0 ? p.max_trials : (p.gpus > 0 ? 0 : std::max(1, p.cpus));
  std::string s =
      "#!/bin/sh\n"
      "# Written by `gauntlet slurm` (launcher '" + launcher + "', partition entry '" + p.name + "').\n"
      "# One Gauntlet worker per job: it registers with the labels below (slurm_job names this job in\n"
      "# GET /api/v1/nodes), runs what the daemon leases it, and exits once idle for --idle-exit-s.\n"
      "# The worker token comes from the environment sbatch exported (GAUNTLET_TOKEN).\n"
      "exec " + ShellQuote(exe) + " worker --server " + ShellQuote(server) +
      " --name \"$(hostname -s)-slurm${SLURM_JOB_ID}\" \\\n"
      "  --labels " + ShellQuote(labels) + "\",slurm_job=${SLURM_JOB_ID}\" \\\n"
      "  --workdir " + ShellQuote(cfg.workdir) + "/\"${SLURM_JOB_ID}\" \\\n"
      "  --exit-when-idle --idle-exit-s " + std::to_string(p.idle_exit_s);
  if (slots > 0) s += " --max-trials " + std::to_string(slots);
  if (!p.inventory.empty()) s += " --inventory " + ShellQuote(p.inventory);
  for (auto& a : p.worker_args) s += " " + ShellQuote(a);
  return s + "\n";
}

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
  cli::Conn conn;
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
    client_.Send("PUT", "/api/v1/launchers/" + http::UrlEncode(o_.name), shown.dump(), "application/json",
                 std::chrono::seconds(10));
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
      f.state = n.value("state", "");
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
  http::Client client_;
  std::map<std::pair<int64_t, int>, Need> needs_;
  std::map<std::string, Requirements> suite_reqs_;
  std::map<std::string, std::string> scripts_;
  int last_unplaceable_ = -1;
};

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "gauntlet";
}

int RunLauncher(LauncherOptions o) {
  cli::Resolve(&o.conn);
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
      ->check([](const std::string& v) { return SafeLabel(v) ? std::string() : std::string("letters, digits, _ - . only"); });
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

}  // namespace gauntlet
