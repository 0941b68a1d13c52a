// The scheduler: a pure state machine over queued trials, nodes and leases (docs/DESIGN.md "Scheduling").
// It owns no threads and does no I/O of its own: time comes from a Clock, and every change that must
// survive a restart goes through SchedulerStore before memory changes. Not thread-safe: owned by the
// Coordinator and called only under its mutex (daemon/coordinator.h).
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <unordered_map>
#include <vector>

#include "core/hardware.h"
#include "core/sweep.h"
#include "core/status.h"
#include "store/store.h"

namespace gauntlet::daemon {

// The scheduler's only time source (tests use a fake one they move by hand).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() = 0;  // wall-clock milliseconds since the epoch
};

// Persistence the scheduler needs; the daemon's adapter writes to the Store, tests use a fake. Called
// only by the Scheduler (so under the Coordinator's mutex); each method mirrors the Store method of
// that name. On a non-ok Status the scheduler leaves its memory as it was (except node state
// updates from Touch and Tick, whose errors it ignores).
class SchedulerStore {
 public:
  virtual ~SchedulerStore() = default;
  virtual Status Lease(int64_t trial, int64_t node, const std::string& lease, int64_t epoch, int64_t deadline,
                       const std::string& gpus, const std::string& hardware) = 0;
  virtual Status Requeue(int64_t trial, int attempt) = 0;
  // Keeps a confirming attempt's result (r.trial_id, r.attempt) and queues its trial again.
  virtual Status RecordAttempt(const store::ResultRow& r) = 0;
  virtual Status Finish(const store::ResultRow& r, std::optional<int64_t> evidence) = 0;
  virtual Status FinishMany(const std::vector<int64_t>& trials, Verdict verdict,
                            const std::string& signature, std::optional<int64_t> evidence,
                            const std::string& hardware) = 0;
  virtual Status SetNodeState(int64_t node, NodeState state, const std::string& reason) = 0;
  // Ends queued trials as `skipped` by pruning. `stage` and `evidence_text` (which names the evidence
  // trial and the gate key) are for the record a person reads; a store that keeps no per-trial text
  // may ignore them, hence the default.
  virtual Status Skip(const std::vector<int64_t>& trials, const std::string& signature, int64_t evidence_trial,
                      const std::string& hardware, const std::string& stage, const std::string& evidence_text) {
    (void)stage;
    (void)evidence_text;
    return FinishMany(trials, Verdict::kSkipped, signature, evidence_trial, hardware);
  }
  // An earlier judged result for reuse: same suite version, config and hardware class, and the
  // fingerprint that `node` last reported for that suite.
  virtual std::optional<store::ResultRow> FindReusable(int64_t suite_id, const std::string& config_key,
                                                const std::string& hardware, int64_t node) = 0;
};

struct SchedulerOptions {
  int64_t lease_ttl_ms = 30000;      // a lease dies this long after its last heartbeat
  int64_t offline_after_ms = 30000;  // a node unheard of this long goes offline
  int quarantine_after = 3;          // infra errors in a row before a node takes no new leases
};

// A queued trial as the scheduler sees it; copied into its lease while it runs.
struct QueuedTrial {
  int64_t id = 0;
  int64_t sweep = 0;
  int64_t suite_id = 0;
  int target = 0;
  Need need;
  Config config;
  std::string config_key;
  int attempt = 0;  // attempts made so far
  int max_attempts = 3;
  double cost_s = 60;  // estimated seconds; cheaper first within a sweep
  double price = 1;    // its target's cost_per_gpu_hour (1 when the sweep names none)
  std::set<int64_t> avoid_nodes;  // nodes where it met infra errors
  int timeouts = 0;               // a first timeout is retried once (docs/DESIGN.md "Trial lifecycle"); then it stands
  int64_t queued_at = 0;          // when it (last) entered the queue, for lease-wait metrics
  bool reuse = true;              // false for a retried trial: a retry asks for a fresh run
  // Which repeat of its config and target this is (the sweep's `repeats`, from 0). Only repeat 0
  // may be settled by reuse: a repeat is a run, and a copy of a verdict measures nothing.
  int repeat = 0;
  // A smoke reference config's trial (SUITE_FORMAT.md "Differential validation"): leased before
  // the other trials of its target, which wait while it is queued or running, so that they are
  // judged against its answers.
  bool reference = false;
  bool probe = false;             // runs before the rest of its target: the first of a gate value (settle first)
  // Confirmation: (verdict, signature) of each confirming attempt made so far, oldest first.
  std::vector<std::pair<Verdict, std::string>> tried;
};

