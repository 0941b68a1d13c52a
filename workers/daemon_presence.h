// What a worker says when it loses its daemon and when it finds it again (the lease loop's calls):
// one warning when calls start failing, with why; a reminder each minute while it lasts; and one line
// when the daemon answers again, with how long it was away. Before, a worker whose daemon went away
// retried in silence. Not thread-safe: the lease loop's alone.
#pragma once
#include <chrono>
#include <optional>
#include <string>

namespace gauntlet::worker {

class DaemonPresence {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DaemonPresence(std::string server) : server_(std::move(server)) {}
  // A call found the daemon unreachable at `now` (`detail`: why, as the link said).
  void Unreachable(Clock::time_point now, const std::string& detail);
  // A call reached it at `now`.
  void Reachable(Clock::time_point now);

 private:
  std::string server_;
  std::optional<Clock::time_point> lost_since_, last_said_;
};

}  // namespace gauntlet::worker
