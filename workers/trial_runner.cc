#include "workers/trial_runner.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "classifier/classifier.h"
#include "workers/command_stage.h"
#include "workers/kernel_recording.h"
#include "workers/lease_keeper.h"
#include "workers/probe_stage.h"
#include "workers/server_stage.h"
#include "workers/test_outcomes.h"

namespace gauntlet::worker {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What the stages of one trial came to: the outcome that settles it (the first failure, else the
// last stage's), every stage's summary, and the metrics of all of them.
struct TrialOutcome {
  StageOutcome last;
  json stages = json::array();
  json metrics = json::object();
  bool recorded = false;  // some stage ran under the kernel recorder
  KernelRecord kernels;   // what every recorded stage's processes launched
  json tests = json::array();  // every stage's test cases, each with its "stage" (test_outcomes.h)
  size_t tests_not_sent = 0;
};

// `definition` null: the grant's own, moved out of `g` (nothing reads it there after).
TrialContext MakeContext(const TrialRunnerEnv& env, json& g, std::shared_ptr<const json> definition, LogSink* log) {
  TrialContext ctx;
  ctx.trial = g.value("trial", int64_t{0});
  ctx.node_name = env.node_name;
  if (definition) {
    ctx.suite = SharedDefinition(std::move(definition));
  } else {
    json& def = g["suite"]["definition"];
    ctx.suite = def.is_null() ? json::object() : std::move(def);
  }
  ctx.suite_dir = g["suite"].value("source_dir", "");
  const json config = g.value("config", json::object());
  for (auto& [k, v] : config.items()) ctx.config[k] = v.is_string() ? v.get<std::string>() : v.dump();
  for (auto& x : g.value("gpus", json::array())) ctx.gpus.push_back(x.get<int>());
  ctx.inv = env.inv;
  ctx.workdir = env.workdir + "/trial-" + std::to_string(ctx.trial) + "-a" + std::to_string(g.value("attempt", 1));
  ctx.exe_dir = env.exe_dir;
  ctx.pass_env = env.pass_env;
  ctx.log = log;
  ctx.clock = env.clock;
  ctx.processes = env.processes;
  ctx.kill_grace = env.kill_grace;
  if (g.contains("reference")) ctx.reference = g["reference"];
  ctx.kernel_recorder = env.kernel_recorder;
  ctx.limits_enforced = env.limits_enforced;
  ctx.require_limits = env.require_limits;
  return ctx;
}

// The daemon ran the same validator when the suite was registered, so a refusal here means a
// definition that did not come through it; the trial then runs on the built-in rules alone.
std::vector<SignatureRule> SuiteRules(const json& suite, LogSink& log) {
  auto parsed = ParseSignatureRules(suite.value("signatures", json::array()));
  if (parsed.ok()) return std::move(*parsed);
  log.Append("gauntlet: ignoring the suite's signature rules: " + parsed.status().field() + ": " +
             parsed.status().message() + "\n");
  return {};
}

TrialOutcome RunStages(const TrialContext& ctx, const std::vector<SignatureRule>& rules) {
  TrialOutcome t;
  t.last.verdict = Verdict::kPassed;
  for (auto& st : ctx.suite->value("stages", json::array())) {
    if (ctx.should_stop()) break;
    const std::string kind = st.value("kind", "");
    std::optional<StageOutcome> refused = kind == "probe" ? std::nullopt : RefuseForLimits(ctx, st);
    if (refused) ctx.log->Append("gauntlet: " + refused->evidence + "\n");
    StageOutcome o = refused           ? *refused
                     : kind == "server" ? RunServerStage(ctx, st, rules)
                     : kind == "probe"  ? RunProbeStage(ctx, st)
                                        : RunCommandStage(ctx, st, rules);
    if (o.verdict != Verdict::kCancelled) {
      // A stage that records nothing still says its dispatch expectation went unchecked.
      t.recorded = t.recorded || RecordsKernels(ctx, st);
      ApplyKernelRecord(ctx, st, &o, &t.kernels);
    }
    json sj = {{"name", o.stage}, {"verdict", Name(o.verdict)}, {"seconds", o.seconds}};
    if (!o.signature.empty()) sj["signature"] = o.signature;
    sj["basis"] = Name(o.basis);
    if (!ctx.isolation.empty()) sj["isolation"] = ctx.isolation;  // how the verdict was obtained
    if (o.exit_code) sj["exit_code"] = *o.exit_code;
    if (o.signal) sj["signal"] = *o.signal;
    for (auto& [k, v] : o.summary.items())
      if (!sj.contains(k)) sj[k] = v;
    t.stages.push_back(sj);
    for (auto& [k, v] : o.metrics.items()) t.metrics[k] = v;
    for (auto& c : o.tests) {
      if (t.tests.size() >= kMaxReportedTestCases) {
        ++t.tests_not_sent;
        continue;
      }
      c["stage"] = o.stage;
      t.tests.push_back(c);
    }
    t.tests_not_sent += o.tests_not_sent;
    t.last = o;
    if (o.verdict != Verdict::kPassed) break;  // later stages depend on this one; a failure settles the trial
  }
  return t;
}

// A stop is a user's cancel, unless it came from this worker shutting down: then it is not the
// config's fault, and the trial runs again elsewhere.
void SettleStop(StageOutcome* last, bool stop_asked, bool cancel_asked, bool worker_aborting) {
  if (last->verdict == Verdict::kPassed && stop_asked) {
    last->verdict = Verdict::kCancelled;
    last->signature = "cancelled:stopped";
    last->basis = Basis::kWorker;
  }
  if (last->verdict == Verdict::kCancelled && !cancel_asked && worker_aborting) {
    last->verdict = Verdict::kInfraError;
    last->signature = "infra_error:worker_shutdown";
    last->evidence = "the worker was stopped before the trial finished";
    last->basis = Basis::kWorker;
  }
}

json ReportJson(const TrialOutcome& t, const json& fingerprint) {
  const StageOutcome& last = t.last;
  json report = {{"verdict", Name(last.verdict)}, {"signature", last.signature}, {"evidence", last.evidence},
                 {"basis", Name(last.basis)},
                 {"failing_stage", last.verdict == Verdict::kPassed ? "" : last.stage}, {"metrics", t.metrics},
                 {"stages", t.stages}, {"fingerprint", fingerprint}};
  if (last.exit_code) report["exit_code"] = *last.exit_code;
  if (last.signal) report["signal"] = *last.signal;
  if (t.recorded) report["kernels"] = KernelRecordJson(t.kernels);
  if (!t.tests.empty() || t.tests_not_sent) report["tests"] = {{"cases", t.tests}, {"not_sent", t.tests_not_sent}};
  return report;
}

// Points ctx.suite_dir at the suite version's files when the grant names a bundle (fetched and
// checked once per hash by env.bundles); a grant without one keeps the daemon's source_dir.
Status UseSuiteBundle(const TrialRunnerEnv& env, const json& g, TrialContext* ctx) {
  const std::string sha = g["suite"].value("bundle", "");
  if (sha.empty()) return Status::Ok();
  // A worker that has the suite's folder where the daemon loaded it from (the daemon's own machine)
  // runs it from there, as before bundles: suites that reach beside their folder
  // ({suite_dir}/../x.py, as the test fixtures do) keep working there. Every other worker runs the
  // bundle, which holds the folder's files only.
  std::error_code ec;
  if (!ctx->suite_dir.empty() && fs::is_directory(ctx->suite_dir, ec)) return Status::Ok();
  if (!env.bundles) return Status::Internal("this worker keeps no suite bundles, and the suite's files are one");
  auto dir = env.bundles->Folder(sha);
  if (!dir.ok()) return dir.status();
  ctx->suite_dir = *dir;
  return Status::Ok();
}

// Whether the file system under `dir` has no block or no inode left for a stage to write.
bool NoSpaceAt(const std::string& dir) {
  struct statvfs v{};
  if (statvfs(dir.c_str(), &v) != 0) return false;  // cannot tell: the stage's own failure stands
  return v.f_bavail == 0 || (v.f_files > 0 && v.f_favail == 0);
}

// A work folder the trial cannot use: not created (`created` holds why), or on a full file system.
// Either is this node's trouble, not the config's: infra_error, so the trial runs again elsewhere
// (a full disk used to fail the first stage as the config's crash, or leave nothing to judge).
bool SettleUnusableWorkdir(const std::string& dir, std::error_code created, StageOutcome* out) {
  std::error_code ec;
  const bool full = created == std::errc::no_space_on_device || (!created && NoSpaceAt(dir));
  if (!full && !created && fs::is_directory(dir, ec)) return false;
  out->stage = "workdir";
  out->verdict = Verdict::kInfraError;
  out->signature = full ? "infra_error:disk_full" : "infra_error:workdir";
  out->evidence = full ? "no space left on device for the trial's work folder " + dir
                       : "cannot create the trial's work folder " + dir + ": " +
                             (created ? created.message() : std::string("not a directory"));
  return true;
}

// A failed stage on a file system that is now full failed for the disk (a result file or a
// scratch write refused): infra_error:disk_full, keeping what the stage's own judgment said.
void JudgeFullDisk(const std::string& dir, StageOutcome* out) {
  if (out->verdict == Verdict::kPassed || out->verdict == Verdict::kCancelled || out->verdict == Verdict::kInfraError)
    return;
  if (!NoSpaceAt(dir)) return;
  out->evidence = "no space left on device under " + dir + " (the stage was judged " + std::string(Name(out->verdict)) +
                  (out->signature.empty() ? "" : ", " + out->signature) + ")" +
                  (out->evidence.empty() ? "" : ": " + out->evidence);
  out->verdict = Verdict::kInfraError;
  out->signature = "infra_error:disk_full";
  out->basis = Basis::kWorker;
}

enum class Delivery { kDelivered, kLeaseLost, kGaveUp };

// Delivers the log left over and then the report, retrying while the daemon is away (it may be
// restarting); the report is idempotent, so a retry after a lost answer is harmless. Gives up only
// on a refusal, or once the worker aborts and the backoff has grown past 2 s.
Delivery Deliver(const TrialRunnerEnv& env, int64_t trial, const std::string& lease, LogSink& log, const json& report) {
  int delay_ms = 50;
  while (true) {
    while (log.pending()) {
      auto [offset, data] = log.Peek(512 * 1024);
      LinkAnswer a = env.daemon->AppendLog(lease, offset, data);
      if (a.status == LinkStatus::kLost) return Delivery::kLeaseLost;
      if (!a.ok()) break;
      log.Ack(offset + static_cast<int64_t>(data.size()));
    }
    if (!log.pending()) {
      LinkAnswer a = env.daemon->Report(lease, report);
      if (a.ok()) return Delivery::kDelivered;
      if (a.status == LinkStatus::kLost) {
        spdlog::warn("trial {}: the daemon refused the report: {}", trial, a.detail);
        return Delivery::kGaveUp;
      }
      if (a.status == LinkStatus::kRefused) {
        spdlog::error("trial {}: report rejected ({})", trial, a.detail);
        return Delivery::kGaveUp;
      }
    }
    if (env.abort_all && *env.abort_all && delay_ms > 2000) return Delivery::kGaveUp;
    env.clock->SleepFor(std::chrono::milliseconds(delay_ms));  // backoff while the daemon is away
    delay_ms = std::min(delay_ms * 2, 2000);
  }
}

}  // namespace

void RunTrial(const TrialRunnerEnv& env, json g, std::shared_ptr<const json> definition) {
  LogSink log;
  TrialContext ctx = MakeContext(env, g, std::move(definition), &log);
  const std::string lease = g.value("lease", "");
  std::error_code ec;
  fs::remove_all(ctx.workdir, ec);
  fs::create_directories(ctx.workdir, ec);
  std::error_code created = ec;
  // The trial's own user and folder (workers/trial_users.h): the folder 0700 and its user's, so no
  // other trial reads or writes it. The id goes back only once the folder is gone.
  if (env.users) ctx.user = env.users->Acquire();
  bool folder_gone = false;
  struct GiveBack {
    const TrialRunnerEnv& env;
    const std::optional<TrialUser>& user;
    const bool& folder_gone;
    ~GiveBack() {
      if (user && folder_gone) env.users->Release(*user);
    }
  } give_back{env, ctx.user, folder_gone};
  if (ctx.user) {
    ctx.isolation = "trial user " + std::to_string(ctx.user->uid);
    if (!created && (chown(ctx.workdir.c_str(), ctx.user->uid, ctx.user->gid) != 0 || chmod(ctx.workdir.c_str(), 0700) != 0))
      created = std::error_code(errno, std::generic_category());
  } else if (env.users) {
    ctx.isolation = env.users->enabled() ? "off: every trial user of this worker is taken" : env.users->description();
  }
  // Its own view of the machine (workers/trial_views.h), in a folder beside the trial's that the
  // trial's user cannot rearrange.
  const std::string view_folder = env.workdir + "/view-" + fs::path(ctx.workdir).filename().string().substr(6);
  if (ctx.user && env.views && env.views->enabled()) {
    fs::remove_all(view_folder, ec);
    const std::string recorder_dir = env.kernel_recorder.empty() ? "" : fs::path(env.kernel_recorder).parent_path().string();
    if (Result<proc::OwnView> v = env.views->Prepare(view_folder, {ctx.suite_dir, recorder_dir}); v.ok()) {
      ctx.view = *v;
      ctx.isolation += "; " + env.views->description();
    } else {
      ctx.isolation += "; namespaces off: " + v.status().message();
      log.Append("gauntlet: " + v.status().message() + "\n");
    }
  } else if (env.views && ctx.user) {
    ctx.isolation += "; " + env.views->description();
  }

  LeaseKeeper keeper(*env.daemon, lease, std::chrono::milliseconds(g.value("heartbeat_ms", int64_t{5000})), log,
                     env.abort_all, *env.clock);
  auto aborting = [&] { return env.abort_all && *env.abort_all; };
  ctx.should_stop = [&] { return keeper.cancel() || keeper.lost() || aborting(); };

  const std::vector<SignatureRule> rules = SuiteRules(ctx.suite, log);
  TrialOutcome t;
  json fingerprint = json::object();
  if (SettleUnusableWorkdir(ctx.workdir, created, &t.last)) {
    log.Append("gauntlet: " + t.last.evidence + "\n");
  } else if (Status files = UseSuiteBundle(env, g, &ctx); !files.ok()) {
    // Without its files no stage can run as written: not the config's fault, so the trial is
    // retried (elsewhere, where the fetch may work) as any infrastructure failure is.
    t.last.verdict = Verdict::kInfraError;
    t.last.signature = "infra_error:suite_bundle";
    t.last.evidence = files.message();
    log.Append("gauntlet: " + files.message() + "\n");
  } else if (const Result<json> fp = env.fingerprints->Get(ctx); !fp.ok()) {
    // The software a result is filed under: unknown when its command failed, and then the trial is
    // an infrastructure error of this node, never a result filed under a failure's text.
    log.Append("gauntlet: " + fp.status().message() + "\n");
    t.last.stage = "fingerprint";
    t.last.verdict = Verdict::kInfraError;
    t.last.signature = "infra_error:fingerprint_failed";
    t.last.evidence = fp.status().message().substr(0, 1000);
  } else {
    fingerprint = *fp;
    t = RunStages(ctx, rules);
    JudgeFullDisk(ctx.workdir, &t.last);
  }
  if (keeper.lost()) {
    keeper.Finish();
    spdlog::warn("trial {}: lease lost; not reporting", ctx.trial);
    return;
  }
  SettleStop(&t.last, ctx.should_stop(), keeper.cancel(), aborting());
  log.Append("=== trial " + std::to_string(ctx.trial) + ": " + std::string(Name(t.last.verdict)) + "\n");
  keeper.Finish();
  // A lease lost while delivering leaves the work folder to the next worker start (proc::KillTrialLeftovers).
  if (Deliver(env, ctx.trial, lease, log, ReportJson(t, fingerprint)) == Delivery::kLeaseLost) return;
  fs::remove_all(ctx.workdir, ec);
  std::error_code vec;
  if (ctx.view) fs::remove_all(view_folder, vec);
  folder_gone = !ec && !vec;
}

}  // namespace gauntlet::worker
