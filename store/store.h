// The typed store: every query the daemon makes, over one SQLite file (docs/DESIGN.md "Storage").
// Thread-safe: writes are serialized on one connection; reads use a pool of connections (file
// databases) so they never wait for a writer. A write returns after its commit, except inside a
// Group (group commit), where the caller waits for its ticket before it acknowledges anything.
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <vector>

#include "store/query_budget.h"
#include "store/sqlite.h"
#include "store/sweep_rows.h"
#include "core/mutex.h"
#include "core/status.h"
#include "core/basis.h"
#include "core/verdict.h"

namespace gauntlet::store {

// The *Row structs are plain values read from the store; the caller owns them.
struct SuiteRow {
  int64_t id = 0;
  std::string name;
  int version = 0;
  nlohmann::json definition;
  std::string source_dir;
  int64_t created_at = 0;
  std::vector<std::string> param_order;  // parameters as declared (JSON objects keep no order)
  std::string shadowed;  // a suites-folder file of this name that was not loaded, and why; empty if none
  std::string bundle;    // SHA-256 of the suite's files (core/bundle.h, Store::PutBundle); empty if none
};

struct TrialRow {
  int64_t id = 0, sweep_id = 0, suite_id = 0;
  std::string suite;
  int suite_version = 0;
  nlohmann::json config;
  std::string config_key;
  int target_index = 0, repeat_index = 0;
  TrialState state = TrialState::kQueued;
  std::optional<Verdict> verdict;  // set once done
  std::optional<std::string> signature, hardware, lease_id, gpus, node;
  std::optional<int64_t> node_id, lease_deadline, evidence_trial, started_at, finished_at;
  int attempt = 0, max_attempts = 3;
  int64_t epoch = 0, created_at = 0, log_size = 0;
  bool cancel_requested = false;
  nlohmann::json result;  // the latest attempt's result row, or null
};

struct TrialFilter {
  std::optional<int64_t> sweep;
  std::optional<std::string> suite, hardware;
  std::optional<TrialState> state;
  std::optional<Verdict> verdict;
  std::optional<std::string> signature;  // exactly this failure signature
  std::vector<std::pair<std::string, std::string>> params;  // param.NAME=VALUE
  int64_t after = 0;         // a page's cursor: the last trial of the previous page (0: from the start)
  int limit = 100;
  std::string sort = "id";   // one of TrialSortKeys(); ties are broken by id
  bool descending = false;   // the sort key (then id) descending
};

// The keys GET /api/v1/trials can sort by (id, config, hardware, state, verdict, signature, node,
// took), in the dashboard's column order. Static storage; thread-safe.
const std::vector<std::string>& TrialSortKeys();

struct NodeRow {
  int64_t id = 0;
  std::string name;
  nlohmann::json inventory, labels, fingerprint;
  std::string hardware;
  NodeState state = NodeState::kOnline;
  std::string reason;
  int64_t registered_at = 0, last_heartbeat = 0;
  // Lower-case hex SHA-256 of the node's credential (the token registration handed its worker);
  // empty for a node registered before credentials existed. Never served.
  std::string credential;
};

// One test case of an attempt, as its test runner reported it and the worker judged it
// (docs/API.md "Trial" `tests`; kMaxStoredTestCases per attempt, fields cut to kMaxTestField).
struct TestCaseRow {
  std::string stage, name, outcome;  // outcome: passed, skipped, xfailed, failed, error
  Verdict verdict = Verdict::kPassed;
  std::string signature, evidence;
  std::optional<double> seconds;
};
inline constexpr size_t kMaxStoredTestCases = 500;
inline constexpr size_t kMaxTestField = 512;  // bytes of a stored name, signature or evidence

// A trial's test cases: those of its latest attempt that reported any.
struct TrialTests {
  int attempt = 0;
  std::vector<TestCaseRow> cases;
  int64_t not_stored = 0;  // cases the runner reported beyond those stored
};

struct ResultRow {
  int64_t trial_id = 0;
  int attempt = 0;
  Verdict verdict = Verdict::kPassed;
  std::string signature, evidence, failing_stage;
  std::optional<Basis> basis;  // what the verdict was judged from; nullopt: not reported (an older worker)
  // Set when a triage label changed what the worker reported (store/labels.h): the label and the
  // verdict it replaced, filed in the audit trail with the result.
  struct Relabel {
    int64_t label = 0;
    Verdict from_verdict = Verdict::kCrashed;
    std::string from_signature, by;
    std::optional<Basis> from_basis;
  };
  std::optional<Relabel> relabel;
  std::optional<int> exit_code;
  std::optional<std::string> signal;
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json stages = nlohmann::json::array();
  nlohmann::json fingerprint = nlohmann::json::object();
  std::optional<int64_t> node_id;
  std::string hardware;
  int64_t finished_at = 0;
  // Confirmation (sweep field confirm_failures): verdict -> count of this trial's confirming attempts
  // before this result; how many of them agreed with a failure that stands; whether one disagreed
  // with this result (a config that failed and then passed: flaky).
  nlohmann::json attempt_counts = nlohmann::json::object();
  int confirmed = 0;
  bool flaky = false;
  // Filed by reuse (a copy of an earlier trial's verdict, never run): the results index counts it as
  // reused beside the runs, never as a run (docs/SCHEDULING.md "Reuse").
  bool reused = false;
  // What the kernel recorder saw (core/kernel_record.h KernelRecordJson, bounded to the top
  // kernels); null when the trial was not recorded.
  nlohmann::json kernels;
  // The attempt's test cases (at most kMaxStoredTestCases are stored) and how many more there were.
  std::vector<TestCaseRow> tests;
  int64_t tests_not_stored = 0;
};
// The cases of r that its results row counts as not stored: those the worker did not send and
// those past kMaxStoredTestCases.
int64_t TestsNotStored(const ResultRow& r);

// Milliseconds since the Unix epoch (wall clock), the unit of every stored time. Thread-safe.
int64_t NowMs();

// The Status for a failed SQLite call: Unavailable naming the cause when the disk is full (a retry
// succeeds once space is freed; nothing of the failed write was stored), else Internal. Pure.
Status StoreErrorStatus(const sql::Error& e);

// Every method is thread-safe. None may be called from inside a Read or Write callback (a Write
// holds the write lock; an in-memory store's Read does too). Failures of SQLite come back as
// Internal; a missing row as NotFound.
struct CellUpdate;  // store/results_index.h

class Store {
 public:
  // Opens (and migrates) the database at `path` (":memory:" or "" for a private in-memory one) and
  // starts the committer thread; the caller owns the Store. Unavailable if it cannot be opened, or
  // if PRAGMA quick_check finds it damaged (DamagedStoreMessage: the file and the fix; nothing is
  // written to it); Invalid naming "db" for an empty file that is not a new store (CheckNotEmpty).
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  // Commits what is staged and stops the committer; no other thread may still be using the Store.
  ~Store();

