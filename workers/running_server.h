// A server stage's process while it serves: its output pumped into the trial log and the classifier
// on a thread of its own, so the stage can probe and benchmark the server meanwhile and learn of its
// death at once.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "classifier/classifier.h"
#include "proc/process_runner.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// Owns the process and the pump thread; `ctx` (its log, kill grace) is borrowed and must outlive
// this. exited, WaitExit and Classify are safe from any thread; Stop (and so destruction) from one
// thread at a time, the stage's.
class RunningServer {
 public:
  RunningServer(std::unique_ptr<proc::RunningProcess> p, const TrialContext& ctx, std::vector<SignatureRule> rules);
  ~RunningServer();  // Stop()
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  bool exited();  // the process ended, on its own or stopped
  // Waits up to `d` (on the trial's clock) for the process to exit on its own; true if it has. This is how the ready loop
  // and a failed request learn of a death at once instead of after a fixed pause.
  bool WaitExit(std::chrono::steady_clock::duration d);
  // Stops the whole group (SIGTERM, grace, SIGKILL), waits for the pump, and returns how the
  // process ended; idempotent (later calls return the same).
  proc::ExitInfoProc Stop();
  // The classifier's judgement of the log so far with `e` as the ending; may be called repeatedly.
  classifier::Classification Classify(const proc::ExitInfoProc& e);

 private:
  std::unique_ptr<proc::RunningProcess> proc_;
  WorkerClock& clock_;  // ctx's: WaitExit's time
  std::mutex mu_;
  std::condition_variable exited_cv_;
  classifier::Classifier classifier_;  // guarded by mu_
  std::thread pump_;
  std::atomic<bool> stop_{false};
  bool exited_ = false;  // guarded by mu_
  proc::ExitInfoProc exit_;    // guarded by mu_
};

}  // namespace gauntlet::worker
