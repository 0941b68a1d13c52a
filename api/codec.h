// JSON and CSV forms of stored records, and the mapping of Status to HTTP answers.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/csv.h"
#include "core/status.h"
#include "http/http.h"
#include "store/store.h"

namespace gauntlet::api {

nlohmann::json SuiteJson(const SuiteRow& s, bool full);
nlohmann::json SweepJson(const SweepRow& s);
nlohmann::json TrialJson(const TrialRow& t);

// Answers a non-ok Status: 404, 422 (with the field), 409, 503, 403 or 500.
http::Response FromStatus(const Status& s);

// True if the request asks for CSV (?format=csv or Accept: text/csv).
bool WantsCsv(const http::Request& r);

// Parses a positive integer path/query value; nullopt if absent or malformed.
std::optional<int64_t> ParseId(const std::string& s);

}  // namespace gauntlet::api
