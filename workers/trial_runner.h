// Runs one leased trial on the worker: a fresh work directory, the suite's fingerprint, its stages
// in order (the first failure ends the trial), heartbeats and log shipping meanwhile, and the final
// report, retried until the daemon takes it (docs/DESIGN.md "Worker protocol").
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "workers/daemon_link.h"
#include "workers/fingerprint.h"
#include "workers/suite_bundles.h"
#include "workers/trial_users.h"
#include "workers/trial_views.h"
#include "proc/process_runner.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

// What every trial of one worker shares. Owned by RunWorker (or a test); the pointers are borrowed,
// must outlive every RunTrial that uses them, and point to thread-safe objects, since the worker
// runs its trials on threads of their own.
struct TrialRunnerEnv {
  DaemonLink* daemon = nullptr;        // all the trial says to the daemon goes through it
  proc::ProcessRunner* processes = nullptr;  // every process the trial starts goes through it
  FingerprintCache* fingerprints = nullptr;
  SuiteBundles* bundles = nullptr;     // suite files by hash; null: a grant naming a bundle fails
  std::string node_name;
  const Inventory* inv = nullptr;
  std::string workdir;       // the worker's folder; each trial gets workdir/trial-ID-aN
  std::string exe_dir;
  std::vector<std::string> pass_env;
  std::chrono::milliseconds kill_grace{5000};
  std::atomic<bool>* abort_all = nullptr;  // set when the worker must stop its trials now; may be null
  WorkerClock* clock = &SteadyWorkerClock();  // every wait and deadline of the trial
  std::string kernel_recorder;  // the recorder library when the node records kernels, else empty
  TrialUsers* users = nullptr;  // each trial's own user (workers/trial_users.h); null: the worker's user
  const TrialViews* views = nullptr;  // each trial's own view (workers/trial_views.h); null: the host's
  bool limits_enforced = false;  // stage cgroups hold memory.max and pids.max here (probed at start)
  bool require_limits = false;   // --require-limits: refuse stages that declare limits not enforced
};

// Runs the trial described by a lease grant (the daemon's JSON) on the calling thread; returns when
// it has been reported (or the lease was lost, or abort_all was set and the report could not be
// delivered). `grant` holds "suite", as DaemonLink::Lease's grants do. `definition`: the suite's
// definition as the worker keeps it for every trial of the suite version (shared, not copied);
// null: the grant's own "suite"."definition", moved out of it. Safe to call concurrently.
void RunTrial(const TrialRunnerEnv& env, nlohmann::json grant,
              std::shared_ptr<const nlohmann::json> definition = nullptr);

}  // namespace gauntlet::worker
