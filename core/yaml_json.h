// YAML input for suites and sweeps: converts a YAML document to the JSON the rest of the code reads.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "core/status.h"

namespace gauntlet {

// Parses YAML text into JSON. Plain scalars become numbers, booleans or null where YAML 1.2's core
// schema says so; quoted scalars stay strings. Errors carry the line and column.
Result<nlohmann::json> YamlToJson(const std::string& text);

// Reads a .json, .yaml or .yml file (by extension; JSON otherwise) into JSON; errors name the file.
Result<nlohmann::json> ReadJsonOrYaml(const std::string& path);

}  // namespace gauntlet
