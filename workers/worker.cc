#include "workers/worker.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/hardware.h"
#include "core/self_exe.h"
#include "core/stop_signals.h"
#include "workers/daemon_presence.h"
#include "workers/fingerprint.h"
#include "workers/gpu_handback.h"
#include "workers/http_daemon_link.h"
#include "workers/kernel_recording.h"
#include "workers/node_checks.h"
#include "workers/nvml.h"
#include "proc/process.h"
#include "proc/stage_cgroup.h"
#include "workers/stop_signal_thread.h"
#include "workers/trial_runner.h"
#include "proc/workdir_lock.h"

namespace gauntlet::worker {
using proc::Containment;
using proc::KillStrayChildren;
using proc::KillTrialLeftovers;
using proc::ProcessRunner;
using proc::ProcessSpec;
using proc::SetContainment;
using proc::StageCgroup;
using proc::SystemProcessRunner;
using proc::WorkdirLock;
using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string HostName() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// The lease loop and the trials it runs. The loop runs on the thread that calls LeaseLoop and
// Drain; trials run on threads of their own and meet the loop only through mu_.
class Worker {
 public:
  // Prepares the work folder (killing what an earlier run left there); `note` says where the
  // inventory came from, for the start-up line.
  // `gpus`: what says which processes use a GPU (borrowed); null: NVML on a node whose GPUs were
  // discovered, none on one declared by --inventory.
  // `clock` (borrowed) times every wait of the loop and of its trials. `users` (owned): each
  // trial's own user, or why there is none; `views` (owned): each trial's own view, or why none.
  Worker(const WorkerOptions& o, Inventory inv, const std::string& note, DaemonLink& daemon, ProcessRunner& processes,
         GpuProbe* gpus, WorkerClock& clock, std::unique_ptr<TrialUsers> users, std::unique_ptr<TrialViews> views);
  ~Worker() { JoinAll(); }

  std::atomic<bool> draining{false}, abort_all{false};

  // From the signal thread: a drain (finish running trials, lease no more), and then an abort (stop
  // them). Both wake the loop, which may be waiting for a free slot or for the drain's end.
  void StartDrain();
  void AbortTrials();
  // Registers the node, retrying while the daemon is away; false when refused or draining.
  bool Register();
  // The first preflight: a node that fails it is quarantined (it still polls, and gets no trials).
  void FirstPreflight();
  // Leases and starts trials while there is room, until a drain, an idle exit or a lost registration.
  void LeaseLoop();
  // Lets running trials finish; past the drain timeout they are stopped. Joins every trial thread.
  void Drain();

 private:
  struct Room {
    std::vector<int> free_gpus;
    std::vector<HeldBackGpu> held_back;
    bool idle = false;          // no trial runs
    Clock::duration idle_for{};  // since the last trial ended, or the lease loop began
  };
  std::optional<Room> WaitForRoom();
  void FillGpusLocked(Room& room) const;  // free and held-back GPUs as of now; mu_ held
  bool IdleTooLong(const Room& room) const;
  void PreflightWhenDue(const Room& room);
  LeaseRequest Request(const Room& room) const;
  void StartTrial(json grant);
  // After a trial: its GPUs go back to the pool only once NVML shows no process on them.
  void HandBack(int64_t trial, const std::vector<int>& gpus);
  // Quarantined GPUs that NVML now shows free go back to the pool; `room` is brought up to date.
  void RecheckHeldBack(Room& room);
  void JoinFinished();
  void JoinAll();

  const WorkerOptions& o_;
  DaemonLink& daemon_;
  ProcessRunner& processes_;
  WorkerClock& clock_;
  const Inventory inv_;
  const std::string name_, exe_dir_;
  std::string workdir_;
  int max_trials_ = 1;
  json registration_;
  int64_t node_ = 0;
  Clock::time_point last_preflight_;
  // Suite definitions travel once per version: kept here to fill in grants that omit them. The loop
  // thread's alone.
  std::map<std::string, std::shared_ptr<const json>> suites_;  // "name@version" -> definition, shared by its trials
  FingerprintCache fingerprints_;
  std::unique_ptr<SuiteBundles> bundles_;  // under workdir_, so made once it is known
  std::unique_ptr<TrialUsers> users_;       // each trial's own user (workers/trial_users.h)
  std::unique_ptr<TrialViews> views_;       // each trial's own view of the machine (workers/trial_views.h)
  DaemonPresence presence_{o_.server};      // what the lease loop says when the daemon goes and comes back
  TrialRunnerEnv env_;

