// Hardware matching: arch, count, memory, name glob, labels; one GPU model per trial.
#include <gtest/gtest.h>

#include "core/hardware.h"

namespace gauntlet {
namespace {
using nlohmann::json;

Inventory Mixed() {
  auto inv = ParseInventory(json::parse(R"({"gpus": [
    {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0", "compute_capability": "9.0", "memory_mb": 143771},
    {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-1", "compute_capability": "9.0", "memory_mb": 143771},
    {"index": 2, "name": "NVIDIA RTX PRO 6000 Blackwell", "uuid": "GPU-2", "compute_capability": "12.0", "memory_mb": 97887}],
    "labels": {"pool": "lab"}})"));
  EXPECT_TRUE(inv.ok());
  return *inv;
}

TEST(Hardware, PicksGpusThatFitTheNeed) {
  Inventory inv = Mixed();
  Need n;
  n.gpus = 1;
  n.arch = {"sm_120a"};
  EXPECT_EQ(*PickGpus(inv, {0, 1, 2}, n), std::vector<int>{2});
  EXPECT_FALSE(PickGpus(inv, {0, 1}, n).has_value());
  n.arch = {"sm_90"};
  n.gpus = 2;
  EXPECT_EQ(*PickGpus(inv, {0, 1, 2}, n), (std::vector<int>{0, 1}));
  n.gpus = 3;  // three GPUs exist, but not three of one model
  EXPECT_FALSE(PickGpus(inv, {0, 1, 2}, n).has_value());
  EXPECT_FALSE(CouldEverFit(inv, n));
}

TEST(Hardware, NameGlobMemoryAndLabels) {
  Inventory inv = Mixed();
  Need n;
  n.gpus = 1;
  n.gpu_name = "*RTX PRO*";
  EXPECT_EQ(*PickGpus(inv, {0, 1, 2}, n), std::vector<int>{2});
  n.gpu_name.clear();
  n.min_memory_gb = 120;
  EXPECT_EQ(*PickGpus(inv, {2, 1}, n), std::vector<int>{1});
  n.labels = {{"pool", "other"}};
  EXPECT_FALSE(PickGpus(inv, {0, 1, 2}, n).has_value());
  n.labels = {{"pool", "lab"}};
  EXPECT_TRUE(PickGpus(inv, {0, 1, 2}, n).has_value());
}

TEST(Hardware, ClassNamesModelArchAndCount) {
  Inventory inv = Mixed();
  EXPECT_EQ(HardwareClass(inv, {0}), "NVIDIA H200 · sm_90 · x1");
  EXPECT_EQ(HardwareClass(inv, {}), "cpu");
  Need cpu;  // no GPU requirement: any node, no GPUs assigned
  EXPECT_EQ(PickGpus(Inventory{}, {}, cpu)->size(), 0u);
}

// What an automatic bisection asks for so that it runs where the regression was seen: a target
// naming exactly the class, which then fits that GPU and no other model.
TEST(Hardware, TargetForAClassAsksForThatClass) {
  auto t = TargetForHardware("NVIDIA H200 · sm_90 · x8");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, json({{"gpu_name", "NVIDIA H200"}, {"arch", "sm_90"}, {"gpus", 8}}));
  EXPECT_EQ(*TargetForHardware("cpu"), json::object());
  EXPECT_EQ((*TargetForHardware("NVIDIA RTX PRO 6000 Blackwell · sm_120 · x1"))["gpu_name"], "NVIDIA RTX PRO 6000 Blackwell");
  for (const char* bad : {"unknown", "", "NVIDIA H200", "NVIDIA H200 · sm_90", "NVIDIA H* · sm_90 · x1", " · sm_90 · x1",
                          "NVIDIA H200 · 9.0 · x1", "NVIDIA H200 · sm_90 · 8", "NVIDIA H200 · sm_90 · x1000"})
    EXPECT_FALSE(TargetForHardware(bad)) << bad;
}

TEST(Hardware, TargetNarrowsTheSuite) {
  Requirements suite;
  suite.gpus = 1;
  suite.arch = {"sm_90", "sm_120"};
  Requirements target;
  target.arch = {"sm_120"};
  Need n = MakeNeed(suite, target, "");
  EXPECT_EQ(n.arch, std::vector<std::string>{"sm_120"});
  target.arch = {"sm_100"};
  EXPECT_FALSE(CouldEverFit(Mixed(), MakeNeed(suite, target, "")));
}

TEST(Hardware, InventoryErrorsNameTheField) {
  auto r = ParseInventory(json::parse(R"({"gpus": [{"index": 0, "name": "X", "compute_capability": "nine"}]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "gpus[0].compute_capability");
}

}  // namespace
}  // namespace gauntlet
