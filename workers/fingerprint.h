// A suite's software fingerprint (framework, CUDA, driver versions), which results are filed under:
// the JSON its "fingerprint" command prints, computed once per suite version and folder per worker,
// since the command costs a process start every trial would otherwise pay.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>

#include "workers/stage.h"

namespace gauntlet {

// Owned by the worker (RunWorker) and shared by its trials; thread-safe. Two trials that miss at
// once may both run the command; the later answer is the one kept.
class FingerprintCache {
 public:
  // The fingerprint for ctx's suite: {} when the suite declares no command; else the command's JSON
  // object, or {"output": its text}, or {"error": why it could not start}, with "exit_code" added
  // when it failed. Runs the command through ctx.processes on a miss (60 s at most).
  nlohmann::json Get(const TrialContext& ctx);

 private:
  std::mutex mu_;
  std::map<std::string, nlohmann::json> by_suite_;  // "name@version@folder"; guarded by mu_
};

}  // namespace gauntlet
