// The coordinator: the daemon's one owner of the scheduler. It serializes every scheduler call under
// one mutex, answers long-polls the moment work fits, persists through the Store, runs the lease and
// node clock, and publishes events. Thread-safe; handlers call it from any HTTP thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/mutex.h"
#include "core/bisect.h"
#include "core/bisect_request.h"
#include "core/smoke_reference.h"
#include "daemon/coordinator_types.h"
#include "daemon/events.h"
#include "daemon/scheduler.h"
#include "core/sweep.h"
#include "store/ordered_regressions.h"
#include "store/labels.h"
#include "store/store.h"

namespace gauntlet::daemon {

// The daemon's settings (gauntlet serve's flags).
struct CoordinatorOptions {
  SchedulerOptions sched;
  int64_t heartbeat_ms = 5000;     // what workers are told to use
  int64_t tick_ms = 500;           // lease/node clock resolution
  int64_t log_cap = 16 << 20;      // bytes of log kept per trial (head and tail beyond)
  Clock* clock = nullptr;          // the time leases and nodes run on; null: the wall clock. Not owned
};

// What Submit stored: the sweep's id and its trial count; `expanding`: its trials are stored after
// the answer (a big sweep: the sweep is durable, its trials follow; daemon/expansion.cc).
struct SubmitResult {
  int64_t sweep = 0;
  int64_t trials = 0;
  bool expanding = false;
};

// Sweeps of more trials than this are answered once their row is stored and expanded afterwards,
// kExpandChunk trials per write (small: a lease, heartbeat or submit that waits for the store waits
// for one chunk's write at most; 1,024 held it 4.5 ms at the median and a runnable trial's p99 went
// over 50 ms on a loaded 2-vCPU host, 256 about 1 ms: docs/BENCHMARKS.md); smaller ones are stored
// whole before the answer.
inline constexpr int64_t kExpandAfter = 4096;
inline constexpr size_t kExpandChunk = 256;

// One caller waiting for a lease. `answer` is called exactly once unless the caller abandons the
// wait first, from any thread, possibly before Lease returns; `open` says whether the caller still
// listens (false once its own timer passed or it went away: a grant is then not given to it). Both
// may run under the Coordinator's lock (or a committing writer's): keep them short, and never call
// the Coordinator from them.
struct LeaseWaiter {
  std::function<bool()> open;
  std::function<void(LeaseOutcome)> answer;
};

// The bisections an auto_bisect sweep's finish calls for: the ordered regressions in `regressions`
// (OrderedRegressions' answer) that no bisection covers, that offer a start, and
// whose good or bad side is a (config key, hardware class) in `touched` (what the sweep judged), with
// the sweep's priority and confirm_failures; at most 16 (daemon/auto_bisect.cc). Pure.
std::vector<BisectRequest> AutoBisections(const std::vector<store::OrderedRegression>& regressions,
                                          const std::set<std::pair<std::string, std::string>>& touched,
                                          const SweepRequest& req);

// What the scheduler needs of sweep `sweep` (its request, its suite's gate keys). Pure.
SweepInfo MakeSweepInfo(int64_t sweep, const SweepRequest& req, const Suite& suite);

class Coordinator {
 public:
  // Rebuilds the scheduler from the store (queued trials, live leases, nodes) and starts the clock
  // thread. `store` and `events` must outlive it; it installs the store's OnCommitFailure.
  Coordinator(store::Store& store, EventBus& events, CoordinatorOptions opts);
  ~Coordinator();  // Stop()
  // Stops the clock thread and answers every held lease wait with nullopt. Idempotent; call it once
  // the server has stopped (a wait that starts later is ended only by its own timer).
  void Stop();
  // The triage labels in force (store/labels.h ActiveLabels): every result reported from now on
  // that one matches takes its verdict before the scheduler sees it. Thread-safe.
  void SetLabels(std::vector<store::Label> labels);

