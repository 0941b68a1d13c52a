// Trial users (docs/DECISIONS.md "A stage is not the worker"): every stage of a trial runs as a user
// of its own, allocated per trial from a range of ids the worker owns, so a stage cannot read the
// worker's environment, files or memory, cannot signal the worker or another trial, and cannot read
// or write another trial's work directory (each 0700, owned by its trial's user). Per trial rather
// than per GPU slot: what a trial leaves behind (a file in /tmp or /dev/shm, a stray process) is
// never readable by the next trial, which a slot's user would be. The ids need no account: the
// kernel checks numbers, and a number no account names owns nothing but what the worker gives it.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gauntlet::worker {

struct TrialUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

class TrialUsers {
 public:
  // The worker's choice, from --trial-users (auto | on | off) and --trial-uids FIRST-LAST:
  //   auto: on where the worker is root and a trial user can run the programs the node's suites
  //         start with (`programs`, resolved on `path`: sh, python3), else off, saying why;
  //   on:   on where the worker is root (whatever the programs); a worker that is not root refuses
  //         to start (returns nullopt with *error);
  //   off:  off, saying so.
  // Both on and auto need a trial's user to reach `workdir` (every folder above it open to others
  // for search): auto is off otherwise, on refuses. *error: why the options cannot be used (a bad
  // range, `on` without root or without a reachable workdir); then null. Not thread-safe.
  static std::unique_ptr<TrialUsers> Configure(const std::string& mode, const std::string& range,
                                               const std::vector<std::string>& programs, const std::string& path,
                                               const std::string& workdir, std::string* error);

  bool enabled() const { return enabled_; }
  // "trial users (uids 61000-61999)" or "off: <why>", for the start-up log, the node's record and
  // every stage's report.
  const std::string& description() const { return description_; }
  // A user for one trial: the next id round the range after the last one given that no running
  // trial holds (so an id comes back only after the others were given); nullopt when off or when
  // every id of the range is held. Thread-safe.
  std::optional<TrialUser> Acquire();
  // Gives `u`'s id back (after the trial's processes are gone and its folder removed). Thread-safe.
  void Release(const TrialUser& u);

  // True when `uid` may `access(path, mode)` (X_OK: run a program, or enter a folder, with every
  // folder above it searchable), checked in a child that takes the user; false when it may not or
  // the check failed. Needs root.
  static bool Can(uid_t uid, const std::string& path, int mode);

 private:
  bool enabled_ = false;
  std::string description_;
  uid_t first_ = 0, count_ = 0;
  std::mutex mu_;
  uint64_t next_ = 0;               // ids are handed out round the range: the oldest release is reused last
  std::set<uid_t> held_;
};

}  // namespace gauntlet::worker
