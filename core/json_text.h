// How a JSON value reads in a table cell, a CSV field or a pivot key: strings as they are, null as
// empty, anything else as compact JSON. Shared by the store's analytics, the API and the CLI.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace gauntlet {

// `v` as table text (see above). Pure; thread-safe.
inline std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gauntlet