// What `t` is expected to cost: GPUs x its target's price per GPU-hour x estimated hours (0 for a
// CPU-only trial). Pure. Between the targets of a sweep that one node could serve, the cheaper goes first.
inline double TrialCost(const QueuedTrial& t) { return t.need.gpus * t.price * t.cost_s / 3600.0; }

// A sweep's queue of one target, keyed so that walking the queues in key order tries the cheaper
// hardware first: its trials' TrialCost (one need, one price, one estimate per target), then the
// target's index (the order the sweep lists them). Without prices, equal GPU counts keep the list order.
struct TargetKey {
  double cost = 0;
  int target = 0;
  bool operator<(const TargetKey& o) const { return cost != o.cost ? cost < o.cost : target < o.target; }
};

// What the scheduler needs of a sweep: its order and pruning rules.
struct SweepInfo {
  int64_t id = 0;
  int priority = 0;
  bool prune = true;
  bool reuse = true;
  std::map<std::string, std::vector<std::string>> gate_on;  // stage -> gate keys
  // A crashed, wrong_output or timeout result is run up to this many more times (elsewhere when
  // another node fits) before it stands; pruning and reuse take a failure only once confirmed.
  int confirm_failures = 0;
  // Order within the sweep: the trials that settle the most first (one per gate key value per
  // target, see AddSweep), so refusals prune early. False: the grid's own order.
  bool settle_first = true;
};

// A GPU its worker holds back from trials: NVML lists processes on it that outlived their trial.
struct HeldGpu {
  std::string reason;
  std::vector<int64_t> pids;
  int64_t since = 0;  // ms since the epoch: when the daemon first heard of it
};

// A node as the scheduler tracks it.
struct TrackedNode {
  int64_t id = 0;
  std::string name;
  Inventory inv;
  NodeState state = NodeState::kOnline;
  std::string reason;
  int64_t last_seen = 0;
  int infra_streak = 0;
  std::set<int> busy_gpus;
  std::map<int, HeldGpu> held_gpus;  // as its worker's latest lease request said; never free
};

// A lease just granted: what the worker is told.
struct Grant {
  int64_t trial = 0;
  std::string lease;
  int64_t epoch = 0;
  std::vector<int> gpus;
  std::string hardware;
  int attempt = 0;
};

// A live lease.
struct ActiveLease {
  int64_t trial = 0, node = 0, sweep = 0, epoch = 0, deadline = 0;
  std::string lease;
  std::vector<int> gpus;
  std::string hardware;
  bool cancel = false;
  bool heard = false;  // its worker has heartbeated or sent log (or it was restored): it has the grant
  QueuedTrial spec;  // to requeue it
};

// What a reported result led to, for events and answers.
struct ReportOutcome {
  bool duplicate = false;             // the same result was already taken (idempotent retry)
  std::vector<int64_t> skipped;       // trials pruning settled
  std::optional<std::string> prune_key;
  bool requeued = false;              // infra_error or a first timeout, with attempts left
  bool confirming = false;            // requeued to confirm a failure (confirm_failures)
};

// Not thread-safe (see above). Pointers and references it returns point into its own state: valid
// until its next non-const call.
class Scheduler {
 public:
  // `clock` and `store` must outlive it.
  Scheduler(Clock& clock, SchedulerStore& store, SchedulerOptions opts);

