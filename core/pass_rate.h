// A config's pass rate as a measured fact: passes over runs with the 95% Wilson score interval, so
// "2 of 3" and "200 of 300" read differently. Pure functions; thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

#include "core/verdict.h"

namespace gauntlet {

struct Interval {
  double low = 0, high = 1;
};

// The Wilson score interval for `passed` successes in `runs` trials at normal quantile `z` (1.96 is
// 95%); {0, 1} when runs is 0. Clamped to [0, 1].
Interval WilsonInterval(int64_t passed, int64_t runs, double z = 1.96);

// True for a verdict that counts as a run of the config in a pass rate: a pass or a failure that
// says something about the config (the judged verdicts of core/verdict.h, and timeout). Skipped,
// cancelled and infra errors say nothing about it. The string form (a JSON key, an SQL column) is
// false for a name that is no verdict.
bool CountsAsRun(Verdict verdict);
bool CountsAsRun(const std::string& verdict);

// {"passed", "runs", "rate", "low", "high", "reused"} from counts (verdict -> trials that ran, as
// cells keep them) and `reused` (results filed by reuse: copies, never counted as runs, only said);
// null when no run counts.
nlohmann::json PassRateJson(const nlohmann::json& counts, int64_t reused = 0);

}  // namespace gauntlet
