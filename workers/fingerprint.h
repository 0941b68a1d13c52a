// A suite's software fingerprint (framework, CUDA, driver versions), which results are filed under:
// the JSON its "fingerprint" command prints, computed once per suite version and folder per worker,
// since the command costs a process start every trial would otherwise pay. A command that fails
// is no fingerprint: it is never kept, and the trial that asked for it ends infra_error (the
// software it would be filed under is unknown), so the next trial asks again.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>

#include "core/status.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// Owned by the worker (RunWorker) and shared by its trials; thread-safe. Two trials that miss at
// once may both run the command; the later answer is the one kept.
class FingerprintCache {
 public:
  // The fingerprint for ctx's suite version: {} when the suite declares no command; else the
  // command's JSON object, or {"output": its text}. Unavailable (saying why: it could not start,
  // exited non-zero, printed nothing or ran past 60 s) when the command failed; a failure is not
  // cached. Runs the command through ctx.processes on a miss.
  Result<nlohmann::json> Get(const TrialContext& ctx);

 private:
  std::mutex mu_;
  std::map<std::string, nlohmann::json> by_suite_;  // "name@version@folder"; guarded by mu_; successes only
};

}  // namespace gauntlet::worker