  // Validates a parsed sweep against its suite, stores it (with its record), then queues it. A
  // sweep of more than kExpandAfter trials is stored as its row alone (durable: a restart resumes
  // it) and expanded by the expander thread after the answer, each chunk queued once committed.
  // Errors: NotFound (suite), Invalid (field at fault). `origin` is stored with it (who, through what).
  Result<SubmitResult> Submit(const SweepSubmission& sweep, const store::SweepOrigin& origin = {});
  // A new sweep of exactly the trials of `sweep` that `selection` picks (default: every done trial
  // not passed or skipped), each once per original trial, with reuse and pruning off, linked by
  // rerun_of (origin.rerun_of is set here). With selection.dry_run, only counts them: id 0, nothing
  // stored. Errors: NotFound (sweep), Invalid ("verdicts" or "body" when nothing matches). rerun.cc.
  Result<SubmitResult> Rerun(int64_t sweep, const RerunSelection& selection, store::SweepOrigin origin);
  // Checks a parsed bisection against its suite, stores it as a sweep of kind "bisect" that runs one
  // probe at a time, and queues its first probe. Errors: NotFound (suite), Invalid (field at fault).
  Result<SubmitResult> Bisect(const BisectRequest& request);
  // Ends the queued trials cancelled now and flags the running ones for their workers; an
  // expanding sweep stores no more trials. NotFound; Conflict when nothing is left to cancel.
  Status CancelSweep(int64_t sweep);
  Status CancelTrial(int64_t trial);  // the same for one trial
  // Re-queues a sweep's done infra_error and timeout trials: the same trials, attempts starting over,
  // never reused. Returns how many.
  Result<int64_t> RetrySweep(int64_t sweep);

  // Worker protocol. Register adds or updates the node `reg` describes. Credentials are SHA-256
  // hex (the coordinator never sees a token): `cred.presented` is what the caller holds (empty:
  // none), `cred.fresh` what the node gets unless the caller's is already its own (the answer's
  // `credential`: kept, fresh, or none when `fresh` is empty). A node whose credential the caller
  // does not hold and that is live (not offline) is not overwritten: Conflict (field "name").
  // Registrations are serialized.
  struct NodeCredential {
    std::string presented, fresh;
  };
  Result<RegistrationAnswer> Register(const Registration& reg, const NodeCredential& cred = {});
  // The node whose credential hashes to `sha256_hex`, or nullopt. Thread-safe; no store read.
  std::optional<int64_t> NodeForCredential(const std::string& sha256_hex);
  // The node holding live lease `lease`, or nullopt if no such lease is live.
  std::optional<int64_t> LeaseNode(const std::string& lease);
  // Long-poll: answers `w` with a grant as soon as one fits (once its lease is committed). When
  // nothing fits: answers nullopt at once if `wait` is zero, else holds `w` until work fits, Stop(),
  // or the caller's AbandonLease (the caller runs the `wait` timer). Returns the wait's id for
  // AbandonLease (0 when `w` was answered or will be without waiting). A node's newer wait ends its
  // older one (answered nullopt). `have_suites`: "name@version" keys of suite definitions the
  // worker holds (not sent again).
  int64_t Lease(int64_t node, const std::vector<int>& free_gpus, std::chrono::milliseconds wait,
                const std::set<std::string>& have_suites, LeaseWaiter w);
  // What a lease request says of the GPUs its worker holds back (by index): the scheduler leases
  // none of them, GET /api/v1/nodes shows them; a change publishes node.gpus_held. A no-op for an
  // unknown node (its Lease is the 404).
  void SetHeldBack(int64_t node, std::map<int, HeldGpu> held);
  // The grant of `lease` never reached its worker (the long-poll's connection had closed): the
  // clock thread gives it back at once (Scheduler::ReturnLease: queued again, no attempt spent)
  // and serves the waiting workers. Any thread, any lock held: it only queues the lease.
  void ReturnGrant(const std::string& lease);
  // Forgets node's wait `wait_id` (timed out or gone); a no-op if it was answered already.
  void AbandonLease(int64_t node, int64_t wait_id);
  // These three stage their writes (group commit): acknowledge them through WhenCommitted, never
  // directly. A stale lease is Conflict. Report takes the result as the store keeps it, its
  // verdict one a worker may report (api/requests.h checks it); its trial, attempt, node and times
  // are filled here.
  Result<HeartbeatAnswer> Heartbeat(const std::string& lease, const HeartbeatRequest& body);
  Status AppendLog(const std::string& lease, int64_t offset, std::string_view data);
  Result<ReportAnswer> Report(const std::string& lease, store::ResultRow result);
  // How a caller acknowledges a staged write: `done` gets the outcome of the commit of every write
  // staged so far (Internal if it failed). When that is known now, returns it and never calls
  // `done`; else returns nullopt and calls `done` once, from the committing thread (which may hold
  // the Coordinator's lock: `done` must not call the Coordinator).
  std::optional<Status> WhenCommitted(std::function<void(Status)> done);
  // Drain: no new leases for the node (running ones finish). Both: NotFound for an unknown node.
  Status Drain(int64_t node);
  Status SetNodeState(int64_t node, NodeState state, const std::string& reason);

  // Batch launchers (gauntlet slurm) report their jobs each pass; GET /api/v1/nodes shows them, so
  // jobs still pending in the batch queue are visible beside the workers they will start.
  // kForbidden when another credential (report.owner) reported for `name` in the last 10 minutes;
  // kInvalid past limits::kLaunchers live names. O(log launchers).
  Status SetLauncher(const std::string& name, LauncherReport report);
  std::vector<LauncherView> Launchers();  // reports heard in the last 10 minutes, newest state each

