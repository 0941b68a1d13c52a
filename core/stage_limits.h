// A stage's resource limits: the suite's or the stage's `"limits": {"memory_mb": N, "pids": N}`
// (docs/SUITE_FORMAT.md "Limits"), which the worker writes into the stage's cgroup as memory.max
// and pids.max. A stage's own limits win over the suite's, field by field; what neither names takes
// the node's default (proc::DefaultStageLimits).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "core/status.h"

namespace gauntlet {

// 0 means "not set here". A plain value.
struct StageLimits {
  int64_t memory_mb = 0;
  int64_t pids = 0;
};

inline constexpr int64_t kMinStageMemoryMb = 16;         // below this nothing starts
inline constexpr int64_t kMaxStageMemoryMb = 64 << 20;   // 64 TiB
inline constexpr int64_t kMinStagePids = 8;
inline constexpr int64_t kMaxStagePids = 4 << 20;        // the kernel's pid_max ceiling

// Ok when `limits` is an object with only memory_mb (an integer from kMinStageMemoryMb to
// kMaxStageMemoryMb) and pids (an integer from kMinStagePids to kMaxStagePids); else kInvalid
// naming `field`.memory_mb, `field`.pids or `field`. Pure.
Status ValidateStageLimits(const nlohmann::json& limits, const std::string& field);
// The limits of `stage` in `suite` (both definitions as validated): the stage's fields first, then
// the suite's; 0 where neither sets one. Pure; O(1).
StageLimits LimitsOf(const nlohmann::json& suite, const nlohmann::json& stage);

}  // namespace gauntlet
