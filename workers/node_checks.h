// What a worker checks of its node before it takes trials: which GPUs it has (an --inventory file
// or discovery) and whether the preflight program passes (workers/worker.cc runs both).
#pragma once
#include <string>

#include "core/hardware.h"
#include "proc/process.h"
#include "workers/worker.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

// The node's GPUs into *inv, with --label's labels, and in *note where they came from: the
// --inventory file when given, else discovery. False (logged) for a file that cannot be read or is
// not an inventory. Thread-compatible.
bool LoadInventory(const WorkerOptions& o, Inventory* inv, std::string* note);

// Runs the preflight program (o.preflight; "auto": gauntlet-kernels beside the worker in `exe_dir`)
// through `processes`, bounded by five minutes of `clock`. Returns "" when the node may take
// trials, else the reason.
std::string Preflight(const WorkerOptions& o, const Inventory& inv, const std::string& exe_dir,
                      proc::ProcessRunner& processes, WorkerClock& clock);

}  // namespace gauntlet::worker
