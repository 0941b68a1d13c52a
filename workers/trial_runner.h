// Runs one leased trial on the worker: a fresh work directory, the suite's fingerprint, its stages
// in order (the first failure ends the trial), heartbeats and log shipping meanwhile, and the final
// report, retried until the daemon takes it (DESIGN.md "Worker protocol").
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/hardware.h"

namespace gauntlet {

struct TrialRunnerEnv {
  std::string server, token;
  std::string node_name;
  const Inventory* inv = nullptr;
  std::string workdir;       // the worker's folder; each trial gets workdir/trial-ID
  std::string exe_dir;
  std::vector<std::string> pass_env;
  std::chrono::milliseconds kill_grace{5000};
  // Fingerprints by "suite@version", computed once per worker (shared, guarded by fp_mu).
  std::mutex* fp_mu = nullptr;
  std::map<std::string, nlohmann::json>* fingerprints = nullptr;
  std::atomic<bool>* abort_all = nullptr;  // set when the worker must stop its trials now
};

// Runs the trial described by a lease grant (the daemon's JSON); returns when it has been reported
// (or the lease was lost, or abort_all was set and the report could not be delivered).
void RunTrial(const TrialRunnerEnv& env, const nlohmann::json& grant);

}  // namespace gauntlet
