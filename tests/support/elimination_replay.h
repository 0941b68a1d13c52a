// Replays a synthetic bring-up grid with known ground truth through the real Scheduler (fake clock,
// fake store, simulated nodes running each trial for its estimated time), to measure what an order
// and a pruning policy cost and whether they get any cell wrong. Shared by bench/elimination (which
// prints the numbers) and tests/unit/elimination_test.cc (which checks correctness on the small
// grids). Not thread-safe; deterministic: the same grid and options give the same result.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/sweep.h"

namespace gauntlet::test {

// What one config really does on one architecture.
struct Truth {
  std::string verdict = "passed";  // the deterministic outcome
  std::string stage, signature;    // where and how it fails (empty for a pass)
  bool flaky = false;              // a passing config whose every run fails at random (ReplayOptions::flaky_fail_rate)
};

struct Grid {
  std::string name;
  std::vector<std::pair<std::string, std::vector<std::string>>> params;  // in declared order
  std::vector<std::string> archs;                                         // "sm_90": one target each
  // Each target's cost_per_gpu_hour, in archs' order; empty: unpriced (every target 1).
  std::vector<double> prices;
  std::vector<std::pair<std::string, std::vector<std::string>>> stages;   // stage -> gate_on, in run order
  int nodes_per_arch = 2;
  double cost_s = 900;  // every trial runs this long (the suite's cost_s): GPU-hours compare like for like
  std::function<Truth(const Config&, const std::string& arch)> truth;
};

struct ReplayOptions {
  bool prune = true;
  bool settle_first = true;
  int confirm_failures = 0;
  // Each run of a flaky config fails (a crash with a message, the same every time) with this
  // probability, drawn from a generator seeded with `seed`: independent runs, as a real flake's are,
  // so that no policy can count on which run fails.
  uint64_t seed = 1;
  double flaky_fail_rate = 1.0 / 3;
};

struct ReplayResult {
  int64_t trials = 0;        // configs x archs
  int64_t runs = 0;          // attempts that ran (confirmations included)
  double gpu_hours = 0;      // runs x cost
  double exhaustive_gpu_hours = 0;  // every trial once, no pruning
  bool priced = false;              // the grid has prices: the two below are in its JSON
  double cost = 0;                  // GPU-hours of the runs weighted by their target's price
  double exhaustive_cost = 0;       // the same for every trial once
  int64_t wrong_cells = 0;   // configs x archs whose outcome disagrees with the truth
  int64_t flaky_cells = 0;   // truly flaky configs recorded as flaky (a failure kept, then a pass)
  int64_t skipped = 0;
  double hours_to_complete = 0;  // simulated wall-clock until every trial is settled
  // Trials whose truth is a pass: every correct answer runs each of them at least once, so
  // passing_trials / trials is the floor of any policy's GPU-hour fraction.
  int64_t passing_trials = 0;
  nlohmann::json ToJson() const;
};

// Runs `g` through a Scheduler with `o`. A cell is wrong when the truth passes and the recorded
// verdict is not passed, or the truth fails and the recorded verdict is passed (skipped counts as
// the failure that pruned it, which the truth must then be). The same grid, options and seed give
// the same result.
ReplayResult Replay(const Grid& g, const ReplayOptions& o);

// A policy over many seeds (seed, seed + 1, ...): what a person can expect of it, not what one lucky
// draw gave.
struct SeededSummary {
  int seeds = 0;
  double wrong_mean = 0, wrong_sd = 0, wrong_upper95 = 0;  // mean wrong cells, and its one-sided 95% bound
  int64_t wrong_p95 = 0, wrong_max = 0;                    // per seed: the 95th percentile and the worst
  int seeds_with_wrong = 0;                                // seeds that got any cell wrong
  double seeds_with_wrong_upper95 = 0;                     // Wilson 95% upper bound on that share
  double fraction_mean = 0, fraction_min = 0, fraction_max = 0;  // GPU-hours of exhaustive
  double runs_mean = 0, flaky_recorded_mean = 0, hours_mean = 0;
  nlohmann::json ToJson() const;
};
// Replays `g` under `o` once per seed, from o.seed up.
SeededSummary ReplaySeeds(const Grid& g, ReplayOptions o, int seeds);

// The grids of docs/BENCHMARKS.md "Elimination": the seed's 4 x 3 NVFP4 bring-up on sm_90, sm_100
// and sm_120; a 5 x 5 x 4 grid with per-value and per-pair failures on the same three; a 10,000-trial
// grid (10 x 10 x 10 x 10 on one architecture). Each has flaky configs mixed in.
Grid SeedGrid();
Grid MediumGrid();
Grid LargeGrid();
// The medium grid's truth on a dear target listed first (sm_100 at 6.0 per GPU-hour) and a cheap
// one (sm_120 at 1.5), 2 nodes each: GPU-hours weighted by price.
Grid PricedGrid();

}  // namespace gauntlet::test
