// JSON and CSV forms of stored records, and the mapping of Status to HTTP answers.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/status.h"
#include "http/http.h"
#include "store/store.h"

namespace gauntlet::api {

// Every function here is pure and thread-safe (FromStatus also logs).
// The API's JSON forms of stored rows; SuiteJson adds the definition and source_dir when `full`.
nlohmann::json SuiteJson(const store::SuiteRow& s, bool full);
nlohmann::json SweepJson(const store::SweepRow& s);
// A sweep as a listing shows it: SweepJson without `request` (the sweep's own page has it), with
// `request_summary` in its place and `search` summarised: every list longer than 10 becomes
// {"count": N, "first": [its first 3]}, so a sweep over 100,000 values lists in a few hundred bytes.
nlohmann::json SweepListJson(const store::SweepRow& s);
nlohmann::json TrialJson(const store::TrialRow& t);
// A trial's `tests` (docs/API.md "Trial"): {"attempt", "counts": {verdict: n}, "total", "stored",
// "not_stored", "cases": [{"stage", "name", "outcome", "verdict", "signature", "evidence", "seconds"}]}.
nlohmann::json TrialTestsJson(const store::TrialTests& t);
// A sweep's API path ("/api/v1/sweeps/12") and its dashboard page ("/#/sweeps/12"), both relative to
// the daemon's base URL, as `url` and `dashboard_url` in answers.
std::string SweepUrl(int64_t id);
std::string SweepDashboardUrl(int64_t id);

// Where a sweep submitted by `r` comes from: `source` as given unless the client names itself in
// X-Gauntlet-Client (cli, dashboard: the CLI and the dashboard send it); submitted_by is the bearer token as "sha256:" and the first 12
// hex digits of its hash (what the tokens file lists it by), or "" where no token was sent.
store::SweepOrigin OriginOf(const http::Request& r, const std::string& source);

// Seconds a 503 asks the client to wait before retrying (its Retry-After).
inline constexpr int kRetryAfterS = 5;
// Answers a non-ok Status: 404, 422 (with the field), 409, 503 (with Retry-After), 403 or 500 (the
// message is logged, not sent). An ok Status would be answered 500.
http::Response FromStatus(const Status& s);

// True if the request asks for CSV (?format=csv or Accept: text/csv).
bool WantsCsv(const http::Request& r);

// Parses a non-negative decimal integer path/query value (0 included); nullopt if empty or malformed.
std::optional<int64_t> ParseId(const std::string& s);

}  // namespace gauntlet::api