  // Queues `trials` (cheapest first) under `sweep`, which may be known already (a retry, a restart):
  // its info is replaced and the trials are added. With settle_first, each target's trials are
  // reordered so that one trial per value of every gate key (the stages' gate_on) comes first,
  // chosen greedily so that one trial covers as many uncovered values as it can; then the rest, each
  // group keeping its order.
  void AddSweep(const SweepInfo& sweep, std::vector<QueuedTrial> trials);
  // The order AddSweep gives `trials` (cheapest first, then settle-first), computed in place. Pure
  // and static, so a caller can order a huge sweep outside its lock and hand it to AddOrdered.
  static void OrderForQueue(const SweepInfo& sweep, std::vector<QueuedTrial>& trials);
  // OrderToSettle's order for `n` trials, in their own order (cheapest first), given each one's
  // target and config: the indices in queue order, each with whether it is a probe; empty when the
  // order stays as it is. Pure and static: a big sweep is ordered over light items before its
  // trials are made (daemon/submit.cc).
  static std::vector<std::pair<size_t, bool>> SettleOrder(
      const SweepInfo& sweep, size_t n, const std::function<std::pair<int, const Config*>(size_t)>& trial);
  // AddSweep for trials already in OrderForQueue's order, appended after what the sweep holds: a
  // huge sweep can be added in chunks, in order, with other calls served between them.
  void AddOrdered(const SweepInfo& sweep, std::vector<QueuedTrial> trials);
  // Re-creates a lease found in the store at start; its deadline starts afresh.
  void RestoreLease(const ActiveLease& lease);
  // Adds or replaces a node, seen now; it keeps its busy GPUs, infra streak and a quarantine.
  void UpsertNode(TrackedNode node);
  const TrackedNode* Node(int64_t id) const;  // nullptr if unknown
  const std::unordered_map<int64_t, TrackedNode>& nodes() const { return nodes_; }
  // Stores, then applies; NotFound for an unknown node. "online" clears the infra streak.
  Status SetNodeState(int64_t node, NodeState state, const std::string& reason);
  // Marks `node` seen now; an offline one comes back online.
  void Touch(int64_t node);
  // Replaces the GPUs `node`'s worker holds back (by index; `since` of one already held is kept):
  // they are not leased whatever a lease request calls free. True if the set of indices changed;
  // false too for an unknown node.
  bool SetHeldBack(int64_t node, std::map<int, HeldGpu> held);

  // Picks the next trial for `node` given the GPUs the worker says are free, leases it and returns
  // it; nullopt if nothing fits now. Trials settled on the way without running are listed in
  // `reused` (may be null): reusable results filed, and what pruning then skipped on a reused
  // verdict. NotFound for an unknown node; nullopt for one not online; a store error comes back as
  // its Status, the trial left queued.
  Result<std::optional<Grant>> TryLease(int64_t node, const std::vector<int>& free_gpus,
                                        std::vector<int64_t>* reused = nullptr);
  // Renews a lease and touches its node. Returns the lease (with its cancel flag), or Conflict when it
  // has ended or is unknown.
  Result<const ActiveLease*> Heartbeat(const std::string& lease);
  // Takes a final result for a lease (idempotent; Conflict for a lease that is not current). The
  // lease sets `result`'s trial, attempt, node and hardware. A store error leaves the lease live.
  Result<ReportOutcome> Report(const std::string& lease, store::ResultRow result);
  // Validates a lease for a log append (Conflict when stale); returns its trial.
  Result<int64_t> CheckLease(const std::string& lease);
  // Undoes the grant of a lease its worker never received (its connection had closed): the trial is
  // queued again at the front with the attempt count it had, the GPUs freed. Returns the trial;
  // Conflict for a lease that is not live, that its worker has heartbeated or logged on (it has it),
  // or whose trial is cancelled; a store error as its Status, the lease left live.
  Result<int64_t> ReturnLease(const std::string& lease);
  // Cancels: queued trials are dropped (the caller has stored them as cancelled), running ones flagged.
  void Cancel(const std::vector<int64_t>& queued, const std::vector<int64_t>& running);
  // Expires leases past their deadline and marks silent online nodes without a lease offline.
  // Returns trial ids whose state changed (requeued or ended), for events.
  std::vector<int64_t> Tick();

