// The REST API's parsers of request bodies into the Coordinator's typed requests
// (daemon/coordinator_types.h). Each checks the body's shape and names the field at fault in an
// Invalid Status (a 422), with the messages the API has always given. Pure and thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include "core/status.h"
#include "daemon/coordinator_types.h"

namespace gauntlet::api {

// POST /sweeps: the request (core/sweep.h's parser) and `body` as its stored record.
Result<daemon::SweepSubmission> ParseSweepSubmission(nlohmann::json body);
// POST /sweeps/{id}/rerun: {"verdicts": [...], "configs": [...], "targets": [...]}, each optional;
// null (an empty body) selects the default.
Result<daemon::RerunSelection> ParseRerunSelection(const nlohmann::json& body);
// POST /nodes/register (less its node_token): name, inventory, labels, fingerprint.
Result<daemon::Registration> ParseRegistration(const nlohmann::json& body);
// POST /leases/{lease}/heartbeat: {"running": bool}, optional.
daemon::HeartbeatRequest ParseHeartbeat(const nlohmann::json& body);
// POST /leases/{lease}/result: the result as the store keeps it; the verdict is one a worker may
// report. Moves what it keeps out of `body`.
Result<store::ResultRow> ParseReport(nlohmann::json body);
// PUT /launchers/{name}: {kind, jobs, queued, unplaceable}.
Result<daemon::LauncherReport> ParseLauncherReport(const nlohmann::json& body);

}  // namespace gauntlet::api