  // Suites. PutSuite stores a definition as a new version when it (or its source_dir) differs from
  // the latest one of that name (old trials keep theirs), numbered max(latest + 1, its "version");
  // else returns the latest. `created` (may be null) says whether a version was added.
  // `param_order`: the parameters in the order the suite's text declared them (JSON objects keep
  // none); empty: by name.
  // `bundle`: the SHA-256 of its files, already stored by PutBundle (part of what makes a version).
  Result<SuiteRow> PutSuite(const std::string& name, const nlohmann::json& definition, const std::string& source_dir,
                            bool* created = nullptr, const std::vector<std::string>& param_order = {},
                            const std::string& bundle = {});
  // Suite bundles (store/bundles.cc). PutBundle stores archive `bytes` under `sha256` (the caller
  // has checked both with core/bundle.h); `created` (may be null) says whether it was new.
  Status PutBundle(const std::string& sha256, const std::string& bytes, size_t files, bool* created = nullptr);
  // The archive stored under `sha256`; NotFound if none.
  Result<std::string> GetBundle(const std::string& sha256);
  // True if a bundle is stored under `sha256` (false on a store error too).
  bool HasBundle(const std::string& sha256);
  Result<SuiteRow> GetSuite(const std::string& name, std::optional<int> version = std::nullopt);  // latest if none
  Result<SuiteRow> GetSuiteById(int64_t id);
  // Records on suite version `id` that a suites-folder file of its name was not loaded (empty: none).
  Status NoteShadowed(int64_t id, const std::string& note);
  Result<std::vector<SuiteRow>> ListSuites();  // latest version of each

