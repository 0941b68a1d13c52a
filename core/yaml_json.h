// YAML input for suites and sweeps: converts a YAML document to the JSON the rest of the code reads.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "core/status.h"

namespace gauntlet {

// Both thread-safe.
// Parses YAML text into JSON. Plain scalars that read as true/false, null/~ or decimal numbers become
// those (a subset of YAML 1.2's core schema: no .inf, .nan, 0x or 0o); quoted scalars and all else
// stay strings. An error is Invalid (field "body") and carries the line and column.
Result<nlohmann::json> YamlToJson(const std::string& text);

// Reads a .json, .yaml or .yml file (by extension; JSON otherwise) into JSON; NotFound if it cannot
// be read, Invalid (naming the file) if it does not parse.
Result<nlohmann::json> ReadJsonOrYaml(const std::string& path);

}  // namespace gauntlet