  // Read side helpers that need scheduler state; each returns a fresh value.
  std::vector<NodeView> Nodes();  // stored nodes with their live state; empty on a store error
  Result<NodeView> Node(int64_t node);  // one of Nodes; NotFound (field "id")
  SweepLive SweepExtras(int64_t sweep);  // running, unmatched targets, prune savings
  CoordinatorStats Stats();              // for /metrics
  const CoordinatorOptions& options() const { return opts_; }
  store::Store& store() { return store_; }  // the Store it was given

 private:
  // mu_ guards the scheduler and the maps below it; *Locked methods, SuiteById and MakeGrant need it held.
  class StoreAdapter;
  class WallClock;
  struct Waiter {
    int64_t id = 0;
    std::vector<int> free;
    std::set<std::string> have_suites;
    LeaseWaiter w;
  };
  // Answers `w` with `grant` once the writes staged so far (its lease) are committed.
  void AnswerAfterCommit(LeaseWaiter w, LeaseGrant grant);
  // Parsed and cached; never changed or dropped once cached (grants share it).
  Result<std::shared_ptr<const Suite>> SuiteShared(int64_t id) REQUIRES(mu_);
  Result<const Suite*> SuiteById(int64_t id) REQUIRES(mu_);  // SuiteShared's suite
  // The newest stored version of suite `name`, parsed and cached as SuiteById's (which it stays
  // valid with); the store's NotFound if there is none. Takes mu_ for the cache: call without it.
  Result<const Suite*> LatestSuite(const std::string& name) EXCLUDES(mu_);
  // The trials of `configs`, each once per target and repeat, ids consecutive from first_id in that
  // order (the grid order a sweep's ids follow).
  std::vector<QueuedTrial> MakeQueued(const Suite& suite, const SweepRequest& req, int64_t first_id,
                                      const std::vector<Config>& configs);
  // What each queued trial of a sweep shares (its targets' needs, the suite's estimate and smoke
  // reference), and one trial made from it (`key`: ConfigKey(c)).
  struct QueueTemplate {
    std::vector<Need> needs;  // by target
    double cost = 60;
    std::optional<SmokeReference> ref;
  };
  static QueueTemplate TemplateOf(const Suite& suite, const SweepRequest& req);
  static QueuedTrial MakeOne(const Suite& suite, const SweepRequest& req, const QueueTemplate& tpl, int64_t id,
                             const Config& c, const std::string& key, int target, int repeat);
  // A stored trial (restart, retry) as the scheduler queues it, with its own target's needs.
  QueuedTrial QueuedFromRow(const Suite& suite, const SweepRequest& req, const store::TrialRow& t);
  void Restore();
  void RestoreLocked() REQUIRES(mu_);
  // After a failed group commit (writes lost): rebuilds the scheduler from the store, as a restart does.
  void ReloadIfNeededLocked() REQUIRES(mu_);
  // Publishes `type` once the writes staged so far are committed (a reader told of a change finds it).
  void PublishAfterCommit(DaemonEvent e);
  void ServeWaitersLocked() REQUIRES(mu_);
  // Publishes trial.changed for trials the scheduler settled on its own (reused, lease expired).
  void PublishSettled(const std::vector<int64_t>& trials, const std::string& why);
  LeaseGrant MakeGrant(const Grant& g, const std::set<std::string>& have_suites) REQUIRES(mu_);
  // The grant's reference for trial `t` on `hardware` (SUITE_FORMAT.md "Differential validation"):
  // the reference trial's smoke answers, or which was not found; null when `t` needs none (no
  // reference declared, or `t` is a reference itself).
  std::shared_ptr<const GrantReference> ReferenceLocked(const Suite& su, const QueuedTrial& t,
                                                        const std::string& hardware) REQUIRES(mu_);
  // Keeps what a reported reference trial answered, for the grants that follow its report (the
  // store may not have committed it yet).
  void RememberReferenceLocked(const QueuedTrial& t, int64_t trial, const std::string& hardware, const store::ResultRow& r)
      REQUIRES(mu_);
  // Takes the verdicts of the search probes the scheduler settled and queues each search's next
  // probe (or ends it). True if a probe was queued (waiters may now be served).
  bool AdvanceSearchesLocked() REQUIRES(mu_);
  // Stores and queues probe `index` of the search of `sweep`; false on a store error (logged; the
  // search then ends undecided).
  bool QueueProbeLocked(int64_t sweep, Bisection& b, int index) REQUIRES(mu_);
  // A finished sweep with auto_bisect: starts a bisection for each config that got worse between
  // two values of an ordered parameter on one target (daemon/auto_bisect.cc).
  void AutoBisectLocked(int64_t sweep) REQUIRES(mu_);
  void RunAutoBisections();  // the clock thread's part: without mu_ held
  void ReturnGrantsLocked(std::vector<std::string> leases) REQUIRES(mu_);  // the clock thread's part of ReturnGrant
  void Ticker();
  // Big sweeps' expansion after their answer (daemon/expansion.cc): one thread, a chunk at a time,
  // round robin between the sweeps expanding.
  struct Expansion;
  enum class ChunkOutcome { kMore, kDone, kRetry };
  Result<SubmitResult> SubmitExpanding(const Suite& suite, const SweepSubmission& submission, int64_t trials,
                                       const store::SweepOrigin& origin);
  void StartExpansions();                 // at start: queues the sweeps the store says are expanding
  void QueueExpansion(int64_t sweep);     // hands `sweep` to the expander thread
  // The sweep's trials, from its stored row and request, in the order they are queued (the order
  // the scheduler gives the whole sweep), positioned after those already stored.
  Result<std::unique_ptr<Expansion>> PlanExpansion(int64_t sweep);
  ChunkOutcome ExpandChunk(Expansion& e);  // stores and queues the plan's next chunk
  void Expander();

