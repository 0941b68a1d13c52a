// Adds `gauntlet worker` and `gauntlet classify` to the command line.
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet {

void AddWorkerCommands(CLI::App& app, int* code);

}  // namespace gauntlet
