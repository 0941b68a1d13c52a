// The nearest of several names to a mistyped one, by edit distance: what every "did you mean"
// (the CLI's flags and values, a suite's gate_on) is computed with. Pure and thread-safe.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours ("sumbit" -> "submit" is 1), each costing 1.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate `word` most likely meant: the only one it is a prefix of, else the nearest within
// an edit distance of 2 (1 for words of three letters or fewer, so short words do not match
// anything); nullopt when none is that near or `word` is itself a candidate. Ties go to the earlier
// candidate.
std::optional<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gauntlet