  store::Store& store_;
  EventBus& events_;
  CoordinatorOptions opts_;
  std::unique_ptr<WallClock> wall_;  // when opts_.clock is null
  Clock* clock_;                     // opts_.clock or wall_
  std::unique_ptr<StoreAdapter> adapter_;
  Mutex mu_;
  std::unique_ptr<Scheduler> sched_ GUARDED_BY(mu_);
  std::map<int64_t, std::shared_ptr<const Suite>> suites_ GUARDED_BY(mu_);      // by store id
  std::map<int64_t, std::shared_ptr<SweepRequest>> requests_ GUARDED_BY(mu_);   // by sweep id
  std::map<int64_t, Waiter> waiters_ GUARDED_BY(mu_);                            // by node
  std::map<int64_t, Bisection> searches_ GUARDED_BY(mu_);                        // running searches by sweep
  std::map<int64_t, int64_t> probes_ GUARDED_BY(mu_);                            // a search's pending trial -> its sweep
  std::set<int64_t> auto_bisected_ GUARDED_BY(mu_);                              // sweeps whose regressions were looked at
  std::vector<int64_t> auto_bisect_due_ GUARDED_BY(mu_);                         // ... and are to be, by the clock thread
  int64_t next_wait_ GUARDED_BY(mu_) = 1;
  // (node, suite version's id) -> the fingerprint its latest judged report carried: per version, since
  // a new version may fingerprint other software; an infra error's (a failed command's) is never kept.
  std::map<std::pair<int64_t, int64_t>, std::string> fingerprints_ GUARDED_BY(mu_);
  std::vector<store::Label> labels_ GUARDED_BY(mu_);  // SetLabels; applied in Report
  std::map<std::string, std::pair<LauncherReport, int64_t>> launchers_ GUARDED_BY(mu_);  // name -> (report, heard at ms)
  // (suite id, reference config key, hardware class) -> the grant's reference: its latest judged trial.
  std::map<std::tuple<int64_t, std::string, std::string>, std::shared_ptr<const GrantReference>> references_
      GUARDED_BY(mu_);
  Mutex register_mu_;  // one registration at a time: the check of a name and its write
  Mutex cred_mu_;      // guards credentials_ only (never held with mu_ taken after it)
  std::unordered_map<std::string, int64_t> credentials_ GUARDED_BY(cred_mu_);  // credential SHA-256 hex -> node
  Mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool stopping_ GUARDED_BY(tick_mu_) = false;
  std::vector<std::string> returns_ GUARDED_BY(tick_mu_);  // grants to give back (ReturnGrant); guarded by tick_mu_
  std::atomic<bool> reload_{false};
  std::thread ticker_;
  uint64_t restores_ GUARDED_BY(mu_) = 0;   // RestoreLocked runs (a reload rebuilt the scheduler)
  std::set<int64_t> expanding_ GUARDED_BY(mu_);  // sweeps whose trials are still being stored
  // One expansion chunk, or one cancel, at a time: its store write and its scheduler change
  // together, so a cancel never misses a chunk committed before it. Taken before mu_.
  Mutex expand_mu_;
  Mutex expand_queue_mu_;
  std::condition_variable expand_cv_;
  std::deque<int64_t> expand_queue_ GUARDED_BY(expand_queue_mu_);  // sweeps for the expander to take up
  bool expand_stop_ GUARDED_BY(expand_queue_mu_) = false;
  std::thread expander_;
};

}  // namespace gauntlet::daemon
