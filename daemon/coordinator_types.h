// What the Coordinator's public calls take and answer (daemon/coordinator.h): typed requests and
// answers, so the coordinator speaks no HTTP body. api/ parses requests into these (api/requests.h)
// and builds the JSON and the prose people read from the answers (api/views.h). Every struct here
// is a plain value; none holds a lock or a reference into the coordinator.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/hardware.h"
#include "core/status.h"
#include "core/suite.h"
#include "core/sweep.h"
#include "core/verdict.h"
#include "daemon/scheduler.h"
#include "store/store.h"

namespace gauntlet::daemon {

// "name@version": how a worker names a suite version it holds (a lease request's have_suites).
inline std::string SuiteKey(const Suite& s) { return s.name + "@" + std::to_string(s.version); }

// A sweep to submit: its parsed request and the JSON it was parsed from, which is stored as the
// sweep's record (GET /sweeps/{id} shows it; a restart parses it again).
struct SweepSubmission {
  SweepRequest request;
  nlohmann::json record;
};

// Which trials of a sweep a rerun repeats (POST /sweeps/{id}/rerun's body). Empty sets filter
// nothing; with no verdicts, every done trial that neither passed nor was skipped is picked.
struct RerunSelection {
  std::set<Verdict> verdicts;
  std::vector<std::map<std::string, std::string>> config_matches;  // parameter -> value a config holds
  std::set<std::string> config_keys;
  std::set<int64_t> target_indexes;
  std::set<std::string> hardware;
  bool names_verdicts = false;  // the body had "verdicts": an empty pick is blamed on it
  // Count the picked trials and store nothing (the dashboard's confirmation says how many a rerun
  // starts before it starts them).
  bool dry_run = false;
};

// A node's registration (POST /nodes/register's body, less its node_token).
struct Registration {
  std::string name;
  Inventory inventory;  // its labels merged with the body's "labels"
  nlohmann::json fingerprint = nlohmann::json::object();  // software versions, as the worker sent them
};

// What a registration answers. `credential` says which credential the node now has: the caller's
// own (kept), the fresh one the call offered, or none (no fresh one was offered).
struct RegistrationAnswer {
  enum class Credential { kNone, kKept, kFresh };
  int64_t node = 0;
  int64_t heartbeat_ms = 0, lease_ttl_ms = 0;
  NodeState state = NodeState::kOnline;
  std::string hardware;
  Credential credential = Credential::kNone;
};

// The reference trial's answers a grant carries (SUITE_FORMAT.md "Differential validation"): the
// latest judged trial of the reference config on the grant's hardware class, or, when `found` is
// false, none yet (`config` and `hardware` then say which was looked for).
struct GrantReference {
  bool found = false;
  int64_t trial = 0;
  Verdict verdict = Verdict::kPassed;
  Config config;
  std::string hardware;
  std::optional<nlohmann::json> smoke_answers;  // unset: none (not passed, or its stage kept none)
};

// A lease granted (the worker protocol's grant). The suite and the reference are shared with the
// coordinator's caches, which never change them: a grant costs no copy of a suite's definition.
struct LeaseGrant {
  Grant grant;  // lease, epoch, trial, gpus, hardware, attempt
  int64_t heartbeat_ms = 0;
  std::optional<int64_t> sweep;            // unset only if the lease was not live (never expected)
  Config config;                           // set with `sweep`
  std::shared_ptr<const Suite> suite;      // null if its suite could not be read
  bool send_definition = false;            // the worker does not hold this suite version yet
  std::shared_ptr<const GrantReference> reference;  // null: the trial needs none
};

// A lease request's answer: a grant, or nullopt when nothing fits now. An error Status: NotFound
// (no such node; field "node"), Internal (the store refused the lease), Unavailable (the lease's
// commit failed).
using LeaseOutcome = Result<std::optional<LeaseGrant>>;

// A heartbeat's body and answer.
struct HeartbeatRequest {
  bool running = false;  // the trial's process has started
};
struct HeartbeatAnswer {
  bool cancel = false;
  int64_t epoch = 0, trial = 0;
};

// What a report answers (it is always accepted once it gets this far).
struct ReportAnswer {
  bool duplicate = false, requeued = false, confirming = false;
  size_t skipped = 0;
};

// A batch launcher's report (PUT /launchers/{name}); its parts are the launcher's own JSON.
struct LauncherReport {
  std::string kind = "slurm";
  nlohmann::json jobs = nlohmann::json::array();
  nlohmann::json queued, unplaceable;  // null when not sent
  // Who sent it: the SHA-256 of the bearer token ("" where no token is needed). Only that
  // credential may report for the launcher's name while its report is live; never shown.
  std::string owner;
};
// A report heard in the last 10 minutes, with how old it is.
struct LauncherView {
  std::string name;
  LauncherReport report;
  double age_s = 0;
};

// A trial a node runs now.
struct RunningTrial {
  int64_t trial = 0, sweep = 0;
  std::vector<int> gpus;
};

// A stored node with its live state (GET /nodes). `live`: the scheduler tracks it, and state,
// reason and last_heartbeat are its own (else the stored row's).
struct NodeView {
  store::NodeRow row;
  bool live = false;
  std::set<int> busy_gpus;
  std::map<int, HeldGpu> held_back;
  bool waiting = false;  // in a lease long-poll
  double heartbeat_age_s = 0;
  std::vector<RunningTrial> running;
};

// A target of a sweep that no registered node can ever run.
struct UnmatchedTarget {
  nlohmann::json target;     // as submitted (its index when the request is gone)
  int index = 0;
  std::optional<Need> need;  // what it asks of a node, where the scheduler knows it
};

// A sweep's live state beside its stored one (GET /sweeps/{id}).
struct SweepLive {
  int64_t running = 0;
  std::vector<UnmatchedTarget> unmatched;
  // Each node not offline, as (name, hardware class); filled only when a target is unmatched.
  std::vector<std::pair<std::string, std::string>> nodes;
  int64_t pruned_trials = 0;
  double saved_gpu_s = 0;
  std::optional<double> cost_saved;     // set where the request priced a target
  std::optional<bool> reuse_keyed_on_fingerprint;  // set where the sweep reuses results
  int repeats = 1;  // the sweep's repeats: reuse stands in for a config's first run only
  // Nodes out of service that could run what no node in service can: the sweep waits for them.
  struct HeldOut {
    int64_t id = 0;
    std::string name;
    NodeState state = NodeState::kQuarantined;
    std::string reason;
  };
  std::vector<HeldOut> held_out;
};

// The /metrics numbers.
struct CoordinatorStats {
  int64_t queued = 0, leased = 0, waiting_workers = 0;
  std::map<NodeState, int> nodes;  // node state -> count
  int64_t lease_wait_sum_ms = 0, lease_wait_count = 0;
};

}  // namespace gauntlet::daemon
