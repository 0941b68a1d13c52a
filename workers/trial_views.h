// Each trial's own view of the machine (docs/DECISIONS.md "Its own view of the machine"): every
// process of its stages runs in a mount namespace of its own, where /tmp is the trial's own folder
// and the folders the worker and the suite need under the host's /tmp are bound back in, and
// (single-process stages) in a PID namespace of its own, whose /proc shows only its stage. Built
// on the kernel's namespaces directly (proc/stage_init.h), under the trial's own user
// (workers/trial_users.h): a view needs root to make, and only hides what the user's ids already
// keep from it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "proc/process_runner.h"

namespace gauntlet::worker {

class TrialViews {
 public:
  // The worker's choice, from --trial-namespaces (auto | on | off) and --trial-share (folders under
  // /tmp every trial still sees): auto is on where trial users are (`users_on`) and a probe process
  // gets its own mount and PID namespaces here, else off saying why; on refuses (null, *error)
  // where it cannot be; off is off. `workdir` is the worker's, kept visible. `prog` is a program a
  // probe runs (sh). Not thread-safe; call once at start.
  static std::unique_ptr<TrialViews> Configure(const std::string& mode, bool users_on, const std::string& workdir,
                                               const std::vector<std::string>& shares, const std::string& prog,
                                               std::string* error);
  bool enabled() const { return enabled_; }
  // "own mount and PID namespaces (a private /tmp, its own /proc)" or "namespaces off: <why>".
  const std::string& description() const { return description_; }

  // Makes the trial's view folder `folder` (root's; its tmp/ the trial's /tmp, 1777 like the
  // host's, with root's folders for each kept path inside, so the trial's user cannot swap one for a
  // link) and returns the view its processes get: /tmp from there, and each of the worker's
  // workdir, the shares and `keep` (the suite's folder, the kernel recorder's) that lies under the
  // host's /tmp bound back at its path. Internal when a folder cannot be made. Thread-safe.
  Result<proc::OwnView> Prepare(const std::string& folder, const std::vector<std::string>& keep) const;

  // The folders under /tmp among `paths`, made absolute and normal, without those inside another
  // of them, in order. Pure.
  static std::vector<std::string> UnderTmp(const std::vector<std::string>& paths);

 private:
  bool enabled_ = false;
  std::string description_;
  std::string workdir_;
  std::vector<std::string> shares_;
};

}  // namespace gauntlet::worker
