// Ctrl-C while a command follows a sweep it started (`submit --wait`): the sweep is the daemon's and
// keeps running, so say so and how to stop it, and stop it only when asked again.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

#include <signal.h>

#include "http/client_config.h"

namespace gauntlet::cli {

// While it lives, SIGINT does not kill the process: the first prints
// "^C: sweep N keeps running; gauntlet cancel N stops it" (and that a second Ctrl-C within
// kSecondWindowMs cancels it) and exits 130 once the window passes; a second within the window
// cancels the sweep (POST /api/v1/sweeps/N/cancel over `conn`), says so, and exits 130. Construct it
// on the main thread before the threads that follow the sweep start (they inherit its signal mask);
// one at a time. The destructor restores the mask and stops its thread.
class WaitInterrupt {
 public:
  static constexpr int kSecondWindowMs = 3000;
  WaitInterrupt(const http::Conn& conn, int64_t sweep);
  ~WaitInterrupt();
  WaitInterrupt(const WaitInterrupt&) = delete;
  WaitInterrupt& operator=(const WaitInterrupt&) = delete;

 private:
  void Run();

  const http::Conn conn_;
  const int64_t sweep_;
  sigset_t old_mask_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace gauntlet::cli
