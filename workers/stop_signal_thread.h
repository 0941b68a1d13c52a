// The worker's stop signals: SIGTERM/SIGINT, waited for on a thread of their own (workers/worker.cc).
#pragma once
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace gauntlet::worker {

// Waits for SIGTERM/SIGINT on a thread of its own (they are blocked everywhere else): the first
// starts a drain, a second stops the running trials.
class StopSignalThread {
 public:
  StopSignalThread(sigset_t set, std::function<void(int)> on_first, std::function<void()> on_second)
      : set_(set), on_first_(std::move(on_first)), on_second_(std::move(on_second)) {
    thread_ = std::thread([this] { Wait(); });
  }
  ~StopSignalThread() { Release(); }

  // Ends the thread whether zero, one or two signals came. The SIGTERM it sends itself is taken as
  // "quit" by either sigwait, never as a drain that would wait for a second signal forever (which
  // once kept batch jobs running after their worker stopped); nor may a drain that timed out leave
  // the thread waiting for that second signal.
  void Release() {
    if (!thread_.joinable()) return;
    quitting_ = true;
    if (!done_) pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }

 private:
  void Wait() {
    int sig = 0;
    sigwait(&set_, &sig);
    if (!quitting_) {
      on_first_(sig);
      sigwait(&set_, &sig);
      if (!quitting_) on_second_();
    }
    done_ = true;
  }

  sigset_t set_;
  std::function<void(int)> on_first_;
  std::function<void()> on_second_;
  std::atomic<bool> quitting_{false}, done_{false};
  std::thread thread_;
};

}  // namespace gauntlet::worker