  // Sweeps. CreateSweep stores the sweep and all its trials and returns its id: in one transaction,
  // or for a big sweep in chunks that commit one by one (the sweep `creating` until the last, hidden
  // from ListSweeps, removed at the next Open if the daemon dies first; on an error what committed
  // is removed), so other writes go ahead between them. Either way it is whole once this returns Ok.
  // The new trials get consecutive ids from *first_trial (required), in the order given.
  Result<int64_t> CreateSweep(int64_t suite_id, const std::string& name, const nlohmann::json& request, int priority,
                              int max_attempts, const std::vector<NewTrial>& trials, int64_t* first_trial,
                              const SweepOrigin& origin = {});
  // A sweep whose trials its stored request determines, too many to store before its answer
  // (store/sweep_expansion.cc): stores the sweep row alone, durable when this returns, with
  // `trials` consecutive ids reserved from *first_trial (required) and none stored yet. Its trials
  // come through AddSweepTrials; it is kept across restarts (ExpandingSweeps), never removed.
  Result<int64_t> BeginSweep(int64_t suite_id, const std::string& name, const nlohmann::json& request, int priority,
                             int64_t trials, int64_t* first_trial, const SweepOrigin& origin = {});
  // Stores the next `trials` of expanding sweep `sweep`, each at its reserved id (NewTrial::id),
  // and counts them, in one write; the write that makes it whole ends its expansion. `stored` is
  // the count the caller expects it to have now (Conflict if not, or past its trial count: two
  // expanders, or a lost write). False, and nothing written, when the sweep was cancelled.
  // NotFound for an unknown sweep.
  Result<bool> AddSweepTrials(int64_t sweep, int64_t stored, int max_attempts, const std::vector<NewTrial>& trials);
  // The sweeps still expanding (not whole and not cancelled), by id.
  Result<std::vector<ExpandingSweep>> ExpandingSweeps();
  // The ids of the trials `sweep` has stored, ascending (what a resumed expansion leaves out).
  Result<std::vector<int64_t>> SweepTrialIds(int64_t sweep);
  // Puts a sweep's done trials with one of `verdicts` back in the queue (attempts start over);
  // returns them as now stored.
  Result<std::vector<TrialRow>> RequeueDone(int64_t sweep, const std::vector<Verdict>& verdicts);
  Result<SweepRow> GetSweep(int64_t id);  // with its counts by state and verdict
  // Newest first, ids below `after` (0: from the newest), at most `limit`, those `f` keeps; with counts.
  Result<std::vector<SweepRow>> ListSweeps(int64_t after, int limit, const SweepFilter& f = {});
  // A search sweep (bisection): sets its kind and stores its state. NotFound for an unknown sweep.
  Status SetSweepSearch(int64_t sweep, SweepKind kind, const nlohmann::json& search);
  // Adds one queued trial to an existing sweep (a search's next probe) and counts it in the sweep's
  // trials; returns its id. NotFound for an unknown sweep.
  Result<int64_t> AddTrial(int64_t sweep, int max_attempts, const NewTrial& trial);
  // Cancels what is not done: queued trials end cancelled now (their ids in `cancelled`); leased and
  // running ones get cancel_requested, their workers stop them (ids in `stopping`); an expanding
  // sweep stores no more trials. Both lists are required and appended to. Conflict for a sweep with
  // nothing left to cancel.
  Status CancelSweep(int64_t id, std::vector<int64_t>* cancelled, std::vector<int64_t>* stopping);
  // The same for one trial; *now_done (required) is true if it was queued and is now done. A done
  // trial is left as it is (Ok).
  Status CancelTrial(int64_t id, bool* now_done);

