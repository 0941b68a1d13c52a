// The `probe` stage (SUITE_FORMAT.md "probe stages"): run argv as a command stage does and read its
// last output line as the framework's own answer about this configuration, {"supported": bool,
// "reason": "..."}, recorded in the stage's report entry as "probe" (the framework's declared
// support, held against the runs by core/drift.h).
#pragma once
#include <nlohmann/json.hpp>

#include "workers/stage.h"

namespace gauntlet::worker {

// Runs one probe stage through ctx.processes; blocks until it ends; never throws. An answer is a
// pass whatever it says (supported or not: that is the answer, not the config's verdict). A probe
// that cannot start, exits non-zero, dies by a signal, outlives its timeout or prints anything but
// an answer is infra_error (infra_error:probe_failed, :probe_timeout, :probe_answer) with the
// reason in the evidence: the question failed, not the config. A stop stays cancelled. Safe to call
// from several trials' threads at once.
StageOutcome RunProbeStage(const TrialContext& ctx, const nlohmann::json& stage);

}  // namespace gauntlet::worker
