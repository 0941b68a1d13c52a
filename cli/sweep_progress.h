// A sweep's progress as the client shows it: its verdict counts, its running trials, the exit status
// of a finished sweep, and following it to the end (`submit --wait`, `status --wait`).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "cli/cli_common.h"
#include "http/http_client.h"

namespace gauntlet::cli {

// Whether a finished sweep exits 1: some trial in `by_verdict` (GET /api/v1/sweeps/ID's counts) has a
// verdict other than passed or skipped. Pure.
bool SweepFailed(const nlohmann::json& by_verdict);

// Sweep JSON `s`'s non-zero verdict counts in display order, "passed 2 crashed 1" joined by `sep`,
// each coloured on a terminal (VerdictColor). Pure but for IsTty.
std::string CountsLine(const nlohmann::json& s, const char* sep = " ");

// The trials of sweep JSON `s` that are leased or running. Pure.
int64_t RunningTrials(const nlohmann::json& s);

// Follows sweep `id` until it is finished, printing a redrawn progress bar (`bar`) or one JSON line
// per change to stdout. Returns the final sweep JSON, or nullopt once the error is printed (the sweep
// is unknown, or the daemon could not be read for a minute). Blocks the calling thread, which alone
// uses `client`; the event stream it opens with `conn` is its own and closed before it returns.
std::optional<nlohmann::json> FollowSweep(http::Client& client, const Conn& conn, int64_t id, bool bar);

}  // namespace gauntlet::cli
