#include "workers/probe_stage.h"

#include "core/probe.h"
#include "workers/command_stage.h"

namespace gauntlet::worker {
using nlohmann::json;

namespace {
StageOutcome Failed(StageOutcome out, const std::string& signature, const std::string& evidence, const TrialContext& ctx) {
  out.verdict = Verdict::kInfraError;
  out.signature = signature;
  out.evidence = evidence;
  out.metrics = json::object();
  out.tests = json::array();
  out.tests_not_sent = 0;
  // After the stage's own end line, which judged only its process ("passed" for one that exited 0
  // with no answer): the stage's verdict is this one, and the log says so.
  ctx.log->Append("gauntlet: probe " + out.stage + " could not answer, so the stage is " + signature + ": " + evidence + "\n");
  return out;
}
}  // namespace

StageOutcome RunProbeStage(const TrialContext& ctx, const json& stage) {
  // No signature rules: the framework explaining why it would refuse is its answer, not a failure
  // of the config, so the suite's rules (which match refusals) must not judge this output.
  StageOutcome out = RunCommandStage(ctx, stage, {});
  if (out.verdict == Verdict::kCancelled) return out;
  if (out.signature.rfind("infra_error:program_not_found", 0) == 0 || out.signature == "infra_error:stage_not_started")
    return Failed(out, "infra_error:probe_failed", "the probe could not start: " + out.evidence, ctx);
  if (out.verdict == Verdict::kTimeout)
    return Failed(out, "infra_error:probe_timeout", "the probe outlived its timeout of " +
                                                        std::to_string(stage.value("timeout_s", 3600)) + " s", ctx);
  if (out.signal || (out.exit_code && *out.exit_code != 0))
    return Failed(out, "infra_error:probe_failed",
                  "the probe " + (out.signal ? "died by " + *out.signal : "exited " + std::to_string(*out.exit_code)) +
                      " instead of answering" + (out.evidence.empty() ? "" : ": " + out.evidence.substr(0, 1000)),
                  ctx);
  auto answer = ParseProbeAnswer(out.last_line);
  if (!answer.ok()) return Failed(out, "infra_error:probe_answer", answer.status().message(), ctx);
  out.verdict = Verdict::kPassed;
  out.signature.clear();
  out.evidence.clear();
  out.metrics = json::object();
  out.tests = json::array();
  out.tests_not_sent = 0;
  json probe = {{"supported", answer->supported}, {"reason", answer->reason}};
  if (stage.contains("framework") && stage["framework"].is_string()) probe["framework"] = stage["framework"];
  out.summary["probe"] = probe;
  ctx.log->Append("gauntlet: probe " + out.stage + ": the framework says " +
                  (answer->supported ? "supported" : "unsupported") +
                  (answer->reason.empty() ? "" : ": " + answer->reason.substr(0, 2000)) + "\n");
  return out;
}

}  // namespace gauntlet::worker
