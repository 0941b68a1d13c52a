// A mutex that clang's thread-safety analysis understands (-Wthread-safety; libstdc++'s std::mutex
// carries no annotations), its scoped locks, and the annotation macros (GUARDED_BY, REQUIRES, ...),
// as abseil's Mutex/MutexLock. Under g++ the annotations expand to nothing and these are plain
// std::mutex wrappers of the same cost. Condition variables keep working: a UniqueLock lends its
// std::unique_lock (native()) to std::condition_variable's waits.
#pragma once
#include <mutex>

#if defined(__clang__)
#define GAUNTLET_TSA(x) __attribute__((x))
#else
#define GAUNTLET_TSA(x)
#endif

#define CAPABILITY(x) GAUNTLET_TSA(capability(x))
#define SCOPED_CAPABILITY GAUNTLET_TSA(scoped_lockable)
#define GUARDED_BY(x) GAUNTLET_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) GAUNTLET_TSA(pt_guarded_by(x))
#define REQUIRES(...) GAUNTLET_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) GAUNTLET_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) GAUNTLET_TSA(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) GAUNTLET_TSA(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) GAUNTLET_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) GAUNTLET_TSA(assert_capability(x))
#define RETURN_CAPABILITY(x) GAUNTLET_TSA(lock_returned(x))
// Turns the analysis off for one function. Every use says why next to it.
#define NO_THREAD_SAFETY_ANALYSIS GAUNTLET_TSA(no_thread_safety_analysis)

namespace gauntlet {

// std::mutex with annotations. Not recursive; not movable.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // The std::mutex inside, for what needs one by type (a std::unique_lock for a condition
  // variable). Locking it directly hides the locking from the analysis: use UniqueLock instead.
  std::mutex& native() RETURN_CAPABILITY(this) { return mu_; }

 private:
  std::mutex mu_;
};

// std::lock_guard over a Mutex: held from construction to the end of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// std::unique_lock over a Mutex: held from construction, may be unlocked and locked again within
// its scope, released at its end if held. native() lends the std::unique_lock to a
// std::condition_variable wait, which returns with it held again (so the analysis, which does not
// see inside the wait, stays right); a wait's predicate that reads guarded members is annotated
// REQUIRES(mu), which is true: the wait calls it with the lock held.
class SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.native()) {}
  ~UniqueLock() RELEASE() {}
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;
  void lock() ACQUIRE() { lock_.lock(); }
  void unlock() RELEASE() { lock_.unlock(); }
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// The reverse of a MutexLock: releases a held Mutex for its scope and takes it again at the end,
// also when an exception leaves the scope (callbacks run unlocked, say). (The analysis reads a
// scoped capability's destructor as undoing its constructor, hence RELEASE() on a destructor that
// locks.)
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mu) RELEASE(mu) : mu_(mu) { mu_.unlock(); }
  ~MutexUnlock() RELEASE() { mu_.lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace gauntlet
