// Rate-limits a repeated log line: at most one per period, the lines held back counted into the
// next one. A flood of the same failure (a full descriptor table fails every accept) then costs a
// line a period, not hundreds of megabytes of log.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

namespace gauntlet::net {

// Thread-safe.
class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LogLimiter(std::chrono::milliseconds period) : period_(period) {}
  // True if a line may be written at `now`; *held is then how many were held back since the last
  // one (left alone when false).
  bool Allow(int64_t* held, Clock::time_point now = Clock::now()) {
    std::lock_guard lock(mu_);
    if (seen_ && now - last_ < period_) {
      ++held_;
      return false;
    }
    seen_ = true;
    last_ = now;
    *held = held_;
    held_ = 0;
    return true;
  }

 private:
  std::mutex mu_;
  std::chrono::milliseconds period_;
  bool seen_ = false;
  Clock::time_point last_{};
  int64_t held_ = 0;
};

}  // namespace gauntlet::net
