// Adds `gauntlet worker` and `gauntlet classify` to the command line.
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet::worker {

// Registers both subcommands on `app`; when one runs, its exit code goes to *code, which must
// outlive the parse. `gauntlet worker` blocks in RunWorker until the worker stops.
void AddWorkerCommands(CLI::App& app, int* code);

}  // namespace gauntlet::worker
