// A sweep's progress as the client shows it: its verdict counts, its running trials, the exit status
// of a finished sweep, and following it to the end (`submit --wait`, `status --wait`).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "net/http_client.h"

namespace gauntlet::cli {

// Whether a finished sweep exits 1: some trial in `by_verdict` (GET /api/v1/sweeps/ID's counts) has a
// verdict other than passed or skipped. Pure.
bool SweepFailed(const nlohmann::json& by_verdict);

// Sweep JSON `s`'s non-zero verdict counts in display order, "passed 2 crashed 1" joined by `sep`,
// each coloured on a terminal (VerdictColor). Pure but for IsTty.
std::string CountsLine(const nlohmann::json& s, const char* sep = " ");

// The trials of sweep JSON `s` that are leased or running. Pure.
int64_t RunningTrials(const nlohmann::json& s);

// "reused 23": trials of sweep JSON `s` that took an earlier trial's verdict instead of running; ""
// when none did. Reuse is neither a skip nor pruning (those trials have a verdict of their own kind),
// so it is counted apart. Pure.
std::string ReusedText(const nlohmann::json& s);

// Lines naming what no registered node offers for each of sweep JSON `s`'s `unmatched_targets`:
// "target 0 {"gpus":1}: requires.gpus: 1; nodes: cpu-node (cpu)". Empty when every target can run. Pure.
// One line per node out of service that the sweep waits for (GET /sweeps/{id}'s held_out_nodes):
// "node gpu-7 (3) is quarantined: preflight failed ...; an admin resumes it: gauntlet nodes resume 3".
std::vector<std::string> HeldOutLines(const nlohmann::json& sweep);
std::vector<std::string> UnmatchedLines(const nlohmann::json& s);

struct FollowOptions {
  bool bar = false;  // a redrawn progress bar (a terminal), else one JSON line per change
  // Keep waiting while no registered node can run some target (a node may come: a batch launcher
  // starts workers on demand). Without it such a wait would never end, so it ends with an error.
  bool wait_for_nodes = false;
};

// Follows sweep `id` until it is finished, printing progress to stdout as `opts` says. Returns the
// final sweep JSON, or nullopt once the error is printed: the sweep is unknown, the daemon could not
// be read for a minute, or (without wait_for_nodes) a target stayed unrunnable for a few seconds.
// Blocks the calling thread, which alone uses `client`; the event stream it opens with `conn` is its
// own and closed before it returns.
std::optional<nlohmann::json> FollowSweep(net::Client& client, const net::Conn& conn, int64_t id, FollowOptions opts);

}  // namespace gauntlet::cli
