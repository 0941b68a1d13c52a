// The client subcommands of `gauntlet` (submit, status, trials, suites, cancel, logs, nodes, matrix,
// completion): thin callers of the REST API for people (tables) and scripts (json, csv); and how the
// executable reports a command line it could not parse.
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet::cli {

// Adds the client subcommands to `app` (which owns them) in --help order; each callback writes its
// exit status to *code, so `code` must outlive app.parse(). Call once, before parsing, on its thread.
void AddClientCommands(CLI::App& app, int* code);

// What `gauntlet` does with a command line `app` refused (CLI::ParseError from app.parse(argc, argv)):
// --help and --version print as CLI11 prints them and return 0; anything else is a usage error,
// printed as one line with the nearest valid command, flag or choice when one is near ("did you mean
// submit?") and a pointer to --help, and returns 2. Writes stderr (stdout for help).
int UsageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

}  // namespace gauntlet::cli