  std::mutex mu_;
  std::condition_variable cv_;  // a trial ended
  std::set<int> busy_;          // GPUs held by running trials; guarded by mu_
  std::map<int, HeldBackGpu> held_back_;  // GPUs kept from trials (a process left on them); mu_
  std::unique_ptr<GpuProbe> nvml_;        // NVML, on a node whose GPUs were discovered; else null
  GpuProbe* gpu_probe_ = nullptr;         // the probe in use (given, or nvml_); null: none
  int running_ = 0;             // guarded by mu_
  Clock::time_point idle_since_;  // guarded by mu_
  struct Slot {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::list<Slot> slots_;  // the loop thread's alone
};

Worker::Worker(const WorkerOptions& o, Inventory inv, const std::string& note, DaemonLink& daemon,
               ProcessRunner& processes, GpuProbe* gpus, WorkerClock& clock, std::unique_ptr<TrialUsers> users,
               std::unique_ptr<TrialViews> views)
    : o_(o), daemon_(daemon), processes_(processes), clock_(clock), inv_(std::move(inv)),
      name_(o.name.empty() ? HostName() : o.name),
      exe_dir_(SelfExeDir()), users_(std::move(users)), views_(std::move(views)) {
  std::error_code ec;
  fs::create_directories(o.workdir, ec);
  workdir_ = fs::absolute(o.workdir).string();
  // Trials reach their own folders (and the suite bundles) through the worker's, but may not list
  // it or read its files (the node's credential, 0600 as well).
  if (users_->enabled()) chmod(workdir_.c_str(), 0711);
  KillTrialLeftovers(workdir_);
  if (gpus) gpu_probe_ = gpus;
  else if (o.inventory_file.empty() && !inv_.gpus.empty()) gpu_probe_ = (nvml_ = OpenNvmlProbe()).get();
  max_trials_ = o.max_trials > 0 ? o.max_trials
                                 : (inv_.gpus.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                                                      : static_cast<int>(inv_.gpus.size()));
  spdlog::info("worker {}: {} ({}), up to {} trial(s) at once; stages contained by {}", name_, NodeHardware(inv_), note, max_trials_,
               StageCgroup::Available() ? "a cgroup v2 each and a subreaper keeper"
                                        : "a subreaper keeper (no cgroup v2 to create here, or --containment subreaper)");
  // The kernel recorder (issue 30): a node without it or without CUPTI says so here, in its
  // registration, and its trials record nothing (never fail for it).
  const KernelRecorder recorder = FindKernelRecorder(exe_dir_, !inv_.gpus.empty());
  spdlog::info("worker {}: kernel recorder: {}", name_, recorder.description);
  // Which protections its trials run under: said here, in its registration and in every stage's report.
  const std::string isolation = users_->description() + "; " + views_->description();
  spdlog::log(users_->enabled() && views_->enabled() ? spdlog::level::info : spdlog::level::warn,
              "worker {}: isolation: {}", name_, isolation);
  registration_ = {{"name", name_}, {"inventory", InventoryJson(inv_)}, {"labels", inv_.labels},
                   {"fingerprint", {{"driver", inv_.driver}, {"cuda", inv_.cuda},
                                    {"kernel_recorder", recorder.description},
                                    {"isolation", isolation}}}};
  env_.daemon = &daemon_;
  env_.processes = &processes_;
  env_.clock = &clock_;
  env_.fingerprints = &fingerprints_;
  bundles_ = std::make_unique<SuiteBundles>(workdir_, daemon_);
  env_.bundles = bundles_.get();
  env_.node_name = name_;
  env_.inv = &inv_;
  env_.workdir = workdir_;
  env_.exe_dir = exe_dir_;
  env_.kernel_recorder = recorder.library;
  env_.pass_env = o.pass_env;
  env_.users = users_.get();
  env_.views = views_.get();
  // Whether a stage's cgroup can hold its declared limits here: a probe cgroup says (memory.max and
  // pids.max taken, or not), once.
  const std::unique_ptr<StageCgroup> probe = StageCgroup::Create(int64_t{1} << 30, 4096);
  env_.limits_enforced = probe && probe->memory_limit() > 0 && probe->pids_limit() > 0;
  const std::string limits_held_by = env_.limits_enforced ? probe->LimitsHeldBy() : "";
  env_.require_limits = o.require_limits;
  registration_["fingerprint"]["limits"] = env_.limits_enforced ? "enforced" : "not enforced";
  spdlog::log(env_.limits_enforced ? spdlog::level::info : spdlog::level::warn, "worker {}: stage limits: {}", name_,
              env_.limits_enforced ? "enforced (" + limits_held_by + " memory and pids limits)"
                                   : (o.require_limits ? "cannot be enforced here; stages that declare them are refused"
                                                       : "cannot be enforced here; stages that declare them run without, and say so"));
  env_.kill_grace = std::chrono::milliseconds(o.kill_grace_ms);
  env_.abort_all = &abort_all;
  // A GPU that holds processes already (an earlier run's leftovers that no sweep could name) is
  // not offered until it is free.
  std::vector<int> all;
  for (auto& g : inv_.gpus) all.push_back(g.index);
  if (gpu_probe_) HandBack(0, all);
}

// The flags change under mu_, so a loop that has just found the predicate false cannot miss them.
void Worker::StartDrain() {
  {
    std::lock_guard lock(mu_);
    draining = true;
  }
  cv_.notify_all();
}

void Worker::AbortTrials() {
  {
    std::lock_guard lock(mu_);
    abort_all = true;
  }
  cv_.notify_all();
}

bool Worker::Register() {
  int delay = 100;
  while (!draining) {
    RegisterAnswer a = daemon_.Register(registration_);
    if (a.ok()) {
      node_ = a.node;
      spdlog::info("registered as node {}", node_);
      return true;
    }
    if (a.status == LinkStatus::kRefused) {
      spdlog::error("registration refused ({})", a.detail);
      return false;
    }
    spdlog::warn("cannot register with {}: {}", o_.server, a.detail);
    clock_.SleepFor(std::chrono::milliseconds(delay));  // backoff while the daemon is away
    delay = std::min(delay * 2, 2000);
  }
  return false;
}

void Worker::FirstPreflight() {
  std::string why = Preflight(o_, inv_, exe_dir_, processes_, clock_);
  last_preflight_ = clock_.Now();
  if (why.empty()) return;
  spdlog::error("{}: quarantining this node", why);
  daemon_.Quarantine(node_, why);
}

std::optional<Worker::Room> Worker::WaitForRoom() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return running_ < max_trials_ || draining; });
  if (draining) return std::nullopt;
  Room room;
  FillGpusLocked(room);
  room.idle = running_ == 0;
  if (room.idle) room.idle_for = clock_.Now() - idle_since_;
  return room;
}

