// Keeps a running trial's lease: on a thread of its own it heartbeats the daemon (the first beat at
// once, so the trial shows as running), on another it ships the trial's log as it grows, and it
// learns from the answers whether the trial was cancelled or its lease lost. The two are apart so
// that a trial logging without pause (there is always more to ship) never holds back a heartbeat:
// issue 31 saw such a trial lose its lease after 16 s.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "workers/daemon_link.h"
#include "workers/log_sink.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

// Starts its threads on construction. `daemon`, `log` and `clock` (the heartbeat cadence and the
// retry backoff) are borrowed and must outlive the keeper;
// `abort_all` (may be null) cuts log retries short when the worker stops. cancel() and lost() are
// safe from any thread; Finish() and the destructor from the owning thread.
class LeaseKeeper {
 public:
  LeaseKeeper(DaemonLink& daemon, std::string lease, std::chrono::milliseconds heartbeat, LogSink& log,
              const std::atomic<bool>* abort_all, WorkerClock& clock = SteadyWorkerClock());
  ~LeaseKeeper();  // Finish()
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  bool cancel() const { return cancel_; }  // a heartbeat answer asked the trial to stop
  bool lost() const { return lost_; }      // the daemon no longer knows this lease (409)
  // Ships what the log holds (a bounded number of retries) and stops the threads; idempotent.
  void Finish();

 private:
  void BeatLoop();  // the heartbeat thread
  void ShipLoop();  // the log thread
  void Beat();
  // Sends pending log chunks; gives up for now after `rounds` failed attempts in a row.
  void Ship(int rounds);

  DaemonLink& daemon_;
  const std::string lease_;
  const std::chrono::milliseconds heartbeat_;
  LogSink& log_;
  const std::atomic<bool>* abort_all_;
  WorkerClock& clock_;
  std::atomic<bool> cancel_{false}, lost_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::thread beat_thread_, ship_thread_;
};

}  // namespace gauntlet::worker
