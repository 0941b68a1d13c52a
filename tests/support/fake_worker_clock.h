// A WorkerClock (workers/worker_clock.h) whose time moves only when told: by Advance, or by a
// SleepFor, which lets its time pass at once (a backoff or a poll interval costs no real time). A
// WaitUntil blocks, for real, until its predicate holds or the clock has been moved past its
// deadline; every move wakes the timed waits. So a test of a loop that backs off, polls or times out
// runs at once and the same way every time. Thread-safe.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "workers/worker_clock.h"

namespace gauntlet::test {

class FakeWorkerClock final : public worker::WorkerClock {
 public:
  // Starts at the real now, so that a deadline some code still takes from steady_clock is near.
  FakeWorkerClock() : now_(std::chrono::steady_clock::now()) {}

  time_point Now() override {
    std::lock_guard lock(mu_);
    return now_;
  }
  // Moves the clock on by `d` and wakes every timed wait, which then looks at its deadline. Must not
  // be called with a mutex held that a WaitUntil waits on.
  void Advance(duration d) {
    std::map<uint64_t, Waiter> waiters;
    {
      std::lock_guard lock(mu_);
      now_ += d;
      ++moves_;
      waiters = waiters_;
    }
    for (auto& [id, w] : waiters) Wake(id);
  }
  void SleepFor(duration d) override {
    Advance(d);
    std::this_thread::yield();  // a polling loop lets the threads it waits for run
  }
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, time_point deadline,
                 const std::function<bool()>& pred) override {
    uint64_t id;
    {
      std::lock_guard g(mu_);
      id = next_id_++;
      waiters_[id] = {&cv, lock.mutex()};
    }
    while (!pred()) {
      {
        std::lock_guard g(mu_);
        if (now_ >= deadline) break;
      }
      // An Advance after the look above cannot be missed: it notifies only once it could take
      // `lock`'s mutex, which happens once this wait has released it.
      cv.wait(lock);
    }
    {
      std::lock_guard g(mu_);
      waiters_.erase(id);
    }
    return pred();
  }
  uint64_t moves() {  // how many times the clock has been moved (Advance or SleepFor)
    std::lock_guard lock(mu_);
    return moves_;
  }

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mu;
  };
  // Notifies waiter `id` once its mutex is free (so it is inside cv.wait), or gives up once it has
  // left WaitUntil. mu_ is held only around try_lock, never while blocking: a waiter takes mu_ with
  // its own mutex held, and this must not deadlock with it.
  void Wake(uint64_t id) {
    while (true) {
      {
        std::lock_guard g(mu_);
        auto it = waiters_.find(id);
        if (it == waiters_.end()) return;
        if (it->second.mu->try_lock()) {
          it->second.cv->notify_all();
          it->second.mu->unlock();
          return;
        }
      }
      std::this_thread::yield();
    }
  }

  std::mutex mu_;
  time_point now_;
  uint64_t moves_ = 0, next_id_ = 0;
  std::map<uint64_t, Waiter> waiters_;
};

}  // namespace gauntlet::test