void Worker::FillGpusLocked(Room& room) const {
  room.free_gpus.clear();
  room.held_back.clear();
  for (auto& g : inv_.gpus)
    if (!busy_.count(g.index) && !held_back_.count(g.index)) room.free_gpus.push_back(g.index);
  for (auto& [g, held] : held_back_) room.held_back.push_back(held);
}

bool Worker::IdleTooLong(const Room& room) const {
  return o_.exit_when_idle && room.idle && room.idle_for > std::chrono::duration<double>(o_.idle_exit_s);
}

// Preflight again now and then, but only between trials: it must not compete with one for the GPUs.
void Worker::PreflightWhenDue(const Room& room) {
  if (o_.preflight_period_s <= 0 || !room.idle ||
      clock_.Now() - last_preflight_ <= std::chrono::seconds(o_.preflight_period_s))
    return;
  last_preflight_ = clock_.Now();
  if (std::string why = Preflight(o_, inv_, exe_dir_, processes_, clock_); !why.empty()) daemon_.Quarantine(node_, why);
}

LeaseRequest Worker::Request(const Room& room) const {
  LeaseRequest r;
  r.free_gpus = room.free_gpus;
  r.held_back = room.held_back;
  // An idle-exiting worker polls in shorter calls, so its idle clock is checked in time.
  r.wait_s = o_.exit_when_idle ? std::min(o_.wait_s, std::max(1.0, o_.idle_exit_s / 2)) : o_.wait_s;
  for (auto& [key, def] : suites_) r.have_suites.push_back(key);
  return r;
}

