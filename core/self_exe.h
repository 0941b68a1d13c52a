// Where this executable lives: the worker finds gauntlet-kernels beside it, `serve --local-worker`
// and the Slurm launcher start it again, and `serve` finds its built-in web/ and suites/ from it.
#pragma once
#include <string>

namespace gauntlet {

// Both thread-safe.
// The absolute path of the running executable (/proc/self/exe), or `fallback` where it cannot be read.
std::string SelfExe(const std::string& fallback = "gauntlet");
// The folder holding it; empty where it cannot be read.
std::string SelfExeDir();
// The folder of the data installed with the executable: PREFIX/share/gauntlet for PREFIX/bin/gauntlet
// (`cmake --install`; the build tree mirrors it: build/share/gauntlet links to the source's web/ and
// suites/). Empty where the executable's path cannot be read; it may not exist (a binary copied alone).
std::string SelfDataDir();

}  // namespace gauntlet
