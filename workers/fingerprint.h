// A suite's software fingerprint (framework, CUDA, driver versions), which results are filed under:
// the JSON its "fingerprint" command prints, kept per suite version and folder per worker, since the
// command costs a process start every trial would otherwise pay. It is taken again when the node's
// software may have changed (docs/DESIGN.md, "fingerprint"): when the software stamp changes (the
// package databases and interpreter package folders the command would read, the driver's version),
// or when it is older than kFingerprintMaxAge, so an upgrade in place is filed under its own
// version without restarting the worker. A command that fails is no fingerprint: it is never kept,
// and the trial that asked for it ends infra_error (the software it would be filed under is
// unknown), so the next trial asks again.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/status.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// A kept fingerprint is taken again after this long even when no stamp changed (a backstop for
// software the stamp does not see, such as a package installed into a folder it does not watch).
inline constexpr std::chrono::minutes kFingerprintMaxAge{10};

// What the node's software looks like from outside, cheaply (a few stat calls, no process): the
// modification times of the package databases (/var/lib/dpkg/status, rpm's), of the site-packages
// and dist-packages folders of the interpreter the command names (resolved on the stage's PATH), and
// the NVIDIA driver's version text. Any change may mean other software. Thread-safe.
std::string SoftwareStamp(const TrialContext& ctx, const nlohmann::json& command);

// Owned by the worker (RunWorker) and shared by its trials; thread-safe. Two trials that miss at
// once may both run the command; the later answer is the one kept.
class FingerprintCache {
 public:
  using StampFn = std::function<std::string(const TrialContext&, const nlohmann::json& command)>;
  // `stamp`: how the node's software is read between trials (SoftwareStamp; tests pass their own).
  explicit FingerprintCache(StampFn stamp = SoftwareStamp) : stamp_(std::move(stamp)) {}

  // The fingerprint for ctx's suite version: {} when the suite declares no command; else the
  // command's JSON object, or {"output": its text}. Unavailable (saying why: it could not start,
  // exited non-zero, printed nothing or ran past 60 s) when the command failed; a failure is not
  // cached. Runs the command through ctx.processes on a miss, when the software stamp changed, or
  // when the kept one is older than kFingerprintMaxAge (on ctx.clock).
  Result<nlohmann::json> Get(const TrialContext& ctx);

 private:
  struct Kept {
    nlohmann::json fingerprint;
    std::string stamp;
    std::chrono::steady_clock::time_point taken;
  };
  StampFn stamp_;
  std::mutex mu_;
  std::map<std::string, Kept> by_suite_;  // "name@version@folder"; guarded by mu_; successes only
};

}  // namespace gauntlet::worker