void Worker::LeaseLoop() {
  {
    std::lock_guard lock(mu_);
    idle_since_ = clock_.Now();  // registration and preflight are not idleness
  }
  int delay = 50;
  while (!draining) {
    std::optional<Room> room = WaitForRoom();
    if (!room) break;
    if (IdleTooLong(*room)) {
      spdlog::info("idle for {} s: exiting", o_.idle_exit_s);
      break;
    }
    PreflightWhenDue(*room);
    RecheckHeldBack(*room);
    LeaseAnswer a = daemon_.Lease(node_, Request(*room));
    // A grant that raced with the drain is run anyway: handing it back would cost an attempt.
    if (draining && !a.grant) break;
    if (a.status == LinkStatus::kUnavailable) {
      presence_.Unreachable(clock_.Now(), a.detail);
      clock_.SleepFor(std::chrono::milliseconds(delay));  // backoff while the daemon is away
      delay = std::min(delay * 2, 2000);
      continue;
    }
    presence_.Reachable(clock_.Now());
    delay = 50;
    if (a.status == LinkStatus::kUnknownNode) {  // the daemon forgot this node (a fresh database)
      if (!Register()) break;
      continue;
    }
    if (!a.ok()) {
      spdlog::error("lease answer {}", a.detail);
      clock_.SleepFor(std::chrono::seconds(1));
      continue;
    }
    if (a.grant) StartTrial(std::move(*a.grant));
    if (draining) break;
  }
}

void Worker::StartTrial(json grant) {
  json& s = grant["suite"];
  const std::string key = s.value("key", "");
  std::shared_ptr<const json> definition;  // null: a grant without one, for a suite not kept
  if (auto d = s.find("definition"); d != s.end()) {
    definition = suites_[key] = std::make_shared<const json>(std::move(*d));
    s.erase(d);
  } else if (auto it = suites_.find(key); it != suites_.end()) {
    definition = it->second;
  }
  std::vector<int> gpus;
  for (auto& g : grant.value("gpus", json::array())) gpus.push_back(g.get<int>());
  {
    std::lock_guard lock(mu_);
    for (int g : gpus) busy_.insert(g);
    ++running_;
  }
  JoinFinished();
  spdlog::debug("trial {} leased (gpus {})", grant.value("trial", 0), grant["gpus"].dump());
  Slot& slot = slots_.emplace_back();
  slot.thread = std::thread([this, grant = std::move(grant), definition = std::move(definition), gpus,
                             done = &slot.done]() mutable {
    const int64_t trial = grant.value("trial", int64_t{0});
    RunTrial(env_, std::move(grant), std::move(definition));
    HandBack(trial, gpus);
    {
      std::lock_guard lock(mu_);
      for (int g : gpus) busy_.erase(g);
      // Idle time counts from the last trial's end: a worker whose every slot was busy for longer
      // than idle_exit_s is not idle the moment its trial ends.
      if (--running_ == 0) idle_since_ = clock_.Now();
    }
    *done = true;
    cv_.notify_all();
  });
}

void Worker::HandBack(int64_t trial, const std::vector<int>& gpus) {
  KillStrayChildren();
  if (!gpu_probe_ || gpus.empty()) return;
  auto stuck = HandBackGpus(*gpu_probe_, gpus, workdir_,
                            std::chrono::milliseconds(static_cast<int64_t>(o_.gpu_free_wait_s * 1000)), clock_);
  std::lock_guard lock(mu_);
  for (auto& held : stuck) {
    spdlog::error("{}{}: holding GPU {} back from further trials until NVML shows it free", held.reason,
                  trial ? " (trial " + std::to_string(trial) + ")" : std::string(" (at start)"), held.index);
    held_back_[held.index] = held;
  }
}

