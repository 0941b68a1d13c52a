// What stage runners share: the trial's context, the stage environment (docs/DESIGN.md "Stage
// environment"), argv substitution, and the outcome of one stage.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "core/basis.h"
#include "core/verdict.h"
#include "workers/log_sink.h"
#include "proc/process_runner.h"
#include "workers/trial_users.h"
#include "workers/worker_clock.h"

namespace gauntlet::worker {

// A suite definition the trials of one suite version share, read-only, so a trial holds it without
// a copy of its own (a definition carries its parameters' whole value lists: thousands of nodes to
// copy and free per trial, issue 31). Reads as a const json; a json converts to one (a test's).
class SharedDefinition {
 public:
  SharedDefinition() : SharedDefinition(nlohmann::json::object()) {}
  SharedDefinition(nlohmann::json j) : p_(std::make_shared<const nlohmann::json>(std::move(j))) {}  // NOLINT(google-explicit-constructor)
  // `p` null: an empty object.
  explicit SharedDefinition(std::shared_ptr<const nlohmann::json> p)
      : p_(p ? std::move(p) : std::make_shared<const nlohmann::json>(nlohmann::json::object())) {}
  operator const nlohmann::json&() const { return *p_; }  // NOLINT(google-explicit-constructor)
  const nlohmann::json* operator->() const { return p_.get(); }
  const nlohmann::json& operator*() const { return *p_; }