  // Targets of `sweep` whose queued trials no known node that is not offline could ever run (for
  // "no node can run this").
  std::vector<int> UnmatchableTargets(int64_t sweep) const;
  // What the queued trials of `sweep`'s `target` need (nullopt when none is queued).
  std::optional<Need> TargetNeed(int64_t sweep, int target) const;
  // The nodes out of service (quarantined, draining) that could run a queued target of `sweep` that
  // no node in service could: what the sweep waits for, in id order. Pure read.
  std::vector<int64_t> HeldOutNodes(int64_t sweep) const;
  size_t queued() const { return queued_count_; }
  // Sweeps and queues the lease calls have looked at since start: the work a lease does, counted
  // rather than timed (tests assert it does not grow with work no node can run).
  uint64_t lease_steps() const { return lease_steps_; }
  // Sum (ms) and count of queue-to-lease waits since start.
  std::pair<int64_t, int64_t> LeaseWait() const { return {lease_wait_sum_ms_, lease_wait_count_}; }
  size_t leased() const { return leases_.size(); }
  int64_t RunningIn(int64_t sweep) const;  // the sweep's trials under lease now
  // True while `sweep` has a trial queued or under lease (cancelled ones not counted).
  bool Pending(int64_t sweep) const;
  const std::unordered_map<std::string, ActiveLease>& leases() const { return leases_; }
  // Prune savings per sweep: trials skipped and estimated GPU-seconds not spent.
  std::pair<int64_t, double> Saved(int64_t sweep) const;
  // The same savings priced: the skipped trials' TrialCost summed (GPU-hours x their targets' price).
  double SavedCost(int64_t sweep) const;
  // Trials whose end the owner wants to hear of (a search's probes): after Watch(t), the call that
  // ends t (a report, a reuse, pruning, an expiry, a cancel) adds (t, verdict) to what TakeSettled
  // returns next, once.
  void Watch(int64_t trial) { watched_.insert(trial); }
  std::vector<std::pair<int64_t, Verdict>> TakeSettled() { return std::exchange(settled_, {}); }

 private:
  struct Sweep {
    SweepInfo info;
    std::map<TargetKey, std::deque<QueuedTrial>> by_target;  // a queue per target, cheapest target first
    // Each target's TrialCost, fixed when the target is first queued (QueueOf): one key per target.
    std::map<int, double> target_cost;
    int64_t running = 0;
    uint64_t last_served = 0;  // lease sequence number of its latest grant (round robin on ties)
    int64_t skipped = 0;
    double saved_gpu_s = 0;
    double saved_cost = 0;  // TrialCost of the skipped trials
    // Per target: reference trials that may still be queued or running (pruned lazily).
    std::map<int, std::vector<int64_t>> reference_trials;
    // (target, stage, gate key values, signature) -> the distinct trials that crashed so.
    std::map<std::tuple<int, std::string, std::string, std::string>, std::vector<int64_t>> crash_signatures;
    std::map<int, int> target_class;  // target -> its requirement class (ClassOf), fixed when first queued
    // (target, config key) of the configs that passed in this sweep, or whose runs are being measured
    // (under confirmation, or judged more than one way): pruning never skips their repeats, and a
    // crash of such a config settles nothing (it has been seen to pass, so the crash is a flake).
    std::set<std::pair<int, std::string>> passed, measuring;
    // (target, stage, gate key values) that a passing trial of this sweep held: a failure with those
    // values is not theirs (one of them passed), so it prunes nothing.
    std::set<std::tuple<int, std::string, std::string>> passed_gates;
  };
  // Requirement classes (daemon/scheduler_classes.cc). Each distinct Need of a queued target is a
  // class; each class lists the sweeps that may hold queued trials of it, and each node caches
  // which classes it could ever serve. A lease visits only the sweeps of the classes the asking
  // node could serve, so work no node can run costs a lease nothing however much of it is queued.
  struct NodeClasses {
    std::vector<int8_t> fit;  // by class id: 1 if the node could ever serve it (CouldEverFit)
    std::vector<int> fits;    // the class ids with fit 1, ascending
  };
  int ClassOf(const Need& need);                       // `need`'s class id, made if new
  NodeClasses& ClassesOf(const TrackedNode& node);       // brought up to date with every class
  // The sweeps with queued trials of a class `node` could serve (each once, in id order); drops
  // sweeps that no longer hold trials of a class from its list.
  void CandidateSweeps(const TrackedNode& node, std::vector<Sweep*>* out);
  bool HasQueueOf(const Sweep& sw, int cls) const;     // a non-empty queue of class `cls`
  bool AnyNodeCouldServe(int cls) const;               // cached until the fleet changes
  void FleetChanged() { ++fleet_version_; }
  // Files `t` with the verdict already judged for its config on `hardware` (reuse), and prunes what
  // that settles. True if it did; false if nothing is reusable or the store failed (then *err).
  bool SettleByReuse(Sweep& sw, const QueuedTrial& t, const std::string& hardware, int64_t node,
                     std::vector<int64_t>* reused, Status* err);
  // Leases `t` to `node` on `gpus`, taking it (moved from) only when the store kept the lease; else
  // sets *err and leaves `t` as it was.
  std::optional<Grant> GrantLease(Sweep& sw, QueuedTrial& t, TrackedNode& node, std::vector<int> gpus,
                                  const std::string& hardware, Status* err);
  // Marks the probes of `trials` (see AddSweep) and moves them first, stably.
  static void OrderToSettle(const SweepInfo& info, std::vector<QueuedTrial>& trials);
  // True if `r` (a finished attempt of `l`) is to be run again to confirm it; then it has been
  // recorded and requeued (*err set instead on a store error).
  bool ConfirmAgain(const ActiveLease& l, const store::ResultRow& r, Status* err);
  // The queue of `t`'s target, made (and the target's cost and class fixed) if it has none; a queue
  // that was empty is listed under its class again.
  std::deque<QueuedTrial>& QueueOf(Sweep& sw, const QueuedTrial& t);
  // The queue of `target`, or by_target.end().
  static std::map<TargetKey, std::deque<QueuedTrial>>::iterator FindQueue(Sweep& sw, int target);
  static std::map<TargetKey, std::deque<QueuedTrial>>::const_iterator FindQueue(const Sweep& sw, int target);
  std::optional<Grant> LeaseOne(Sweep& sw, TrackedNode& node, const std::vector<int>& free, std::vector<int64_t>* reused,
                                Status* err);
  // Notes what `r` says about `spec`'s config for pruning (Sweep::passed, Sweep::measuring).
  static void NoteRun(Sweep& sw, const QueuedTrial& spec, const store::ResultRow& r);
  // Settles what `r` (the result of trial `evidence` of `spec`'s config and target) decides.
  void Prune(Sweep& sw, const QueuedTrial& spec, int64_t evidence, const std::string& hardware, const store::ResultRow& r,
             ReportOutcome* out);
  // Moves the first queued trial of `target` with these gate values to the front (settle first).
  void SecondLook(Sweep& sw, int target, const Config& gate);
  // Frees the lease's GPUs; `reported`: its result was taken (a retried report is then idempotent).
  void EndLease(const std::string& lease_id, bool reported);
  // Queues `t` at the front of its target's deque (a retry, a store failure), keeping the
  // reference bookkeeping true.
  void PushFront(Sweep& sw, QueuedTrial t);
  // Of `sw`'s reference trials for `target` still open: whether any is, and the deque index of the
  // first one still queued (npos when none is). Forgets those that have ended.
  std::pair<bool, size_t> OpenReference(Sweep& sw, int target, const std::deque<QueuedTrial>& dq);
  std::string NewLeaseId();
  void Settled(int64_t trial, Verdict verdict) {
    if (!watched_.empty() && watched_.erase(trial)) settled_.emplace_back(trial, verdict);
  }

