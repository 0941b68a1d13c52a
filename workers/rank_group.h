// A command stage with "ranks": N: the worker starts one process per rank, as torchrun's elastic
// agent does, and supervises them as a group. When one rank fails (exits non-zero or dies of a
// signal) every other rank is ended at once (SIGTERM to its process group, SIGKILL after the
// grace), so a survivor waiting in NCCL for the dead rank never holds the GPUs until the stage's
// timeout. Each rank's output reaches the stage's one stream line by line, prefixed "[rankN]: "
// as torchrun prefixes it, so the classifier can tell the ranks apart (docs/CLASSIFIER.md "Ranks").
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "proc/process_runner.h"

namespace gauntlet::worker {

struct RankGroupResult {
  // How the group ended: the first failed rank's exit when one failed; else timed_out or stopped
  // (the caller's should_stop) as the ranks saw it; else exit code 0.
  proc::ExitInfoProc exit;
  int first_failed = -1;              // the rank that failed first (-1: none did)
  std::vector<proc::ExitInfoProc> ranks;    // each rank's own end; ranks ended by the group are `stopped`
};

// The environment of rank `rank` of `world`: `base` plus RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK=0, MASTER_ADDR=127.0.0.1, MASTER_PORT=`port`, GAUNTLET_RANK; rank k
// > 0 gets its own GAUNTLET_RESULT_FILE (`<file>` with ".rank<k>" before ".json") so only rank 0's
// is the stage's result. Pure.
std::map<std::string, std::string> RankEnv(std::map<std::string, std::string> base, int rank, int world, int port);

// Starts `world` copies of `spec` through `runner` (rank k with RankEnv(spec.env, k, world, port))
// and pumps them until all have ended, each on a thread of its own. `on_output` receives whole
// lines, prefixed "[rankN]: ", from one thread at a time. `deadline`, `should_stop` (may be empty),
// `grace` and `poll` mean what they mean for RunningProcess::Run. Blocks until every rank is
// reaped. NotFound/Invalid/Internal as ProcessRunner::Start when a rank cannot start (the ranks
// already started are ended first). Thread-safe: shares nothing between calls.
Result<RankGroupResult> RunRankGroup(proc::ProcessRunner& runner, const proc::ProcessSpec& spec, int world, int port,
                                     std::chrono::steady_clock::time_point deadline,
                                     const std::function<void(std::string_view)>& on_output,
                                     const std::function<bool()>& should_stop, std::chrono::milliseconds grace,
                                     std::chrono::milliseconds poll);

}  // namespace gauntlet::worker
