// How few GPU-hours the scheduler spends for a full answer: synthetic bring-up grids with known ground
// truth (tests/support/elimination_replay.h) replayed through the real Scheduler under four policies,
// from running everything to settling first with confirmation. Prints one JSON object; the numbers
// are simulated hours (every trial runs the suite's cost_s), so they do not depend on this machine.
// A grid whose targets carry prices also reports `cost`: GPU-hours weighted by cost_per_gpu_hour.
#include <chrono>
#include <cstdio>

#include "tests/support/elimination_replay.h"

using gauntlet::test::Grid;
using gauntlet::test::ReplayOptions;
using nlohmann::json;

int main() {
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
  json out = {{"bench", "elimination"}, {"grids", json::array()}};
  for (const Grid& g : {gauntlet::test::SeedGrid(), gauntlet::test::MediumGrid(), gauntlet::test::PricedGrid(),
                        gauntlet::test::LargeGrid()}) {
    json gj = {{"grid", g.name}, {"archs", g.archs}, {"nodes_per_arch", g.nodes_per_arch}, {"cost_s", g.cost_s},
               {"policies", json::object()}};
    if (!g.prices.empty()) gj["cost_per_gpu_hour"] = g.prices;
    for (const Policy& p : policies) {
      const auto t0 = std::chrono::steady_clock::now();
      json r = gauntlet::test::Replay(g, p.o).ToJson();
      r["replay_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      gj["policies"][p.name] = r;
    }
    out["grids"].push_back(gj);
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
