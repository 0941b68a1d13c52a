// The coordinator: the daemon's one owner of the scheduler. It serializes every scheduler call under
// one mutex, answers long-polls the moment work fits, persists through the Store, runs the lease and
// node clock, and publishes events. Thread-safe; handlers call it from any HTTP thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "api/http.h"
#include "daemon/events.h"
#include "daemon/scheduler.h"
#include "daemon/sweep.h"
#include "store/store.h"

namespace gauntlet {

struct CoordinatorOptions {
  SchedulerOptions sched;
  int64_t heartbeat_ms = 5000;     // what workers are told to use
  int64_t tick_ms = 500;           // lease/node clock resolution
  int64_t log_cap = 16 << 20;      // bytes of log kept per trial (head and tail beyond)
};

struct SubmitResult {
  int64_t sweep = 0;
  int64_t trials = 0;
};

class Coordinator {
 public:
  // Rebuilds the scheduler from the store (queued trials, live leases, nodes) and starts the clock.
  Coordinator(Store& store, EventBus& events, CoordinatorOptions opts);
  ~Coordinator();
  void Stop();

  // Validates and stores a sweep, then queues it. Errors: NotFound (suite), Invalid (field at fault).
  Result<SubmitResult> Submit(const nlohmann::json& request);
  Status CancelSweep(int64_t sweep);
  Status CancelTrial(int64_t trial);
  // Re-queues a sweep's infra_error and timeout trials as new trials of the same sweep? No: as the
  // same trials with fresh attempts. Returns how many.
  Result<int64_t> RetrySweep(int64_t sweep);

  // Worker protocol.
  Result<nlohmann::json> Register(const nlohmann::json& body);
  // Long-poll: answers with a grant as soon as one fits, else 204 after `wait`.
  // `have_suites`: "name@version" keys of suite definitions the worker holds (not sent again).
  http::Response Lease(int64_t node, const std::vector<int>& free_gpus, std::chrono::milliseconds wait,
                       const std::set<std::string>& have_suites = {});
  // These three stage their writes (group commit): answer with Durable(), never directly.
  Result<nlohmann::json> Heartbeat(const std::string& lease, const nlohmann::json& body);
  Status AppendLog(const std::string& lease, int64_t offset, std::string_view data);
  Result<nlohmann::json> Report(const std::string& lease, const nlohmann::json& body);
  // `r`, sent once every write staged so far is committed (a 503 if that commit failed): how a
  // worker-protocol answer acknowledges a staged write. `r` itself when nothing is pending.
  http::Response Durable(http::Response r);
  Status Drain(int64_t node);
  Status SetNodeState(int64_t node, const std::string& state, const std::string& reason);

  // Batch launchers (gauntlet slurm) report their jobs each pass; GET /api/v1/nodes shows them, so
  // jobs still pending in the batch queue are visible beside the workers they will start.
  void SetLauncher(const std::string& name, const nlohmann::json& report);
  nlohmann::json LaunchersJson();  // reports heard in the last 10 minutes, newest state each

  // Read side helpers that need scheduler state.
  nlohmann::json NodesJson();
  nlohmann::json SweepExtras(int64_t sweep);  // running, unmatched targets, prune savings
  nlohmann::json Stats();                     // for /metrics
  const CoordinatorOptions& options() const { return opts_; }
  Store& store() { return store_; }

 private:
  class StoreAdapter;
  class WallClock;
  struct Waiter {
    std::vector<int> free;
    std::set<std::string> have_suites;
    std::shared_ptr<http::Deferred> deferred;
  };
  Result<const Suite*> SuiteById(int64_t id);  // parsed, cached
  std::vector<QueuedTrial> MakeQueued(const Suite& suite, const SweepRequest& req, int64_t first_id,
                                      const std::vector<Config>& configs);
  // A stored trial (restart, retry) as the scheduler queues it, with its own target's needs.
  QueuedTrial QueuedFromRow(const Suite& suite, const SweepRequest& req, const TrialRow& t);
  void Restore();
  void RestoreLocked();
  // After a failed group commit (writes lost): rebuilds the scheduler from the store, as a restart does.
  void ReloadIfNeededLocked();
  // Publishes `type` once the writes staged so far are committed (a reader told of a change finds it).
  void PublishAfterCommit(const std::string& type, nlohmann::json data);
  void ServeWaitersLocked();
  // Publishes trial.changed for trials the scheduler settled on its own (reused, lease expired).
  void PublishSettled(const std::vector<int64_t>& trials, const std::string& why);
  nlohmann::json GrantJson(const Grant& g, const std::set<std::string>& have_suites);
  void Ticker();

  Store& store_;
  EventBus& events_;
  CoordinatorOptions opts_;
  std::unique_ptr<WallClock> clock_;
  std::unique_ptr<StoreAdapter> adapter_;
  std::mutex mu_;
  std::unique_ptr<Scheduler> sched_;
  std::map<int64_t, std::unique_ptr<Suite>> suites_;            // by store id
  std::map<int64_t, std::shared_ptr<SweepRequest>> requests_;   // by sweep id
  std::map<int64_t, Waiter> waiters_;                            // by node
  std::map<std::pair<int64_t, std::string>, std::string> fingerprints_;  // (node, suite) -> fingerprint
  std::map<std::string, std::pair<nlohmann::json, int64_t>> launchers_;  // name -> (report, heard at ms)
  std::mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool stopping_ = false;
  std::atomic<bool> reload_{false};
  std::thread ticker_;
};

}  // namespace gauntlet
