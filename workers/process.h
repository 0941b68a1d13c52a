// Process supervision, the real side of workers/process_runner.h: argv without a shell, its own
// process group, a fresh working directory, a given environment, output merged into one pipe, and a
// stop that reaches every descendant (SIGTERM to the group, SIGKILL after a grace period).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "workers/classifier/signals.h"  // SignalName: how logs and signatures name a signal
#include "workers/process_runner.h"      // ProcessSpec, ExitInfoProc

namespace gauntlet {

// Resolves argv[0] against a PATH value; returns it unchanged if it holds a '/' or is not found.
std::string FindProgram(const std::string& name, const std::string& path);

// One child and its process group, owned by the caller of Start. Not thread-safe: one thread drives
// it. Used directly where no seam is wanted (slurm's sbatch/squeue), else through
// SystemProcessRunner.
class Process {
 public:
  // Starts the process, owned by the caller; NotFound if the program does not exist or is not
  // executable, Invalid for an empty argv, Internal when pipe or fork fail.
  static Result<std::unique_ptr<Process>> Start(const ProcessSpec& spec);
  ~Process();  // stops the group if still running

  pid_t pid() const { return pid_; }  // the leader, which is also the group's id
  // Pumps output to `on_output` until the process exits, `deadline` passes (then stops it: timed_out)
  // or `should_stop` returns true (checked every `poll`; then stops it: stopped). After the leader
  // exits, the rest of its group is stopped too, so no descendant outlives the stage.
  ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                   const std::function<void(std::string_view)>& on_output, const std::function<bool()>& should_stop,
                   std::chrono::milliseconds grace = std::chrono::seconds(5),
                   std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  // Sends SIGTERM to the group, waits up to `grace` for the group to be gone, then SIGKILLs it.
  void StopGroup(std::chrono::milliseconds grace);
  // Non-blocking check: has the leader exited? Fills `out` if so.
  bool Reap(ExitInfoProc* out);
  int output_fd() const { return out_fd_; }  // the read end of the merged output; owned by this

 private:
  Process() = default;
  bool GroupAlive() const;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool reaped_ = false;
  ExitInfoProc exit_;
};

// The real ProcessRunner: every Start is a Process::Start, and the handle drives that Process.
// Stateless, so one instance serves every thread; RunWorker owns the worker's.
class SystemProcessRunner final : public ProcessRunner {
 public:
  Result<std::unique_ptr<RunningProcess>> Start(const ProcessSpec& spec) override;
};

}  // namespace gauntlet
