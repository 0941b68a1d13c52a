// UTF-8 as outside bytes arrive (request paths, headers, logs, fingerprints, result files): checked
// before use, and replaced rather than thrown on when serialised, so no byte can stop a process.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gauntlet {

// True if `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). Pure.
bool ValidUtf8(std::string_view s);

// `v` as JSON text, each invalid UTF-8 sequence in its strings written as U+FFFD instead of throwing
// (nlohmann's dump() throws type_error 316 on them). Pure; thread-safe.
std::string SafeDump(const nlohmann::json& v, int indent = -1);

}  // namespace gauntlet
