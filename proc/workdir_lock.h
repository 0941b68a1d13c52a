// One worker per --workdir: at start a worker clears what earlier workers left in its folder
// (stale trial folders, processes that still name them), so a second worker on the same folder
// would kill the first one's running stages. The folder's lock file says who holds it.
#pragma once
#include <memory>
#include <string>

#include "core/status.h"

namespace gauntlet::proc {

class WorkdirLock {
 public:
  // Creates `dir` if needed and takes its lock (an flock on dir/.gauntlet-worker.lock, released by
  // the kernel when this process ends however it ends). Conflict names the pid that holds it.
  static Result<std::unique_ptr<WorkdirLock>> Acquire(const std::string& dir);
  ~WorkdirLock();
  WorkdirLock(const WorkdirLock&) = delete;
  WorkdirLock& operator=(const WorkdirLock&) = delete;

 private:
  explicit WorkdirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace gauntlet::proc
