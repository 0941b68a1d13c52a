// A cgroup per supervised process (a stage, a preflight), where the host lets the worker create
// them: a child of the worker's own cgroup, removed when the process ends. In the v2 hierarchy it
// is the second net under the stage keeper (proc/stage_keeper.h): cgroup.kill ends every member at
// once, whatever it did to its parentage, and cgroup.procs says whether anything is left. Its
// limits go where the host keeps the controllers: memory.max and pids.max on v2, or, on a v1 or
// hybrid host (many GPU clusters), memory.limit_in_bytes and pids.max in a folder of the v1 memory
// and pids hierarchies (proc/cgroup_dirs.h), which the process joins beside its v2 one.
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

// The limits a stage gets when its suite sets none (where cgroup v2 holds them): memory.max at 90% of the node's RAM (a stage
// may not take the memory the worker itself needs), pids.max at 16,384. Computed once; thread-safe.
struct DefaultLimits {
  int64_t memory_bytes = 0;
  int64_t pids = 0;
};
DefaultLimits DefaultStageLimits();

class StageCgroup {
 public:
  // A fresh cgroup for one process; null where cgroups are off (kSubreaper) or the host has
  // neither a v2 cgroup with cgroup.kill (Linux 5.14) nor, for a limit asked, a v1 hierarchy the
  // worker may create in. Thread-safe. `memory_bytes` and `pids` (0: none) are written as
  // memory.max (with memory.swap.max 0, so the limit is not a swap storm) and pids.max where v2
  // delegates those controllers, else as v1's memory.limit_in_bytes (memsw too, where swap is
  // accounted) and pids.max; where neither can hold one, the cgroup is made without it
  // (memory_limit() or pids_limit() say 0) and the worker logs so once. `v1` false: no v1 folders
  // (limits only a worker's defaults, not worth their cost: docs/DECISIONS.md "Limits on v1").
  static std::unique_ptr<StageCgroup> Create(int64_t memory_bytes = 0, int64_t pids = 0, bool v1 = true);
  // Whether Create gives a v2 cgroup that cgroup.kill can end (probes once). Thread-safe.
  static bool Available();
  ~StageCgroup();  // KillAndRemove(2 s)

  // The cgroup.procs files a process writes "0" into to join each of its folders (v2, v1 memory,
  // v1 pids; one to three).
  std::vector<std::string> ProcsFiles() const;
  // Which hierarchy holds its limits: "cgroup v2", "cgroup v1", or "" when none is held.
  std::string LimitsHeldBy() const;
  // The pids in it now (cgroup.procs).
  std::vector<pid_t> Members() const;
  // Kills every member (cgroup.kill on v2; on v1 alone, SIGKILL to each member, round after round),
  // waits up to `wait` for it to empty, reads its memory and pids events (memory_events(),
  // pids_events() keep them), removes its folders; true if it emptied. Idempotent.
  bool KillAndRemove(std::chrono::milliseconds wait);
  int64_t memory_limit() const { return memory_limit_; }  // bytes memory.max holds; 0: none
  int64_t pids_limit() const { return pids_limit_; }      // pids.max; 0: none
  // memory.events (v1: memory.oom_control's oom_kill) and pids.events as read now, or as last read
  // before the folders were removed.
  CgroupEvents memory_events();
  CgroupEvents pids_events();

 private:
  StageCgroup() = default;
  void ReadEvents();
  void Remove();
  std::string v2_, v1_memory_, v1_pids_;  // its folders; "" where it has none
  bool removed_ = false;
  int64_t memory_limit_ = 0, pids_limit_ = 0;
  CgroupEvents memory_events_, pids_events_;
};

}  // namespace gauntlet::proc
