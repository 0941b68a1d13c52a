// Process supervision, the real side of proc/process_runner.h: argv without a shell, its own
// process group, a fresh working directory, a given environment, output merged into one pipe, and a
// stop that reaches every descendant, in the group or not (SIGTERM, SIGKILL after a grace period).
// Each process runs under a stage keeper (proc/stage_keeper.h), a subreaper that takes in every
// orphan of its stage, and in a cgroup of its own where the host allows (proc/stage_cgroup.h):
// when Run returns, nothing the process started is left, however it detached (setsid, double
// fork, env -i).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "proc/process_runner.h"      // ProcessSpec, ExitInfoProc
#include "proc/stage_cgroup.h"

namespace gauntlet::proc {

// Resolves argv[0] against a PATH value; returns it unchanged if it holds a '/' or is not found.
std::string FindProgram(const std::string& name, const std::string& path);

// Kills every child of this process that no Process started (orphans of a keeper that was itself
// killed, re-parented here because the worker is a subreaper) and reaps them; returns how many.
// Looks only if a keeper has ended other than by exit 0 since the last look (the first call always
// looks): a keeper that exits 0 has no child left, so only the others can have left orphans here.
// Only this module's own children are waited for by pid, so no one else's exit status is taken.
// Thread-safe.
int KillStrayChildren();
// Kills what an earlier run of a worker on `workdir` left behind (it was SIGKILLed mid-trial):
// every process whose environment names a trial folder under `workdir`, whatever its parent now
// is, then removes those trial folders. Logs how many it killed. Not for concurrent use on one workdir.
void KillTrialLeftovers(const std::string& workdir);

// One child and its process group, owned by the caller of Start. Not thread-safe: one thread drives
// it. Used directly where no seam is wanted (slurm's sbatch/squeue), else through
// SystemProcessRunner.
class Process {
 public:
  // Starts the process, owned by the caller; NotFound if the program does not exist or is not
  // executable, Invalid for an empty argv, Internal when pipe or fork fail.
  static Result<std::unique_ptr<Process>> Start(const ProcessSpec& spec);
  ~Process();  // stops the group if still running

  pid_t pid() const { return pid_; }  // the keeper, which is also the group's id
  pid_t leader() const { return leader_; }  // the program itself; -1 until the keeper has said
  // Pumps output to `on_output` until the process exits, `deadline` passes (then stops it: timed_out)
  // or `should_stop` returns true (checked every `poll`; then stops it: stopped). After the leader
  // exits, the rest of its group is stopped too, so no descendant outlives the stage.
  ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                   const std::function<void(std::string_view)>& on_output, const std::function<bool()>& should_stop,
                   std::chrono::milliseconds grace = std::chrono::seconds(5),
                   std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  // Sends SIGTERM to the group and every other descendant, waits up to `grace` for them to be gone,
  // then SIGKILLs what is left (the keeper's sweep, then the cgroup); reaps the keeper.
  void StopGroup(std::chrono::milliseconds grace);
  // Non-blocking check: has the leader exited? Fills `out` if so.
  bool Reap(ExitInfoProc* out);
  int output_fd() const { return out_fd_; }  // the read end of the merged output; owned by this

 private:
  Process() = default;
  bool KeeperGone();     // reaps the keeper if it has exited
  void ReadStatus();     // the keeper's records: the leader's pid, then its wait status
  // Waits up to `max` for news from the keeper: a record on its status pipe, or the pipe's close
  // (the keeper exiting). Woken by the pipe, not by a fixed sleep: a stage's end costs no timer.
  void AwaitStatus(std::chrono::milliseconds max);
  // Waits up to `max` for the keeper to end and be reaped; true once it is.
  bool AwaitKeeper(std::chrono::milliseconds max);
  void Contain();        // after the keeper: the cgroup's kill, then strays
  pid_t pid_ = -1;
  pid_t leader_ = -1;
  int out_fd_ = -1;
  int status_fd_ = -1;
  std::string status_buf_;
  bool leader_done_ = false;
  bool keeper_reaped_ = false;
  int keeper_status_ = 0;
  std::unique_ptr<StageCgroup> cgroup_;
  ExitInfoProc exit_;
};

// The real ProcessRunner: every Start is a Process::Start, and the handle drives that Process.
// Stateless, so one instance serves every thread; RunWorker owns the worker's.
class SystemProcessRunner final : public ProcessRunner {
 public:
  Result<std::unique_ptr<RunningProcess>> Start(const ProcessSpec& spec) override;
};

}  // namespace gauntlet::proc
