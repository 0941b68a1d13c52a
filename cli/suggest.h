// Suggestions for a mistyped name: the nearest subcommand, flag, choice, suite or filter value by edit
// distance ("gauntlet sumbit" -> "did you mean submit?"), and the usage-error exit that prints them.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_client.h"

namespace gauntlet::cli {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours ("sumbit" -> "submit" is 1), each costing 1. Pure.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate `word` most likely meant: the only one it is a prefix of, else the nearest within
// an edit distance of 2 (1 for words of three letters or fewer, so short words do not match
// anything); nullopt when none is that near or `word` is itself a candidate. Ties go to the earlier
// candidate. Pure.
std::optional<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates);

// The values an option accepts when it has a fixed set (CLI::IsMember: its type name reads
// "TEXT:{a,b,c}"), in their order; empty for a free value. Pure.
std::vector<std::string> OptionChoices(const CLI::Option* op);

// After the daemon refused value `value` of `flag` (a 422 naming the filter): prints
// "gauntlet: did you mean FLAG NEAREST?" to stderr when one of `allowed` is near, else nothing.
void SuggestValue(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed);

// After a 404 for suite `name`: reads the daemon's suites with `client` (on the calling thread) and
// prints "gauntlet: did you mean BEFORE+NEAREST+AFTER?" when one is near, or the suites there are when
// there are only a few; prints nothing when they cannot be read.
void SuggestSuite(http::Client& client, const std::string& name, const std::string& before = "--suite ",
                  const std::string& after = "");

// What a command line CLI11 refused got wrong, found by walking argv through `app`'s command tree:
// an unknown command ("'sumbit' is not a gauntlet command: did you mean submit?"; `replaces` is set,
// since CLI11's own message for it is only "A subcommand is required"), the nearest flag for an
// unknown flag, the nearest choice for a value outside a flag's set. `text` is "" when nothing is
// near. `command` is the subcommand path the line reached ("suites push"), for "--help" advice.
struct UsageHint {
  std::string text, command;
  bool replaces = false;
};
UsageHint FindUsageHint(const CLI::App& app, int argc, const char* const* argv);

}  // namespace gauntlet::cli
