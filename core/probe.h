// A probe stage's answer (SUITE_FORMAT.md "probe stages"): what the framework itself says about one
// configuration, printed by the stage's program as its last output line, `{"supported": bool,
// "reason": "..."}`. Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>

#include "core/status.h"

namespace gauntlet {

struct ProbeAnswer {
  bool supported = false;
  std::string reason;  // at most kMaxProbeReason bytes, cut at a character boundary
};

inline constexpr size_t kMaxProbeReason = 4096;

// Reads `line` (the stage's last non-empty output line) as an answer. Invalid, with a message fit
// for the trial's evidence, when it is not a JSON object, its `supported` is missing or not a
// boolean, its `reason` is there and not a string, or it is not valid UTF-8. A longer reason is cut.
Result<ProbeAnswer> ParseProbeAnswer(std::string_view line);

}  // namespace gauntlet
