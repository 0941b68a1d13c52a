// YAML input for suites and sweeps: converts a YAML document to the JSON the rest of the code reads.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/status.h"

namespace gauntlet {

// Parses YAML text into JSON. Plain scalars become numbers, booleans or null where YAML 1.2's core
// schema says so; quoted scalars stay strings. Errors carry the line and column.
Result<nlohmann::json> YamlToJson(const std::string& text);

// Reads a .json, .yaml or .yml file (by extension; JSON otherwise) into JSON; errors name the file.
Result<nlohmann::json> ReadJsonOrYaml(const std::string& path);

// The keys of the top-level object's member `member` in the order the JSON or YAML `text` writes
// them (nlohmann::json objects sort their keys); empty when the text or the member is not there.
std::vector<std::string> DeclaredKeys(const std::string& text, const std::string& member);
// The same for a file.
std::vector<std::string> DeclaredKeysInFile(const std::string& path, const std::string& member);

}  // namespace gauntlet
