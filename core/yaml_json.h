// YAML input for suites and sweeps: converts a YAML document to the JSON the rest of the code reads.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

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

// The keys of the top-level object's member `member` in the order the JSON or YAML `text` writes
// them (nlohmann::json objects sort their keys); empty when the text or the member is not there.
std::vector<std::string> DeclaredKeys(const std::string& text, const std::string& member);
// The same for a file.
std::vector<std::string> DeclaredKeysInFile(const std::string& path, const std::string& member);

}  // namespace gauntlet
