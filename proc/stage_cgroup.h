// A cgroup v2 per supervised process (a stage, a preflight), where the host lets the worker create
// them: a child of the worker's own cgroup, removed when the process ends. It is the second net
// under the stage keeper (proc/stage_keeper.h): cgroup.kill ends every member at once, whatever
// it did to its parentage, and cgroup.procs says whether anything is left.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::proc {

// How the worker contains what its stages start. Process-wide; read at each Start.
enum class Containment {
  kAuto,       // a cgroup per process where the host allows it, the keeper always
  kSubreaper,  // the keeper alone (a host without cgroup v2 delegation, or a test of that path)
};
// Sets the mode for every later Start. Thread-safe.
void SetContainment(Containment mode);
Containment GetContainment();

// What a cgroup's memory.events (or pids.events) counts: "max" (the limit was hit), "oom" and
// "oom_kill" (the OOM killer ended a member). A plain value.
struct CgroupEvents {
  int64_t max = 0, oom = 0, oom_kill = 0;
};
// Parses the "key value" lines of memory.events / pids.events; unknown keys and malformed lines
// are skipped. Pure.
CgroupEvents ParseCgroupEvents(std::string_view text);

// The limits a stage gets when its suite sets none: memory.max at 90% of the node's RAM (a stage
// may not take the memory the worker itself needs), pids.max at 16,384. Computed once; thread-safe.
struct DefaultLimits {
  int64_t memory_bytes = 0;
  int64_t pids = 0;
};
DefaultLimits DefaultStageLimits();

class StageCgroup {
 public:
  // A fresh cgroup for one process; null where cgroups are off (kSubreaper) or the host refuses
  // (no cgroup v2 mount, read-only, no cgroup.kill: kernels before 5.14). Thread-safe.
  // `memory_bytes` and `pids` (0: none) are written as memory.max (with memory.swap.max 0, so the
  // limit is not a swap storm) and pids.max where the host delegates those controllers; where it
  // does not, the cgroup is made without them (memory_limit() and pids_limit() say 0) and the
  // worker logs so once.
  static std::unique_ptr<StageCgroup> Create(int64_t memory_bytes = 0, int64_t pids = 0);
  // Whether Create can succeed on this host (probes once). Thread-safe.
  static bool Available();
  ~StageCgroup();  // KillAndRemove(2 s)

  const std::string& path() const { return path_; }
  // The pids in it now (cgroup.procs).
  std::vector<pid_t> Members() const;
  // Kills every member (cgroup.kill), waits up to `wait` for it to empty, reads its memory and
  // pids events (memory_events(), pids_events() keep them), removes the folder; true if it
  // emptied. Idempotent.
  bool KillAndRemove(std::chrono::milliseconds wait);
  int64_t memory_limit() const { return memory_limit_; }  // bytes memory.max holds; 0: none
  int64_t pids_limit() const { return pids_limit_; }      // pids.max; 0: none
  // memory.events and pids.events as read now, or as last read before the folder was removed.
  CgroupEvents memory_events();
  CgroupEvents pids_events();

 private:
  explicit StageCgroup(std::string path) : path_(std::move(path)) {}
  void ReadEvents();
  std::string path_;
  bool removed_ = false;
  int64_t memory_limit_ = 0, pids_limit_ = 0;
  CgroupEvents memory_events_, pids_events_;
};

}  // namespace gauntlet::proc
