// The worker's time seam: every wait of the agent (backoffs, poll intervals, readiness polling, the
// heartbeat cadence, the drain timeout) and every deadline it computes goes through a WorkerClock, as
// the daemon's scheduler runs on daemon/scheduler.h's Clock. The real one is std::chrono::steady_clock
// with real sleeps and waits; tests/support/fake_worker_clock.h moves by hand, so tests never sleep.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace gauntlet::worker {

class WorkerClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;
  virtual ~WorkerClock() = default;
  // This clock's now; deadlines handed to a ProcessRunner are on this clock. Thread-safe.
  virtual time_point Now() = 0;
  // Blocks the calling thread while `d` of this clock's time passes (a backoff, a poll interval).
  // Call it with no lock held that a WaitUntil of this clock waits on. Thread-safe.
  virtual void SleepFor(duration d) = 0;
  // With `lock` held (on `cv`'s mutex): waits until pred() holds or Now() reaches `deadline`,
  // waking on cv's notifications as std::condition_variable::wait_until does; returns pred(), with
  // `lock` held again. Thread-safe.
  virtual bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point deadline,
                         const std::function<bool()>& pred) = 0;
};

// The process's real clock (steady_clock, real sleeps and waits). Lives for the whole process;
// thread-safe.
WorkerClock& SteadyWorkerClock();

}  // namespace gauntlet::worker
