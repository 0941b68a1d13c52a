#include "workers/daemon_presence.h"

#include <spdlog/spdlog.h>

namespace gauntlet::worker {

namespace {
long Seconds(DaemonPresence::Clock::duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}
}  // namespace

void DaemonPresence::Unreachable(Clock::time_point now, const std::string& detail) {
  if (!lost_since_) {
    lost_since_ = last_said_ = now;
    spdlog::warn("lost the daemon at {}: {}; its running trials go on, and the worker keeps trying", server_, detail);
    return;
  }
  if (now - *last_said_ >= std::chrono::minutes(1)) {
    last_said_ = now;
    spdlog::warn("still cannot reach the daemon at {} after {} s: {}", server_, Seconds(now - *lost_since_), detail);
  }
}

void DaemonPresence::Reachable(Clock::time_point now) {
  if (!lost_since_) return;
  spdlog::info("reached the daemon at {} again after {} s", server_, Seconds(now - *lost_since_));
  lost_since_.reset();
  last_said_.reset();
}

}  // namespace gauntlet::worker
