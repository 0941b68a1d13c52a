// `gauntlet slurm`'s pure half (see slurm.h): the launcher config, the planner and the job script
// and sbatch arguments it writes. The launcher process that runs passes is in slurm.cc.
#include <algorithm>
#include <filesystem>
#include <set>

#include "slurm/slurm.h"
#include "core/yaml_json.h"

namespace gauntlet::slurm {
using nlohmann::json;
namespace fs = std::filesystem;

// Labels travel on the worker's command line as k=v,k=v: no separators inside, nothing a shell
// would need quoted beyond what SlurmJobScript quotes anyway.
bool SlurmSafeLabel(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':'))
      return false;
  return true;
}

namespace {

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
    if (!SlurmSafeLabel(p.name)) return Status::Invalid("name is letters, digits, _ - . / :", f + ".name");
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
      if (!SlurmSafeLabel(k) || !SlurmSafeLabel(v.get<std::string>()))
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

namespace {

// Room that can take a trial: a registered worker of ours, or a job of ours that hasn't registered
// yet (pending or starting), or a job we would submit.
struct Bin {
  const SlurmPartition* p;
  int64_t job = 0;
  std::string kind;  // registered, starting, pending, new
  int slots = 0, gpus = 0;
  int used = 0;
};

int TotalSlots(const SlurmPartition& p) {
  return p.max_trials > 0 ? p.max_trials : (p.gpus > 0 ? p.gpus : std::max(1, p.cpus));
}

// The room of our alive jobs per partition, registered first, then starting, then pending (by job
// id within a kind: the job most likely to start soonest gets the work; the newest pending ones are
// left empty and cancelled). Fills `our_jobs` and `alive` (alive jobs per partition).
std::map<std::string, std::vector<Bin>> ExistingRoom(const std::map<std::string, const SlurmPartition*>& by_name,
                                                     const std::vector<FleetNode>& nodes,
                                                     const std::vector<SlurmJob>& jobs,
                                                     std::map<int64_t, const SlurmJob*>* our_jobs,
                                                     std::map<std::string, int>* alive) {
  for (auto& j : jobs)
    if (by_name.count(j.entry) && Alive(j.state)) {
      (*our_jobs)[j.id] = &j;
      (*alive)[j.entry]++;
    }
  std::map<std::string, std::vector<Bin>> bins;
  std::set<int64_t> registered;
  for (auto& n : nodes) {
    if (n.slurm_job == 0 || !our_jobs->count(n.slurm_job) || n.state != NodeState::kOnline) continue;
    const SlurmPartition* p = by_name.at((*our_jobs)[n.slurm_job]->entry);
    registered.insert(n.slurm_job);
    bins[p->name].push_back({p, n.slurm_job, "registered", std::max(0, TotalSlots(*p) - n.running),
                             std::max(0, static_cast<int>(n.inv.gpus.size()) - n.busy_gpus)});
  }
  for (auto& [id, j] : *our_jobs) {
    if (registered.count(id)) continue;
    const SlurmPartition* p = by_name.at(j->entry);
    bins[p->name].push_back({p, id, j->state == "PENDING" ? "pending" : "starting", TotalSlots(*p),
                             static_cast<int>(p->offer.gpus.size())});
  }
  for (auto& [name, list] : bins)
    std::stable_sort(list.begin(), list.end(), [](const Bin& a, const Bin& b) {
      auto rank = [](const std::string& k) { return k == "registered" ? 0 : k == "starting" ? 1 : 2; };
      return rank(a.kind) < rank(b.kind);
    });
  return bins;
}

// True if a worker that is not ours is idle now and could run `t`: it will lease it within a long-poll.
bool IdleElsewhere(const SlurmQueuedTrial& t, const std::vector<FleetNode>& nodes,
                   const std::map<int64_t, const SlurmJob*>& our_jobs) {
  for (auto& n : nodes) {
    if (n.slurm_job != 0 && our_jobs.count(n.slurm_job)) continue;
    if (n.state == NodeState::kOnline && n.waiting && CouldEverFit(n.inv, t.need)) return true;
  }
  return false;
}

// Puts `t` into the first bin of `p` with room, or a new job's while the partition allows more;
// false when there is no room.
bool Place(const SlurmQueuedTrial& t, const SlurmPartition& p, std::vector<Bin>& list, int& alive) {
  Bin* fit = nullptr;
  for (auto& b : list)
    if (b.slots - b.used > 0 && b.gpus >= t.need.gpus) {
      fit = &b;
      break;
    }
  if (!fit && alive < p.max_jobs) {
    list.push_back({&p, 0, "new", TotalSlots(p), static_cast<int>(p.offer.gpus.size())});
    alive++;
    fit = &list.back();
  }
  if (!fit) return false;
  fit->used++;
  fit->gpus -= t.need.gpus;
  return true;
}

}  // namespace

SlurmPlan PlanSlurmJobs(const SlurmConfig& cfg, const std::vector<SlurmQueuedTrial>& queued,
                        const std::vector<FleetNode>& nodes, const std::vector<SlurmJob>& jobs) {
  SlurmPlan plan;
  std::map<std::string, const SlurmPartition*> by_name;
  for (auto& p : cfg.partitions) by_name[p.name] = &p;
  std::map<int64_t, const SlurmJob*> our_jobs;
  std::map<std::string, int> alive;
  auto bins = ExistingRoom(by_name, nodes, jobs, &our_jobs, &alive);

  json entries = json::object();
  for (auto& p : cfg.partitions)
    entries[p.name] = {{"queued", 0}, {"waiting_for_room", 0}, {"submit", 0}, {"cancel", json::array()}};
  int covered = 0, unplaceable = 0;
  json unplaceable_ids = json::array();
  auto bump = [&](const std::string& part, const char* key) { entries[part][key] = entries[part][key].get<int>() + 1; };
  for (auto& t : queued) {
    if (IdleElsewhere(t, nodes, our_jobs)) {
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
    bump(p->name, "queued");
    if (!Place(t, *p, bins[p->name], alive[p->name])) bump(p->name, "waiting_for_room");
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

}  // namespace gauntlet::slurm
