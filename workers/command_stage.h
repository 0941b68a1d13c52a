// The `command` stage: run argv to completion under a timeout, stream its output to the trial log,
// read metrics, and judge it with the shared classifier.
#pragma once
#include <nlohmann/json.hpp>

#include "classifier/classifier.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// Runs one command stage through ctx.processes and returns how it ended; blocks until then. Never
// throws; a stage that cannot start is reported as crashed (program missing: the config's fault)
// with the reason as evidence. Safe to call from several trials' threads at once.
StageOutcome RunCommandStage(const TrialContext& ctx, const nlohmann::json& stage,
                             const std::vector<SignatureRule>& rules);

// Turns how a stage ended plus what it said into its verdict (shared by command and server stages).
// `file_verdict` (from GAUNTLET_RESULT_FILE) wins over the exit status, except for timeouts and stops.
// Fills out's verdict, signature and evidence; out->stage names the stage. Pure.
// `bad_result_file`: why the stage's result file could not be used (ReadMetrics); never a pass then.
void Judge(const classifier::Classification& c, const std::optional<Verdict>& file_verdict, const std::string& file_detail,
           bool timed_out, bool stopped, StageOutcome* out, const std::string& bad_result_file = "");

}  // namespace gauntlet::worker
