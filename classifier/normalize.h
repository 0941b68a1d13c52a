// Text normalisation for stable signatures and readable evidence. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gauntlet::classifier {

// Makes a message stable across runs, machines and ranks: hex addresses -> "<hex>", uuids ->
// "<uuid>", long hex ids -> "<hex>", numbers not glued to a word (sizes, ranks, pids, versions,
// line numbers) -> "<n>", absolute and relative paths -> their basename, ANSI colours dropped,
// whitespace collapsed, cut to max_len bytes on a UTF-8 boundary. Identifiers keep their digits
// ("sm_120a", "SM100", "fp8", "TP0") because they carry meaning.
std::string NormalizeMessage(std::string_view msg, size_t max_len = 160);

// "/a/b/c.py" -> "c.py"; "c.py" -> "c.py".
std::string_view PathBasename(std::string_view path);

// `s` without its ANSI colour sequences ("\x1b[31m"), so report shapes read the text (pytest
// --color=yes, coloured CUDA sample output). Pure.
std::string StripAnsi(std::string_view s);

// One log line as evidence: ANSI and control characters removed, invalid UTF-8 replaced by '?',
// whitespace trimmed, cut to max_len bytes (with "...") on a UTF-8 boundary.
std::string TrimEvidence(std::string_view line, size_t max_len = 300);

// Replaces bytes that are not valid UTF-8 by '?', so the text can go into JSON.
std::string SanitizeUtf8(std::string_view text);

// ASCII helpers used on the slow path.
std::string ToLowerAscii(std::string_view s);
bool ContainsCI(std::string_view haystack, std::string_view needle_lower);
std::string_view TrimSpace(std::string_view s);

}  // namespace gauntlet::classifier
