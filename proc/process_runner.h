// The seam between the worker and the processes it starts, in the spirit of ninja's CommandRunner:
// stages and the trial runner ask a ProcessRunner to start a ProcessSpec and drive the
// RunningProcess it hands back, never fork themselves. The real runner is SystemProcessRunner
// (proc/process.h); tests put scripted processes behind the same interface
// (tests/support/fake_process_runner.h), so stage and trial logic is tested without processes.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gauntlet::proc {

// A process's own view of the machine: a mount namespace in which each bind is mounted, in order,
// over its target (both host paths, folders; every source is opened before the first mount, so a
// source may lie under an earlier target), and, with own_pids, a PID namespace whose /proc shows
// only its own processes.
struct OwnView {
  struct Bind {
    std::string source, target;
  };
  std::vector<Bind> binds;
  bool own_pids = true;
};

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] without '/' is looked up in env PATH
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::string cwd;
  // Limits for the process's cgroup (memory.max, pids.max), where the host delegates those
  // controllers (proc/stage_cgroup.h); 0: none.
  int64_t memory_limit_bytes = 0;
  int64_t pids_limit = 0;
  // Whether the limits were asked for (a suite's), not a worker's defaults: only then are they worth
  // a v1 cgroup's folders, where v2 cannot hold them (docs/DECISIONS.md "Limits on v1").
  bool limits_declared = true;
  // The user and group the program runs as (supplementary groups dropped), when set: a trial's own
  // user, so it cannot read, signal or write the worker or another trial (docs/DECISIONS.md "A
  // stage is not the worker"). Its keeper stays the worker's, to stop all of it. Needs root.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  // Its own view of the machine, when set (docs/DECISIONS.md "Its own view of the machine"). Needs root.
  std::optional<OwnView> view;
};

struct ExitInfoProc {
  std::optional<int> exit_code;  // set when it exited
  std::optional<int> signal;     // set when a signal ended it
  bool timed_out = false;        // we stopped it at its deadline
  bool stopped = false;          // we stopped it on request (cancel, lease lost, drain)
  // The kernel's OOM killer ended something in the process's cgroup (memory.events oom_kill rose),
  // and the memory limit the cgroup held (0: none was set).
  bool oom_killed = false;
  int64_t memory_limit_bytes = 0;
  // A fork was refused at the cgroup's pids.max (pids.events max rose), and that limit (0: none).
  bool pids_limited = false;
  int64_t pids_limit = 0;
};

// One started process and its process group, owned by whoever Start handed it to. Not thread-safe:
// one thread drives it (the server stage's pump thread, or the stage's own).
class RunningProcess {
 public:
  // Destroying a handle stops the group if it still runs: no descendant outlives its stage.
  virtual ~RunningProcess() = default;
  // Pumps merged stdout/stderr to `on_output` until the process exits, `deadline` passes (returns
  // timed_out) or `should_stop` (may be empty; checked every `poll`) says so (returns stopped). A
  // stop, a timeout and a leader that exits with descendants left all end the whole group: SIGTERM,
  // then SIGKILL after `grace`. Returns how the leader ended. Call once.
  virtual ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                           const std::function<void(std::string_view)>& on_output,
                           const std::function<bool()>& should_stop, std::chrono::milliseconds grace,
                           std::chrono::milliseconds poll) = 0;
  // Ends the group now (SIGTERM, up to `grace`, then SIGKILL) and reaps the leader; idempotent.
  virtual void StopGroup(std::chrono::milliseconds grace) = 0;
};

// Starts processes. Thread-safe: a worker's trials start theirs concurrently through one runner.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // The started process, owned by the caller; NotFound when the program does not exist or is not
  // executable (the config's fault), Invalid for an empty argv, Internal when the system refuses.
  virtual Result<std::unique_ptr<RunningProcess>> Start(const ProcessSpec& spec) = 0;
};

}  // namespace gauntlet::proc
