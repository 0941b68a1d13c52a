// The elimination benchmark's correctness check on its small grids (bench/elimination): replayed
// through the real scheduler, settling first with confirmation gets no cell wrong against the
// ground truth, spends less than the exhaustive grid, and records the flaky configs as flaky;
// without confirmation the flaky crashes do get cells wrong (what confirmation is for).
#include <gtest/gtest.h>

#include "tests/support/elimination_replay.h"

namespace gauntlet::test {
namespace {

TEST(EliminationTest, SeedGridWithConfirmationIsExactAndCheaper) {
  const Grid g = SeedGrid();
  ReplayResult all = Replay(g, {false, false, 0});
  EXPECT_EQ(all.runs, 36);
  ReplayResult r = Replay(g, {true, true, 1});
  EXPECT_EQ(r.wrong_cells, 0) << r.ToJson().dump();
  EXPECT_EQ(r.flaky_cells, 1) << r.ToJson().dump();
  EXPECT_LT(r.gpu_hours, all.gpu_hours) << r.ToJson().dump();
  EXPECT_GT(r.skipped, 0);
  // Without confirmation the flaky config's first run (a crash) is taken as its verdict.
  EXPECT_GT(Replay(g, {true, true, 0}).wrong_cells, 0);
  // More confirmations than nodes of an architecture: each attempt still finds a node.
  ReplayResult two = Replay(g, {true, true, 2});
  EXPECT_EQ(two.wrong_cells, 0) << two.ToJson().dump();
  EXPECT_EQ(two.flaky_cells, 1);
}

TEST(EliminationTest, MediumGridWithConfirmationIsExactWithinAThirdOfTheGrid) {
  const Grid g = MediumGrid();
  ReplayResult r = Replay(g, {true, true, 1});
  EXPECT_EQ(r.trials, 300);
  EXPECT_EQ(r.wrong_cells, 0) << r.ToJson().dump();
  EXPECT_LE(r.gpu_hours * 3, r.exhaustive_gpu_hours) << r.ToJson().dump();
  EXPECT_GT(r.flaky_cells, 0);
  // Settling first spends no more than the grid's own order under the same pruning.
  ReplayResult grid = Replay(g, {true, false, 1});
  EXPECT_EQ(grid.wrong_cells, 0) << grid.ToJson().dump();
  EXPECT_LE(r.gpu_hours, grid.gpu_hours) << r.ToJson().dump() << grid.ToJson().dump();
  // A flaky config's crash, unconfirmed, is taken as its verdict.
  EXPECT_GT(Replay(g, {true, true, 0}).wrong_cells, 0);
  EXPECT_EQ(Replay(g, {true, true, 2}).wrong_cells, 0);
}

TEST(EliminationTest, PricedTargetsWeighTheGpuHoursAndStayExactWithinAThird) {
  const Grid g = PricedGrid();
  ReplayResult r = Replay(g, {true, true, 1});
  EXPECT_EQ(r.trials, 200);
  // 100 trials of 0.25 GPU-hours on each target, at 6.0 and 1.5.
  EXPECT_DOUBLE_EQ(r.exhaustive_cost, 100 * 0.25 * 6.0 + 100 * 0.25 * 1.5);
  EXPECT_EQ(r.wrong_cells, 0) << r.ToJson().dump();
  EXPECT_LE(r.cost * 3, r.exhaustive_cost) << r.ToJson().dump();
  EXPECT_GT(r.cost, r.gpu_hours) << "at 6.0 and 1.5, every GPU-hour weighs more than 1";
  EXPECT_TRUE(r.ToJson().contains("cost_fraction"));
  EXPECT_FALSE(Replay(MediumGrid(), {true, true, 1}).ToJson().contains("cost"));
}

}  // namespace
}  // namespace gauntlet::test
