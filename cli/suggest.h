// Suggestions for a mistyped name: the nearest subcommand, flag, choice, suite or filter value by edit
// distance ("gauntlet sumbit" -> "did you mean submit?"), and the usage-error exit that prints them.
#pragma once
#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/nearest.h"
#include "net/http_client.h"

namespace gauntlet::cli {

// EditDistance and Nearest are core's (core/nearest.h), shared with the suite validator.
using gauntlet::EditDistance;
using gauntlet::Nearest;

// The values an option accepts when it has a fixed set (CLI::IsMember: its type name reads
// "TEXT:{a,b,c}"), in their order; empty for a free value. Pure.
std::vector<std::string> OptionChoices(const CLI::Option* op);

// After the daemon refused value `value` of `flag` (a 422 naming the filter): prints
// "gauntlet: did you mean FLAG NEAREST?" to stderr when one of `allowed` is near, else nothing.
void SuggestValue(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed);

// After a 404 for suite `name`: reads the daemon's suites with `client` (on the calling thread) and
// prints "gauntlet: did you mean BEFORE+NEAREST+AFTER?" when one is near, or the suites there are when
// there are only a few; prints nothing when they cannot be read, or when it has already spoken of
// `name` in this process (Call suggests after every 404 naming a suite). Not thread-safe.
void SuggestSuite(net::Client& client, const std::string& name, const std::string& before = "--suite ",
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

// The parameters of suite `suite`, else of sweep `sweep`'s suite (sweep > 0), else of every suite
// (the union): name -> its declared values, empty for a parameter that takes free values (a
// pattern). Read with `client` on the calling thread; nullopt when the daemon cannot tell (the
// caller then checks nothing). cli/suggest_params.cc.
std::optional<std::map<std::string, std::vector<std::string>>> SuiteParameters(net::Client& client,
                                                                              const std::string& suite, int64_t sweep);

// Checks `--param NAME=VALUE` filters against `params` (SuiteParameters): a NAME no suite parameter
// has, or a VALUE not among a declared parameter's values, is a mistake a filter would answer with
// nothing. Prints "gauntlet: --param bakend=matmul: no parameter 'bakend' (did you mean backend?)"
// (or the names there are) and returns false on the first one.
bool CheckParamFilters(const std::vector<std::string>& filters,
                       const std::map<std::string, std::vector<std::string>>& params, const std::string& where);

// After the daemon refused `--FLAG word,...` naming parameters (matrix --rows/--cols): prints
// "gauntlet: did you mean --FLAG NEAREST?" for the first word that is none of `names`.
void SuggestParameterName(const std::string& flag, const std::string& words, std::vector<std::string> names);

}  // namespace gauntlet::cli
