// The client subcommands of `gauntlet` (submit, status, trials, suites, cancel, logs, nodes, matrix,
// completion): thin callers of the REST API for people (tables) and scripts (json, csv).
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet {

// Adds the client subcommands to `app` (which owns them) in --help order; each callback writes its
// exit status to *code, so `code` must outlive app.parse(). Call once, before parsing, on its thread.
void AddClientCommands(CLI::App& app, int* code);

}  // namespace gauntlet
