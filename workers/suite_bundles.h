// A worker's suite bundles (core/bundle.h): each suite version's files, fetched from the daemon
// once per SHA-256, checked against it, unpacked under WORKDIR/bundles/SHA256, and kept there, so
// `{suite_dir}` names the same files on every worker whatever folder the suite came from.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "workers/daemon_link.h"

namespace gauntlet::worker {

// Owned by the worker and shared by its trials; thread-safe. The workdir's lock (proc/workdir_lock.h)
// makes this worker the folder's one user, so no other process writes WORKDIR/bundles meanwhile.
class SuiteBundles {
 public:
  // `workdir`: the worker's (absolute) folder; `daemon` (borrowed, outlives this) fetches bundles.
  SuiteBundles(std::string workdir, DaemonLink& daemon);
  // The folder holding bundle `sha256`'s files: already unpacked, or fetched, verified and unpacked
  // now (trials that need the same bundle at once wait for one fetch). An error says why (the hash is
  // not one, the daemon did not answer or has no such bundle, the bytes hash to something else, the
  // archive is malformed or cannot be written); nothing half-written is ever answered.
  Result<std::string> Folder(const std::string& sha256);

 private:
  const std::string root_;  // WORKDIR/bundles
  DaemonLink& daemon_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<std::mutex>> fetching_;  // per hash; guarded by mu_
};

}  // namespace gauntlet::worker
