// The JSON (and the prose people read) of the Coordinator's answers (daemon/coordinator_types.h):
// the worker protocol's grant and acknowledgements, the fleet, a sweep's live extras and the
// /metrics numbers. Built here, outside the coordinator's lock. Pure and thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <vector>

#include "daemon/coordinator_types.h"

namespace gauntlet::api {

// The worker protocol's grant: {lease, epoch, trial, gpus, hardware, attempt, heartbeat_ms, sweep,
// config, suite: {name, version, source_dir, key, definition (unless held)}, reference}.
nlohmann::json GrantJson(const daemon::LeaseGrant& g);
// A grant's "reference": {trial, verdict, config, hardware, smoke_answers} or {missing: why}.
nlohmann::json GrantReferenceJson(const daemon::GrantReference& r);
// {cancel, epoch, trial}.
nlohmann::json HeartbeatJson(const daemon::HeartbeatAnswer& a);
// {accepted, duplicate, requeued, confirming, skipped}.
nlohmann::json ReportJson(const daemon::ReportAnswer& a);
// One node of GET /nodes: its row, live state, held-back GPUs and running trials.
nlohmann::json NodeJson(const daemon::NodeView& n);
nlohmann::json NodesJson(const std::vector<daemon::NodeView>& nodes);  // a list of NodeJson
// GET /nodes' "launchers": [{name, kind, age_s, jobs, queued, unplaceable}].
nlohmann::json LaunchersJson(const std::vector<daemon::LauncherView>& launchers);
// A sweep's live fields: running, unmatched_targets (with why, in words), pruned, reuse.
nlohmann::json SweepLiveJson(const daemon::SweepLive& s);
// {queued, leased, nodes: {state: count}, waiting_workers, lease_wait_sum_s, lease_wait_count}.
nlohmann::json StatsJson(const daemon::CoordinatorStats& s);

}  // namespace gauntlet::api
