#include "workers/command_stage.h"

#include <chrono>
#include <filesystem>
#include <set>

#include "core/suite.h"
#include "core/verdict.h"
#include "core/signal_names.h"
#include "workers/rank_group.h"
#include "workers/test_outcomes.h"

namespace gauntlet::worker {
using proc::ExitInfoProc;
using proc::ProcessSpec;
using proc::RunningProcess;
using classifier::Classification;
using classifier::Classifier;
using classifier::ExitInfo;
using nlohmann::json;

void Judge(const Classification& c, const std::optional<Verdict>& file_verdict, const std::string& file_detail,
           bool timed_out, bool stopped, StageOutcome* out, const std::string& bad_result_file) {
  if (stopped) {
    out->verdict = Verdict::kCancelled;
    out->signature = "cancelled:stopped";
    out->evidence = "the stage was stopped (cancel, lease lost or worker shutdown)";
    return;
  }
  if (timed_out) {
    out->verdict = Verdict::kTimeout;
    // The classifier's key is kept when the log explains the hang (an NCCL watchdog, say); its
    // generic "the limit passed" key says less than the stage's name.
    const bool specific = c.verdict == Verdict::kTimeout && !c.signature.empty() && c.signature != "timeout:stage_limit";
    out->signature = specific ? c.signature : "timeout:" + out->stage;
    out->evidence = c.evidence.empty() ? "the stage outlived its timeout" : c.evidence;
    out->basis = specific ? c.basis : Basis::kWorker;
    return;
  }
  if (!bad_result_file.empty()) {
    // The stage meant to say something and could not: whatever the exit status, it did not pass.
    // A failure the log explains is kept; the file's problem is in the evidence either way.
    const bool failed = c.verdict != Verdict::kPassed;
    out->verdict = failed ? c.verdict : Verdict::kCrashed;
    out->signature = failed && !c.signature.empty() ? c.signature : "crashed:bad_result_file";
    out->basis = failed ? c.basis : Basis::kWorker;
    out->evidence = bad_result_file + (c.evidence.empty() ? "" : "; " + c.evidence);
    return;
  }
  // A result file may name the verdicts a signature rule may (core/verdict.h), never the scheduler's own.
  if (file_verdict && Info(*file_verdict).rule) {
    out->verdict = *file_verdict;
    out->basis = Basis::kSuiteRule;  // the stage's own result file said it
    if (out->verdict == Verdict::kPassed) {
      out->signature.clear();
      out->evidence = file_detail;
      return;
    }
    // The stage said what failed; the classifier's signature is more specific when it agrees.
    if (out->signature.empty())
      out->signature = c.verdict == out->verdict && !c.signature.empty() ? c.signature : std::string(Name(out->verdict)) + ":" + out->stage;
    out->evidence = !file_detail.empty() ? file_detail : c.evidence;
    return;
  }
  out->verdict = c.verdict;
  out->signature = c.signature;
  out->evidence = c.evidence;
  out->basis = c.basis;
  if (out->verdict != Verdict::kPassed && out->signature.empty()) out->signature = std::string(Name(out->verdict)) + ":" + out->stage;
}

namespace {
// "ranks": N, or "gpus" for one rank per GPU of the trial; 0 when the stage is one process.
int StageRanks(const TrialContext& ctx, const json& stage) {
  if (!stage.contains("ranks")) return 0;
  const json& r = stage["ranks"];
  if (r.is_number_integer()) return static_cast<int>(std::clamp<int64_t>(r.get<int64_t>(), 1, 64));
  return std::max<int>(1, static_cast<int>(ctx.gpus.size()));
}
}  // namespace

StageOutcome RunCommandStage(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules) {
  StageOutcome out;
  out.stage = stage.value("name", "stage");
  const auto t0 = ctx.clock->Now();
  const int port = FreePort();
  const std::string result_file = ctx.workdir + "/" + out.stage + ".result.json";
  std::error_code ec;
  std::filesystem::remove(result_file, ec);
  auto vars = StageVars(ctx, port);
  ProcessSpec spec;
  for (auto& a : stage.value("argv", json::array())) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, stage, port, result_file);
  spec.cwd = ctx.workdir;
  SetStageLimits(ctx, stage, &spec);
  RunAsTrialUser(ctx, &spec);
  std::string header = "=== stage " + out.stage + ":";
  for (auto& a : spec.argv) header += " " + a;
  const int world = StageRanks(ctx, stage);
  if (world > 0) header += "  (" + std::to_string(world) + " ranks)";
  // Ranks share one PID namespace, the host's: CUDA IPC and NCCL's shared-memory transport between
  // them name each other by pid (docs/DECISIONS.md "Its own view of the machine").
  if (world > 1 && spec.view) spec.view->own_pids = false;
  ctx.log->Append(header + "\n");
  auto not_started = [&](const Status& st) {
    SettleNotStarted(ctx, st, spec.argv.empty() ? "" : spec.argv[0], &out);
    return out;
  };
  std::unique_ptr<RunningProcess> proc;
  if (world == 0) {
    auto started = ctx.processes->Start(spec);
    if (!started.ok()) return not_started(started.status());
    proc = std::move(*started);
  }
  Classifier classifier(rules);
  std::string last_line, partial;
  const int timeout_s = stage.value("timeout_s", 3600);
  const auto deadline = t0 + std::chrono::seconds(timeout_s);
  const std::function<void(std::string_view)> on_output = [&](std::string_view chunk) {
        ctx.log->Append(chunk);
        classifier.Feed(chunk);
        // Track the last complete non-empty line, for "metrics on the last stdout line".
        partial.append(chunk);
        size_t end = partial.find_last_of('\n');
        if (end != std::string::npos) {
          size_t start = partial.find_last_of('\n', end == 0 ? 0 : end - 1);
          std::string line = partial.substr(start == std::string::npos || start == end ? 0 : start + 1,
                                            end - (start == std::string::npos || start == end ? 0 : start + 1));
          if (!line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) last_line = line;
          partial.erase(0, end + 1);
        }
        if (partial.size() > (1u << 20)) partial.erase(0, partial.size() - (1u << 20));
  };
  ExitInfoProc exit;
  int first_failed = -1;
  if (world == 0) {
    exit = proc->Run(deadline, on_output, ctx.should_stop, ctx.kill_grace, std::chrono::milliseconds(100));
  } else {
    // One process per rank; the first to fail ends the others (workers/rank_group.h).
    auto g = RunRankGroup(*ctx.processes, spec, world, port, deadline, on_output, ctx.should_stop, ctx.kill_grace,
                          std::chrono::milliseconds(100));
    if (!g.ok()) return not_started(g.status());
    exit = g->exit;
    first_failed = g->first_failed;
  }
  if (!partial.empty() && partial.find_first_not_of(" \t\r") != std::string::npos) last_line = partial;
  out.exit_code = exit.exit_code;
  if (exit.signal) out.signal = SignalName(*exit.signal);
  out.seconds = std::chrono::duration<double>(ctx.clock->Now() - t0).count();
  std::optional<Verdict> file_verdict;
  std::string detail;
  while (!last_line.empty() && (last_line.back() == '\r' || last_line.back() == ' ')) last_line.pop_back();
  out.last_line = last_line;
  const std::string bad_file =
      ReadMetrics(result_file, last_line.size() && last_line[0] == '{' ? last_line : "", &out, &file_verdict, &detail, ctx.workdir,
                  ctx.user ? std::optional<uid_t>(ctx.user->uid) : std::nullopt);
  ExitInfo ei;
  ei.exit_code = exit.exit_code;
  ei.signal = exit.signal;
  ei.timed_out = exit.timed_out;
  ei.cancelled = exit.stopped;
  const Classification c = classifier.Finish(ei);
  Judge(c, file_verdict, detail, exit.timed_out, exit.stopped, &out, bad_file);
  JudgeLimits(exit, spec, &out);
  NoteUnenforcedLimits(ctx, stage, exit, &out);
  // A rank stage's failure names its rank: the classifier's when the log showed one, else the
  // rank that ended first.
  const std::string tag = "[rank" + std::to_string(first_failed) + "]";
  if (first_failed >= 0 && c.rank.empty() && out.verdict != Verdict::kPassed && out.verdict != Verdict::kCancelled &&
      out.evidence.find(tag) == std::string::npos)
    out.evidence = "rank " + std::to_string(first_failed) + " ended first: " + out.evidence;
  // The test runner's own report, per case: a named JUnit file, else its console report.
  SettleTests(ctx, stage, vars, classifier, rules, TestStageEnd{exit.timed_out, exit.stopped}, &out);
  ctx.log->Append("=== stage " + out.stage + " ended: " + std::string(Name(out.verdict)) +
                  (out.signature.empty() ? "" : " (" + out.signature + ")") + " after " +
                  std::to_string(static_cast<int>(out.seconds * 1000)) + " ms\n");
  return out;
}

}  // namespace gauntlet::worker
