// `gauntlet doctor` and `gauntlet backup`: the store file checked or copied, daemon running or not
// (docs/CLI.md, docs/DEPLOY.md "Backup and restore").
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet::app {

// Adds both subcommands to `app`; their exit code goes to *code (0 ok; 1 damaged or failed; 2 usage).
void AddStoreCommands(CLI::App& app, int* code);

}  // namespace gauntlet::app
