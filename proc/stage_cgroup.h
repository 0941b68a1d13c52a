// A cgroup v2 per supervised process (a stage, a preflight), where the host lets the worker create
// them: a child of the worker's own cgroup, removed when the process ends. It is the second net
// under the stage keeper (proc/stage_keeper.h): cgroup.kill ends every member at once, whatever
// it did to its parentage, and cgroup.procs says whether anything is left.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
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

class StageCgroup {
 public:
  // A fresh cgroup for one process; null where cgroups are off (kSubreaper) or the host refuses
  // (no cgroup v2 mount, read-only, no cgroup.kill: kernels before 5.14). Thread-safe.
  static std::unique_ptr<StageCgroup> Create();
  // Whether Create can succeed on this host (probes once). Thread-safe.
  static bool Available();
  ~StageCgroup();  // KillAndRemove(2 s)

  const std::string& path() const { return path_; }
  // The pids in it now (cgroup.procs).
  std::vector<pid_t> Members() const;
  // Kills every member (cgroup.kill), waits up to `wait` for it to empty, removes the folder;
  // true if it emptied. Idempotent.
  bool KillAndRemove(std::chrono::milliseconds wait);

 private:
  explicit StageCgroup(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool removed_ = false;
};

}  // namespace gauntlet::proc