  // Trials. GetTrial fills `result` with its latest attempt's result row.
  Result<TrialRow> GetTrial(int64_t id);
  // The test cases of the trial's latest attempt that has any (store/test_cases.cc); empty when none.
  Result<TrialTests> GetTrialTests(int64_t id);
  // Trials matching `f`, by id, after f.after, at most f.limit. `budget` (may be null: unbounded)
  // bounds the time and the rows: its Answer (naming "sweep") when it ends the listing.
  Result<std::vector<TrialRow>> ListTrials(const TrialFilter& f, QueryBudget* budget = nullptr);

  // Nodes. RegisterNode inserts or updates the node called `name` (it keeps its id; a quarantined
  // node stays quarantined, any other comes back online) and returns its row. `credential` (a
  // SHA-256 hex) replaces the stored one when not empty. Who may re-register a name is the
  // coordinator's decision, taken before this call.
  Result<NodeRow> RegisterNode(const std::string& name, const nlohmann::json& inventory, const nlohmann::json& labels,
                               const nlohmann::json& fingerprint, const std::string& hardware,
                               const std::string& credential = {});
  Result<std::optional<NodeRow>> FindNode(const std::string& name);  // nullopt if no node has that name
  Result<std::vector<NodeRow>> ListNodes();  // by id
  Status SetNodeState(int64_t id, NodeState state, const std::string& reason);
  Status TouchNodes(const std::vector<std::pair<int64_t, int64_t>>& last_seen);  // (node, ms)

  // Worker protocol writes (called by the scheduler's persistence adapter). LeaseTrial: Conflict
  // unless the trial is queued; counts an attempt. MarkRunning: a no-op unless leased under `epoch`.
  Status LeaseTrial(int64_t trial, int64_t node, const std::string& lease, int64_t epoch, int64_t deadline,
                    const std::string& gpus, const std::string& hardware);
  Status MarkRunning(int64_t trial, int64_t epoch);
  Status ExtendLeases(const std::vector<std::pair<int64_t, int64_t>>& trial_deadlines);  // (trial, ms)
  // Stores `r` as attempt r.attempt's result (replacing one stored), ends the trial done and files it
  // in the results index, in one write.
  Status FinishTrial(const ResultRow& r, std::optional<int64_t> evidence_trial = std::nullopt);
  // Back to queued with `attempt` attempts made, its lease dropped; whatever its state was.
  Status RequeueTrial(int64_t trial, int attempt);
  // Keeps attempt r.attempt of a trial that is being confirmed (its result row, filed in the results
  // index: counts and judged verdicts, so a later pass makes the cell flaky) and queues the trial
  // again with that many attempts made, in one write. NotFound for an unknown trial.
  Status RecordAttempt(const ResultRow& r);
  // (verdict, signature) of trial's kept attempts before `attempt`, oldest first: what a restart
  // needs to go on confirming it (only confirming attempts keep a result row while the trial is
  // not done). Empty on a store error.
  std::vector<std::pair<Verdict, std::string>> AttemptsBefore(int64_t trial, int attempt);
  // Ends still-unfinished trials with one verdict (pruning's skipped); done ones are left alone.
  // `hardware` files them in the results index (empty: not filed).
  Status FinishMany(const std::vector<int64_t>& trials, Verdict verdict, const std::string& signature,
                    std::optional<int64_t> evidence_trial, const std::string& hardware = "");
  // Appends log bytes at `offset` of the current attempt's log (each attempt's worker counts from 0;
  // the trial's log keeps every attempt, one after the other, each after a line naming it);
  // idempotent for a chunk already stored. Beyond `cap` bytes the middle is dropped: the first cap/2
  // and the latest cap/2 bytes are kept. Conflict for an offset past the end.
  Status AppendLog(int64_t trial, int64_t offset, std::string_view data, int64_t cap);
  // Appends log text from `offset` (about `max` bytes) to *out; `size` is the total written so far
  // and `next` the offset to read from next (all three required). Where the cap cut bytes out, a
  // one-line note stands in for them.
  Status ReadLog(int64_t trial, int64_t offset, int64_t max, std::string* out, int64_t* size, int64_t* next);

