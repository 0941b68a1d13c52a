// How a stage's process ended, for the classifier's tests to judge logs under (classifier/classifier.h).
#pragma once
#include "classifier/classifier.h"

namespace gauntlet::classifier::test_exits {

// A process that exited with status `code`.
inline ExitInfo ExitCode(int code) {
  ExitInfo e;
  e.exit_code = code;
  return e;
}

// A process that signal `sig` ended.
inline ExitInfo ExitSignal(int sig) {
  ExitInfo e;
  e.signal = sig;
  return e;
}

}  // namespace gauntlet::classifier::test_exits
