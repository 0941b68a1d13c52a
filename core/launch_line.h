// The exact flags a configuration means: a suite's argv and env with the config's values put in,
// so a recommendation or a check says "--moe-runner-backend cutlass --fp4-gemm-backend cudnn"
// rather than a config key. Pure; thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/suite.h"
#include "core/sweep.h"

namespace gauntlet {

struct LaunchLine {
  // The argv pieces that carry a parameter, in stage and argv order, each once: "--flag value" as
  // two items when the flag is its own argv element, "--flag=value" or a positional value as one.
  std::vector<std::string> flags;
  std::vector<std::string> env;  // NAME=value for each stage env entry that carries a parameter
  // The first stage that uses a parameter, as one POSIX shell line (env assignments first, every
  // word single-quoted where it needs it); built-in placeholders ({port}, {workdir}...) stay as written.
  std::string shell;
};

// The launch line of `config` under `suite` (values missing from `config` take the parameter's
// default; a parameter without either stays a placeholder).
LaunchLine LaunchFor(const Suite& suite, const Config& config);

// `word` quoted for a POSIX shell when it needs it ('it'\''s'); as is when it is plain.
std::string ShellQuote(const std::string& word);

}  // namespace gauntlet
