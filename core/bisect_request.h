// A bisection's request (POST /api/v1/bisect; docs/API.md "Bisection"), parsed: the shape checks
// that need no suite. The coordinator checks it against the suite (Coordinator::Bisect).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/status.h"

namespace gauntlet {

struct BisectRequest {
  std::string suite, parameter, good, bad;  // good and bad as ScalarString spells them
  // Every other parameter -> its one value, as submitted (the sweep request's parser checks them).
  nlohmann::json config = nlohmann::json::object();
  std::optional<nlohmann::json> target;  // one sweep target, as submitted
  std::optional<std::string> name;
  // As submitted; the sweep request's parser checks their types and ranges.
  std::optional<nlohmann::json> priority, confirm_failures, max_attempts;
};

// Parses `body`; Invalid names the field at fault (unknown fields are refused). Pure, thread-safe.
Result<BisectRequest> ParseBisectRequest(const nlohmann::json& body);

}  // namespace gauntlet
