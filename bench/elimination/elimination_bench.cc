// How few GPU-hours the scheduler spends for a full answer, and how often that answer is wrong:
// synthetic bring-up grids with known ground truth (tests/support/elimination_replay.h) replayed
// through the real Scheduler under five policies, from running everything to settling first with
// confirmation. Flaky configs fail each run at random (one run in three), drawn from a seed, so each
// policy is replayed over many seeds and reported as a distribution: wrong cells (mean, one-sided 95%
// upper bound of the mean, 95th percentile, worst), the share of seeds with any wrong cell (with its
// Wilson 95% upper bound), and the GPU-hour fraction. Prints one JSON object. The numbers are
// simulated hours (every trial runs the suite's cost_s), so they do not depend on this machine.
//
//   gauntlet-elimination-bench [--seeds N] [--large-seeds M]   (defaults 200 and 20)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/support/elimination_replay.h"

using gauntlet::test::Grid;
using gauntlet::test::ReplayOptions;
using gauntlet::test::ReplayResult;
using nlohmann::json;

int main(int argc, char** argv) {
  int seeds = 200, large_seeds = 20;  // the 10,000-trial grid costs 30-90 ms a replay
  for (int i = 1; i + 1 < argc; i += 2) {
    const int n = std::atoi(argv[i + 1]);
    if (n <= 0) {
      std::fprintf(stderr, "elimination bench: %s wants a positive count, not '%s'\n", argv[i], argv[i + 1]);
      return 2;
    }
    if (std::strcmp(argv[i], "--seeds") == 0) seeds = n;
    else if (std::strcmp(argv[i], "--large-seeds") == 0) large_seeds = n;
    else {
      std::fprintf(stderr, "elimination bench: unknown option %s (--seeds N, --large-seeds N)\n", argv[i]);
      return 2;
    }
  }
  struct Policy {
    const char* name;
    ReplayOptions o;
  };
  const Policy policies[] = {
      {"exhaustive", {false, false, 0}},
      {"grid_order_prune", {true, false, 0}},
      {"settle_first_prune", {true, true, 0}},
      {"settle_first_prune_confirm1", {true, true, 1}},
      {"settle_first_prune_confirm2", {true, true, 2}},
  };
  json out = {{"bench", "elimination"}, {"flaky_fail_rate", ReplayOptions{}.flaky_fail_rate}, {"grids", json::array()}};
  for (const Grid& g : {gauntlet::test::SeedGrid(), gauntlet::test::MediumGrid(), gauntlet::test::PricedGrid(),
                        gauntlet::test::LargeGrid()}) {
    const int n = g.name.rfind("large", 0) == 0 ? large_seeds : seeds;
    json gj = {{"grid", g.name}, {"archs", g.archs}, {"nodes_per_arch", g.nodes_per_arch}, {"cost_s", g.cost_s},
               {"seeds", n}, {"policies", json::object()}};
    if (!g.prices.empty()) gj["cost_per_gpu_hour"] = g.prices;
    for (const Policy& p : policies) {
      const auto t0 = std::chrono::steady_clock::now();
      json r = gauntlet::test::ReplaySeeds(g, p.o, n).ToJson();
      const ReplayResult one = gauntlet::test::Replay(g, p.o);  // the trial counts every seed shares
      r["trials"] = one.trials;
      r["passing_trials"] = one.passing_trials;
      r["passing_gpu_hours_fraction"] = one.ToJson()["passing_gpu_hours_fraction"];
      if (one.priced) r["exhaustive_cost"] = one.exhaustive_cost;
      r["replay_ms_per_seed"] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / (n + 1);
      gj["policies"][p.name] = r;
    }
    out["grids"].push_back(gj);
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