  // The latest judged result of `config_key` in that suite version on `hardware` under `fingerprint`
  // (verdicts that say something about the config only: not infra_error, timeout, cancelled, skipped).
  // nullopt also on a store error (reuse is an optimisation). The row carries no node_id or finished_at.
  // `fingerprint` nullopt: any (a suite with no fingerprint command is keyed on version and hardware).
  std::optional<ResultRow> FindResult(int64_t suite_id, const std::string& config_key, const std::string& hardware,
                                      const std::optional<std::string>& fingerprint);
  // Trial counts over the whole store by (state, verdict); verdict empty where none yet.
  Result<std::vector<std::tuple<std::string, std::string, int64_t>>> CountTrials();
  // Trials not done, by id, for rebuilding the scheduler at start.
  Result<std::vector<TrialRow>> ActiveTrials();
  // Runs `fn(sql::Db&)` on a read connection (pooled) and returns what it returns; the Db is lent for
  // the call only, and sql::Error from fn propagates. On a file it sees committed data only, not
  // writes still staged in a Group; an in-memory store reads through the writer, under the write lock.
  template <typename F>
  auto Read(F&& fn) {
    Lease l(this);
    return fn(*l.db);
  }
  // Heavy reads (docs/API.md "Query bounds"). A budget from the limits SetQueryLimits set (default
  // QueryLimits{}), tied to StopQueries. Thread-safe; set the limits before serving.
  void SetQueryLimits(const QueryLimits& l) { query_limits_ = l; }
  QueryBudget NewQuery() const { return QueryBudget(query_limits_, &stop_queries_); }
  // Ends every bounded read in progress (within a few thousand SQLite steps) and makes new ones end
  // at once: a drain or SIGTERM never waits for a long query. Thread-safe; irreversible.
  void StopQueries() { stop_queries_.store(true); }
  // Read(), with `b` watched from inside SQLite (a progress handler) for the call: a query past its
  // deadline, or once StopQueries ran, throws sql::Error(SQLITE_INTERRUPT) (IsInterrupt). `b` must
  // outlive the call.
  template <typename F>
  auto ReadBounded(QueryBudget& b, F&& fn) {
    Lease l(this);
    struct Watch {  // removed before the connection goes back to the pool
      sqlite3* db;
      Watch(sqlite3* d, QueryBudget* b) : db(d) { sqlite3_progress_handler(db, 4096, &QueryBudget::Progress, b); }
      ~Watch() { sqlite3_progress_handler(db, 0, nullptr, nullptr); }
    } watch(l.db->raw(), &b);
    return fn(*l.db);
  }
  // Runs `fn(sql::Db&)` as one write, serialized with all others: its changes all stay or all go
  // (rolled back when fn throws; an error fn returns rolls nothing back). Outside a Group it commits
  // before returning (with everything staged before it); inside, it is staged.
  template <typename F>
  auto Write(F&& fn) {
    waiting_writers_.fetch_add(1);
    MutexLock lock(write_mu_);
    waiting_writers_.fetch_sub(1);
    BeginWriteLocked();
    using R = decltype(fn(*writer_));
    if constexpr (std::is_void_v<R>) {
      try {
        fn(*writer_);
      } catch (...) {
        AbortWriteLocked();
        throw;
      }
      EndWriteLocked();
    } else {
      std::optional<R> r;
      try {
        r.emplace(fn(*writer_));
      } catch (...) {
        AbortWriteLocked();
        throw;
      }
      EndWriteLocked();
      return std::move(*r);
    }
  }

