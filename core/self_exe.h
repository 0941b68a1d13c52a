// Where this executable lives: the worker finds gauntlet-kernels beside it, `serve --local-worker`
// and the Slurm launcher start it again.
#pragma once
#include <string>

namespace gauntlet {

// Both thread-safe.
// The absolute path of the running executable (/proc/self/exe), or `fallback` where it cannot be read.
std::string SelfExe(const std::string& fallback = "gauntlet");
// The folder holding it; empty where it cannot be read.
std::string SelfExeDir();

}  // namespace gauntlet
