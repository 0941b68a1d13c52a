// Before a GPU goes to the next trial, it must hold no process of an earlier one: a grandchild that
// escaped its stage once kept 21 GiB of an H200 after its trial passed, and the next trial's OOM
// would have been filed as that config's `oom`. The stage keeper and cgroup end such processes
// (proc/process.h); this is the check that they did, by what the GPU itself reports (NVML).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workers/daemon_link.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

class Nvml;

// What NVML says is computing on a GPU. A seam: NVML on a GPU node, a fake in tests.
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  // The pids NVML lists on GPU `index` now; nullopt when it cannot say. Thread-safe.
  virtual std::optional<std::vector<unsigned>> Pids(int index) const = 0;
};

// The probe over NVML; null on a host without it. The worker owns it.
std::unique_ptr<GpuProbe> OpenNvmlProbe();

// Hands the GPUs of a finished trial back: polls until none of `gpus` lists a process, killing
// (SIGKILL) those of this worker's trials (in a gauntlet-stage-* cgroup, or GAUNTLET_WORKDIR under
// `workdir`; never anyone else's), for up to `wait`. Returns each GPU still busy then, with the
// reason to keep it from further trials (pids, their commands) and the pids; empty when all are
// free. `wait` and the polls are on `clock`. Thread-safe.
std::vector<HeldBackGpu> HandBackGpus(const GpuProbe& probe, const std::vector<int>& gpus, const std::string& workdir,
                                      std::chrono::milliseconds wait, WorkerClock& clock = SteadyWorkerClock());

// Whether `pid` is a process of one of this worker's trials (see HandBackGpus).
bool IsTrialProcess(pid_t pid, const std::string& workdir);

}  // namespace gauntlet::worker
