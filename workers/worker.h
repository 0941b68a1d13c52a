// The worker agent (`gauntlet worker`): registers the node, long-polls for leases while it has room,
// runs each trial on its own thread, and drains on SIGTERM (finishes its trials, then exits).
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "workers/daemon_link.h"
#include "proc/process_runner.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

class GpuProbe;  // workers/gpu_handback.h

// `gauntlet worker`'s flags (workers/worker_cli.cc), with their defaults. A plain value.
struct WorkerOptions {
  std::string server = "http://127.0.0.1:8080";
  std::string token;
  std::string ca_file;         // PEM CAs trusted for an https:// server; "" : the system's store
  std::string name;            // default: the host name
  std::map<std::string, std::string> labels;
  std::string inventory_file;  // declare the GPUs instead of discovering them
  std::string workdir = "./var/work";
  int max_trials = 0;          // concurrent trials; 0: one per GPU, or the CPU count on a CPU-only node
  std::vector<std::string> pass_env;
  int64_t kill_grace_ms = 5000;
  int64_t drain_timeout_ms = 600000;  // on SIGTERM, how long running trials may take before they are stopped
  double wait_s = 20;          // long-poll length
  std::string preflight = "auto";  // auto: run gauntlet-kernels preflight where GPUs exist; off; or a program
  int64_t preflight_period_s = 3600;
  bool exit_when_idle = false;     // exit after idle_exit_s with nothing to do (Slurm-launched workers)
  double idle_exit_s = 60;
  std::string containment = "auto";  // auto: cgroup per stage where possible, plus the keeper; subreaper: keeper alone
  double gpu_free_wait_s = 15;       // after a trial: how long its GPUs may take to show no process
  // Each trial's own user (workers/trial_users.h): auto | on | off, from a range of ids.
  std::string trial_users = "auto";
  std::string trial_uids = "61000-61999";
  // Each trial's own mount and PID namespaces (workers/trial_views.h): auto | on | off, and the
  // folders under /tmp every trial still sees.
  std::string trial_namespaces = "auto";
  std::vector<std::string> trial_share;
  // Refuse stages that declare limits (memory_mb, pids) this node cannot enforce, instead of running
  // them unbounded and saying so.
  bool require_limits = false;
};

// Runs until SIGTERM/SIGINT (drain), --exit-when-idle, or a fatal error, talking to opts.server over
// REST and starting real processes; returns the process exit code (0; 2 for a bad inventory; 3 when
// registration was refused). Blocks SIGINT/SIGTERM for the process: call it before any thread exists.
int RunWorker(const WorkerOptions& opts);
// The same over the given seams (borrowed; they must outlive the call). opts.server and opts.token
// are then only named in logs. `gpus` (null: NVML on a node whose GPUs were discovered, none on one
// declared by --inventory) says which processes each GPU holds, for the GPUs of the inventory
// whichever way it was found. `clock` times every wait and deadline of the loop and its trials.
int RunWorker(const WorkerOptions& opts, DaemonLink& daemon, proc::ProcessRunner& processes, GpuProbe* gpus = nullptr,
              WorkerClock& clock = SteadyWorkerClock());

}  // namespace gauntlet::worker