  Clock& clock_;
  SchedulerStore& store_;
  SchedulerOptions opts_;
  std::map<int64_t, Sweep> sweeps_;
  std::unordered_map<int64_t, TrackedNode> nodes_;
  std::unordered_map<std::string, ActiveLease> leases_;
  std::unordered_map<int64_t, std::string> lease_of_trial_;
  std::set<int64_t> tombstones_;  // queued trials cancelled or pruned, dropped lazily from the deques
  std::set<int64_t> queued_references_;  // reference trials in a deque now (tombstoned ones too)
  std::unordered_map<std::string, int64_t> finished_leases_;  // lease -> trial, for idempotent reports
  std::deque<std::string> finished_order_;
  size_t queued_count_ = 0;
  int64_t lease_wait_sum_ms_ = 0, lease_wait_count_ = 0;
  int64_t next_epoch_ = 1;
  uint64_t serve_seq_ = 0;
  uint64_t rng_state_;
  std::set<int64_t> watched_;
  std::vector<std::pair<int64_t, Verdict>> settled_;
  std::vector<Need> class_needs_;                     // by class id
  std::unordered_map<std::string, int> class_ids_;    // ClassKey(need) -> class id
  std::vector<std::set<int64_t>> class_sweeps_;       // by class id: sweeps that may queue it
  std::unordered_map<int64_t, NodeClasses> node_classes_;
  uint64_t fleet_version_ = 1;  // bumped whenever a node is added, changed, or changes state
  mutable std::vector<std::pair<uint64_t, bool>> class_served_;  // by class: (fleet version, any node)
  uint64_t lease_steps_ = 0;
};

}  // namespace gauntlet::daemon
