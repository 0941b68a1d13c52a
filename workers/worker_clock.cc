#include "workers/worker_clock.h"

#include <thread>

namespace gauntlet::worker {
namespace {

class SteadyClock final : public WorkerClock {
 public:
  time_point Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(duration d) override { std::this_thread::sleep_for(d); }
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point deadline,
                 const std::function<bool()>& pred) override {
    return cv.wait_until(lock, deadline, pred);
  }
};

}  // namespace

WorkerClock& SteadyWorkerClock() {
  static SteadyClock clock;  // stateless: safe from any thread, and never destroyed while used
  return clock;
}

}  // namespace gauntlet::worker
