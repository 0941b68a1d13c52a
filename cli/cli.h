// The client subcommands of `gauntlet` (submit, status, trials, matrix, logs, cancel, nodes, suites):
// thin callers of the REST API for people (tables) and scripts (json, csv).
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet {

// Adds the client subcommands to `app`; each sets its own callback and exit code in *code.
void AddClientCommands(CLI::App& app, int* code);

}  // namespace gauntlet