  // Group commit (docs/DECISIONS.md). While a Group lives on this thread, Write() stages: it runs at
  // once inside the shared open transaction, in its own savepoint, and returns without committing.
  // A committer thread commits what is staged, one transaction for many writes; an answer that
  // acknowledges a staged write waits for its ticket (docs/DESIGN.md: committed before the answer).
  using Ticket = uint64_t;
  // RAII, per thread; nests. Not shared between threads.
  class Group {
   public:
    Group();
    ~Group();
    Group(const Group&) = delete;
  };
  // The ticket that covers every write staged so far, by any thread.
  Ticket Staged();
  // Ok once the writes up to `t` are committed, the error if their commit failed, nullopt while pending.
  std::optional<Status> Outcome(Ticket t);
  // Runs `done` with Outcome(t) once it is known: at once on this thread if it is, else on the thread
  // whose commit settles it (the committer, or a writer outside a Group: it may hold its own locks),
  // with no store lock held. `done` must not write to the store synchronously from a committer callback.
  void AfterCommit(Ticket t, std::function<void(const Status&)> done);
  // Commits what is staged now; the error if that commit failed.
  Status Flush();
  // Called when a commit of staged writes failed (they are lost): state derived from them must be
  // reloaded from the store. Runs under the store's write lock, before any waiting answer learns of
  // the failure (so: set a flag, nothing more). Set once, before serving.
  void OnCommitFailure(std::function<void()> fn) { on_failure_ = std::move(fn); }

  // Why writes fail now, if the last one failed for lack of disk space and none has committed
  // since: "disk full: ..."; nullopt when writes work. While it is set, each call (at most once a
  // second, and not within a second of the failure) tries a write that changes nothing, so it
  // clears once space is back even if no client writes; a disk with room for that one page but not
  // for a large write also clears it (until the large write fails again). For /api/v1/health.
  std::optional<std::string> WriteTrouble();

 private:
  explicit Store(std::string path);
  struct Lease {  // a read connection checked out of the pool
    explicit Lease(Store* s);
    ~Lease();
    Store* store;
    sql::Db* db;
    std::unique_ptr<sql::Db> owned;
    // In-memory databases read through the writer, under write_mu_. A lock taken or not by the
    // store's kind, which the analysis cannot follow: writer_, all it guards, is not annotated.
    std::unique_lock<std::mutex> mem_lock;
  };
  void BeginWriteLocked() REQUIRES(write_mu_);
  void AbortWriteLocked() REQUIRES(write_mu_);
  void EndWriteLocked() REQUIRES(write_mu_);
  // Commits the open transaction, settles its tickets and runs their callbacks (write_mu_ released
  // meanwhile, held again on return, also when it throws); throws sql::Error when the commit failed.
  void CommitLocked() REQUIRES(write_mu_);
  void SettleLocked(Ticket upto, const Status& s) REQUIRES(write_mu_);
  void CommitLoop();
  // The suite's "key_metric" (cached: a stored suite version never changes). Under write_mu_.
  const std::string& KeyMetricName(sql::Db& db, int64_t suite_id) REQUIRES(write_mu_);
  // Writes `r` as one row of results and returns the cell it updates (its trial's suite, config and
  // hardware, its key metric); NotFound for an unknown trial. Under write_mu_, inside Write.
  Result<CellUpdate> InsertResultLocked(sql::Db& db, const ResultRow& r) REQUIRES(write_mu_);
  // A trial's log columns as its lease wrote them: log_size, log_base, log_attempt, and the attempt.
  struct AttemptLog {
    int64_t size, base, labelled, attempt;
  };
  // A leased trial's new attempt starts its log where the earlier attempts' end, after a line that
  // labels it (none when nothing was written since the last start; LeaseTrial then set log_attempt
  // itself). Under write_mu_, inside Write.
  void StartAttemptLogLocked(sql::Db& db, int64_t trial, const AttemptLog& log) REQUIRES(write_mu_);
  // Writes r's test cases (bounded) for its attempt, replacing any of an earlier report of it.
  void InsertTestCasesLocked(sql::Db& db, const ResultRow& r) REQUIRES(write_mu_);