void Worker::RecheckHeldBack(Room& room) {
  if (!gpu_probe_) return;
  std::vector<int> held;
  {
    std::lock_guard lock(mu_);
    for (auto& [g, why] : held_back_) held.push_back(g);
  }
  if (held.empty()) return;
  for (int g : held) {
    auto pids = gpu_probe_->Pids(g);
    if (!pids || !pids->empty()) continue;
    std::lock_guard lock(mu_);
    held_back_.erase(g);
    spdlog::info("GPU {} is free again: offered to trials", g);
  }
  std::lock_guard lock(mu_);
  FillGpusLocked(room);
}

// Joins finished trial threads so a long-lived worker does not accumulate them.
void Worker::JoinFinished() {
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->done) {
      it->thread.join();
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
}

void Worker::JoinAll() {
  for (auto& t : slots_)
    if (t.thread.joinable()) t.thread.join();
  slots_.clear();
}

void Worker::Drain() {
  {
    std::unique_lock lock(mu_);
    if (running_ > 0) spdlog::info("waiting for {} running trial(s)", running_);
    if (!clock_.WaitUntil(cv_, lock, clock_.Now() + std::chrono::milliseconds(o_.drain_timeout_ms),
                          [&] { return running_ == 0 || abort_all; })) {
      spdlog::warn("drain timeout: stopping running trials");
      abort_all = true;
    }
  }
  JoinAll();
  spdlog::info("worker stopped");
}

}  // namespace

int RunWorker(const WorkerOptions& o, DaemonLink& daemon, ProcessRunner& processes, GpuProbe* gpus,
              WorkerClock& clock) {
  sigset_t stop_set = BlockStopSignals();
  // Orphans of a stage keeper that was itself killed come here, not to init: the worker reaps and
  // kills them (KillStrayChildren), so nothing escapes through a dead keeper.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  SetContainment(o.containment == "subreaper" ? Containment::kSubreaper : Containment::kAuto);
  Inventory inv;
  std::string note;
  if (!LoadInventory(o, &inv, &note)) return 2;
  auto lock = WorkdirLock::Acquire(o.workdir);
  if (!lock.ok()) {
    spdlog::error("{}", lock.status().message());
    return 2;
  }
  std::string users_error;
  const char* path = getenv("PATH");
  std::unique_ptr<TrialUsers> users = TrialUsers::Configure(o.trial_users, o.trial_uids, {"sh", "python3"},
                                                          path ? path : "/usr/bin:/bin",
                                                          fs::absolute(o.workdir).string(), &users_error);
  if (!users) {
    spdlog::error("{}", users_error);
    return 2;
  }
  std::unique_ptr<TrialViews> views = TrialViews::Configure(o.trial_namespaces, users->enabled(),
                                                          fs::absolute(o.workdir).string(), o.trial_share,
                                                          proc::FindProgram("sh", "/usr/bin:/bin"), &users_error);
  if (!views) {
    spdlog::error("{}", users_error);
    return 2;
  }
  Worker worker(o, std::move(inv), note, daemon, processes, gpus, clock, std::move(users), std::move(views));
  StopSignalThread signals(
      stop_set,
      [&](int sig) {
        spdlog::info("{}: draining (running trials finish; a second signal stops them)",
                     sig == SIGINT ? "SIGINT" : "SIGTERM");
        worker.StartDrain();
        daemon.InterruptLease();
      },
      [&] {
        spdlog::warn("second signal: stopping running trials");
        worker.AbortTrials();
      });
  if (!worker.Register()) return worker.draining ? 0 : 3;
  worker.FirstPreflight();
  worker.LeaseLoop();
  worker.Drain();
  return 0;
}

int RunWorker(const WorkerOptions& o) {
  net::SetDefaultCaFile(o.ca_file);
  // The node's credential lives in its workdir, whose flock makes this worker its one user.
  HttpDaemonLink daemon(o.server, o.token, (fs::absolute(o.workdir) / "node-credential.json").string());
  SystemProcessRunner processes;
  return RunWorker(o, daemon, processes);
}

}  // namespace gauntlet::worker
