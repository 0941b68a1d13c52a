// Ctrl-C while a command follows a sweep it started (`submit --wait`): the sweep is the daemon's and
// keeps running, so say so and how to stop it, and stop it only when asked again.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

#include <signal.h>

#include "net/client_config.h"

namespace gauntlet::cli {

// While it lives, SIGINT does not kill the process: the first prints
// "^C: sweep N keeps running; gauntlet cancel N stops it" (and that a second Ctrl-C within
// kSecondWindowMs cancels it) and exits 130 once the window passes; a second within the window
// cancels the sweep (POST /api/v1/sweeps/N/cancel over `conn`), says so, and exits 130. It installs
// a SIGINT handler (a self-pipe) for its lifetime, so one at a time; the destructor puts the old
// handler back and stops its thread.
class WaitInterrupt {
 public:
  static constexpr int kSecondWindowMs = 3000;
  WaitInterrupt(const net::Conn& conn, int64_t sweep);
  ~WaitInterrupt();
  WaitInterrupt(const WaitInterrupt&) = delete;
  WaitInterrupt& operator=(const WaitInterrupt&) = delete;

 private:
  void Run();

  const net::Conn conn_;
  const int64_t sweep_;
  struct sigaction old_action_ {};
  int pipe_[2] = {-1, -1};  // the SIGINT handler writes a byte to [1]; Run() polls [0]
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace gauntlet::cli
