// The `server` stage (docs/DESIGN.md): launch an OpenAI-compatible server, wait until it is ready, run
// the smoke prompts with garbage detection, benchmark each concurrency level, then stop it and
// confirm its GPUs are free again.
#pragma once
#include <nlohmann/json.hpp>

#include "classifier/classifier.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// Runs one server stage (the server through ctx.processes) and returns how it ended; blocks until
// the server is stopped again. Never throws. A server that dies while starting is judged at once
// from its log and exit status. Safe to call from several trials' threads at once.
StageOutcome RunServerStage(const TrialContext& ctx, const nlohmann::json& stage,
                            const std::vector<SignatureRule>& rules);

}  // namespace gauntlet::worker