  std::string path_;
  bool memory_;
  Mutex write_mu_;
  // Writers blocked on write_mu_: a sweep stored in chunks lets them go first between its chunks
  // (std::mutex is not fair: the thread that just unlocked it would take it again at once).
  std::atomic<int> waiting_writers_{0};
  void LetWaitingWritersGo();
  std::unique_ptr<sql::Db> writer_;
  // Group commit state. Under write_mu_: the connection's transaction. Under tickets_mu_: what is
  // settled and who waits for it, so that answering threads never wait for a COMMIT's I/O (which
  // runs under write_mu_) just to look up or wait for a ticket.
  // writer_ itself is not annotated: Open uses it before any other thread exists, and Lease locks
  // for it only on an in-memory store.
  bool open_ GUARDED_BY(write_mu_) = false;       // a transaction is open on writer_
  bool savepoint_ GUARDED_BY(write_mu_) = false;  // the write in progress runs in a savepoint (it joined a transaction)
  std::atomic<Ticket> staged_{0};  // written under write_mu_
  Ticket committing_ GUARDED_BY(write_mu_) = 0;  // the last ticket a commit (or abort) settled
  Mutex tickets_mu_;
  Ticket settled_ GUARDED_BY(tickets_mu_) = 0;
  // Recent ticket ranges whose commit failed.
  std::deque<std::pair<Ticket, Ticket>> failed_ GUARDED_BY(tickets_mu_);
  std::vector<std::pair<Ticket, std::function<void(const Status&)>>> waiting_ GUARDED_BY(tickets_mu_);
  std::condition_variable commit_cv_;
  // WriteTrouble's: set when a write or commit failed for lack of space, cleared by a commit.
  void NoteWriteErrorLocked(const sql::Error* e) REQUIRES(write_mu_);
  Mutex trouble_mu_;
  std::optional<std::string> no_space_ GUARDED_BY(trouble_mu_);
  int64_t last_probe_ms_ GUARDED_BY(trouble_mu_) = 0;
  bool stop_ GUARDED_BY(write_mu_) = false;
  std::function<void()> on_failure_;
  std::thread committer_;
  std::unordered_map<int64_t, std::string> key_metrics_ GUARDED_BY(write_mu_);  // suite id -> key metric
  // FindResult's filter: per suite version (loaded at its first lookup), the hashes of the config
  // keys with a judged result row, staged or committed, and of every key filed since. A key not in
  // it has no result to reuse, so most lookups (a new config's) read nothing; a hash collision or
  // a row rolled back only costs the query. Loaded under write_mu_, so no write slips between.
  bool MayHaveResult(int64_t suite_id, const std::string& config_key);
  void NoteResultKeyLocked(int64_t suite_id, const std::string& config_key) REQUIRES(write_mu_);
  Mutex result_keys_mu_;  // after write_mu_ when both are held
  std::unordered_map<int64_t, std::unordered_set<size_t>> result_keys_ GUARDED_BY(result_keys_mu_);
  Mutex pool_mu_;
  std::vector<std::unique_ptr<sql::Db>> pool_ GUARDED_BY(pool_mu_);
  QueryLimits query_limits_;
  std::atomic<bool> stop_queries_{false};
};

}  // namespace gauntlet::store