 private:
  std::shared_ptr<const nlohmann::json> p_;
};

// What a stage runner knows of its trial. Built by RunTrial (or a test), which owns it and keeps
// what it points to alive for the stage's whole run; stages read it and append to its log.
struct TrialContext {
  int64_t trial = 0;
  std::string node_name;
  SharedDefinition suite;       // the suite definition
  std::string suite_dir;        // folder of the suite file ({suite_dir}); may be empty
  std::map<std::string, std::string> config;  // parameter -> value
  std::vector<int> gpus;        // allocated GPU indices
  const Inventory* inv = nullptr;
  std::string workdir;          // fresh per trial
  std::string exe_dir;          // folder of the gauntlet binary (gauntlet-kernels lives beside it)
  std::vector<std::string> pass_env;  // worker environment variables passed through
  std::function<bool()> should_stop;  // cancel, lease lost, or drain-kill; callable from any thread
  LogSink* log = nullptr;
  // Every process a stage starts goes through this runner (TrialRunnerEnv's, so RunWorker's).
  proc::ProcessRunner* processes = nullptr;
  std::chrono::milliseconds kill_grace{5000};
  // Every wait and deadline of the stage (poll intervals, ready and stage timeouts); RunTrial's is
  // TrialRunnerEnv's, so RunWorker's.
  WorkerClock* clock = &SteadyWorkerClock();
  // The grant's "reference" (SUITE_FORMAT.md "Differential validation"): the reference trial's
  // recorded smoke answers, or why there are none; null when the daemon sent none.
  nlohmann::json reference;
  // The kernel recorder's library (workers/kernel_recording.h) when this node records kernels;
  // empty: stages run without it.
  std::string kernel_recorder;
  // The trial's own user (workers/trial_users.h), which every process of its stages runs as; unset:
  // they run as the worker's user. `isolation` says which, for each stage's report.
  std::optional<TrialUser> user;
  std::string isolation;
  // The trial's own view of the machine (workers/trial_views.h) its processes run in; unset: the host's.
  std::optional<proc::OwnView> view;
  // Whether this node's stage cgroups hold memory.max and pids.max (probed at the worker's start),
  // and --require-limits: a stage that declares a limit the node cannot hold is then refused.
  bool limits_enforced = false;
  bool require_limits = false;
};

// How one stage ended: its verdict (core/verdict.h), the signature and evidence that explain a
// failure, how its process ended, its metrics and its duration. A plain value.
struct StageOutcome {
  std::string stage;
  Verdict verdict = Verdict::kPassed;
  std::string signature, evidence;
  // What the verdict was judged from (core/basis.h): the classifier's basis when it decided, the
  // worker's own when the worker did (a limit, a stop, a lost server), the kernel record's, ...
  Basis basis = Basis::kWorker;
  std::optional<int> exit_code;
  std::optional<std::string> signal;
  nlohmann::json metrics = nlohmann::json::object();  // name -> {"value", "unit"}
  double seconds = 0;
  // Extra fields for this stage's entry in the report's "stages" (a server stage's recorded smoke
  // answers and its differential check); an object.
  nlohmann::json summary = nlohmann::json::object();
  // The stage's test cases (workers/test_outcomes.h), each {"name", "outcome", "verdict",
  // "signature", "evidence", "seconds"}, and how many the runner reported beyond them.
  nlohmann::json tests = nlohmann::json::array();
  size_t tests_not_sent = 0;
  std::string last_line;  // the last non-empty output line (a probe stage's answer); at most 1 MiB
};

// The helpers below keep no state of their own and are safe from any thread.

// The variables placeholders resolve to for this trial and stage ({port} is fresh per stage).
std::map<std::string, std::string> StageVars(const TrialContext& ctx, int port);
// The child's whole environment: a minimal base, passed-through variables, docs/DESIGN.md's stage
// variables, and the stage's own "env" (placeholders substituted).
std::map<std::string, std::string> StageEnv(const TrialContext& ctx, const nlohmann::json& stage, int port,
                                            const std::string& result_file);
// Sets spec's memory and pids limits from the stage's and the suite's "limits" (core/stage_limits.h),
// the node's defaults (proc::DefaultStageLimits) where neither sets one. O(1).
void SetStageLimits(const TrialContext& ctx, const nlohmann::json& stage, proc::ProcessSpec* spec);
// A stage's declared limits (limits.memory_mb / limits.pids) that `exit` says were not applied, as a
// phrase ("memory_mb 6144, pids 64"); "" when every declared limit held.
std::string UnenforcedLimits(const TrialContext& ctx, const nlohmann::json& stage, const proc::ExitInfoProc& exit);
// Says in the stage's report (`limits`) and in the trial's log that its declared limits were not
// enforced, when so: a verdict that ran without them is not one that ran within them.
void NoteUnenforcedLimits(const TrialContext& ctx, const nlohmann::json& stage, const proc::ExitInfoProc& exit,
                          StageOutcome* out);
// With --require-limits, the outcome of a stage this node must refuse (it declares a limit the
// node's stage cgroups cannot hold): infra_error:limits_not_enforced, so the trial goes back to be
// run elsewhere; nullopt to run it.
std::optional<StageOutcome> RefuseForLimits(const TrialContext& ctx, const nlohmann::json& stage);
// Makes `spec` run as the trial's user, when it has one (ctx.user).
void RunAsTrialUser(const TrialContext& ctx, proc::ProcessSpec* spec);
// A stage whose process could not start (`st`, ProcessRunner::Start's): the node's fault, not the
// configuration's, so infra_error and the trial runs elsewhere. A program the node lacks is
// infra_error:program_not_found:NAME (its base name), anything else infra_error:stage_not_started;
// the evidence is `st`'s message, also written to the log. Pure but for the log.
void SettleNotStarted(const TrialContext& ctx, const Status& st, const std::string& program, StageOutcome* out);
// A stage the kernel ended at one of its limits: an OOM kill in its cgroup is `oom` (signature
// oom:memory_limit) whatever the log said, with the limit in the evidence; a refused fork at
// pids.max is named in the evidence of a stage that failed. A timeout or a stop stays what it was.
void JudgeLimits(const proc::ExitInfoProc& exit, const proc::ProcessSpec& spec, StageOutcome* out);
// A free TCP port on loopback (bind to 0, read, close); 0 when none could be had.
int FreePort();
// Reads metrics from a result file ({"metrics": {...}, "verdict", "detail"}) or from the last stdout
// line that is a JSON object with "metrics". Numbers become {"value": n}; objects are kept. The
// file's "verdict", "detail" and "signature" go to *file_verdict, *file_detail and out->signature
// (a stdout line's verdict only when it is a verdict's name: that line is advisory).
// Returns why a result file that exists cannot be used (not UTF-8, not a JSON object, a verdict that
// is not a string or not one a result file may name; a link, a FIFO, a file over 1 MiB or outside
// `workdir`: workers/result_file.h), "" when it is fine or absent: a broken file must fail the
// stage, never let it pass. `workdir` "": the folder the file's path names.
std::string ReadMetrics(const std::string& result_file, const std::string& last_json_line, StageOutcome* out,
                        std::optional<Verdict>* file_verdict, std::string* file_detail, const std::string& workdir = "",
                        std::optional<uid_t> owner = std::nullopt);

}  // namespace gauntlet::worker
