// Sweep validation and expansion: include, exclude, targets, repeats, limits; errors name the field.
#include <gtest/gtest.h>

#include "core/sweep.h"

namespace gauntlet {
namespace {
using nlohmann::json;

Suite TheSuite() {
  auto s = ParseSuite(json::parse(R"({
    "name": "s", "parameters": {"moe": ["cutlass", "trtllm", "cutedsl"], "gemm": ["cutlass", "cudnn"],
                                "model": {"pattern": "^[a-z]+$", "default": "m"}},
    "stages": [{"name": "k", "kind": "command", "argv": ["x", "{moe}", "{gemm}", "{model}"]}]})"));
  EXPECT_TRUE(s.ok());
  return *s;
}

Result<std::vector<Config>> Expand(const json& req) {
  auto r = ParseSweepRequest(req);
  if (!r.ok()) return r.status();
  return ExpandSweep(TheSuite(), *r);
}

TEST(Sweep, OmittedParametersTakeAllValuesOrTheDefault) {
  auto c = Expand({{"suite", "s"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->size(), 6u);
  for (auto& cfg : *c) EXPECT_EQ(cfg.at("model"), "m");
}

TEST(Sweep, ExcludeRemovesMatchingConfigsAndIncludeAddsThem) {
  auto c = Expand({{"suite", "s"},
                   {"parameters", {{"gemm", {"cutlass"}}}},
                   {"exclude", {{{"moe", "cutedsl"}}}},
                   {"include", {{{"moe", "cutedsl"}, {"gemm", "cudnn"}, {"model", "other"}}}}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::set<std::string> keys;
  for (auto& cfg : *c) keys.insert(ConfigKey(cfg));
  EXPECT_EQ(keys, (std::set<std::string>{"gemm=cutlass&model=m&moe=cutlass", "gemm=cutlass&model=m&moe=trtllm",
                                         "gemm=cudnn&model=other&moe=cutedsl"}));
}

TEST(Sweep, TargetsAndRepeatsMultiplyTrials) {
  auto r = ParseSweepRequest({{"suite", "s"}, {"targets", {{{"arch", "sm_120"}}, {{"gpu_name", "NVIDIA H200*"}}}},
                              {"repeats", 2}, {"max_trials", 24}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->targets.size(), 2u);
  auto c = ExpandSweep(TheSuite(), *r);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->size() * r->targets.size() * r->repeats, 24u);
  r->max_trials = 23;
  auto over = ExpandSweep(TheSuite(), *r);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().field(), "max_trials");
}

TEST(Sweep, ErrorsNameTheField) {
  auto field = [](const json& req) {
    auto c = Expand(req);
    EXPECT_FALSE(c.ok()) << req.dump();
    return c.ok() ? "" : c.status().field();
  };
  EXPECT_EQ(field({{"suite", "s"}, {"parameters", {{"nope", {"a"}}}}}), "parameters.nope");
  EXPECT_EQ(field({{"suite", "s"}, {"parameters", {{"moe", {"flashinfer"}}}}}), "parameters.moe");
  EXPECT_EQ(field({{"suite", "s"}, {"parameters", {{"model", {"Has Caps"}}}}}), "parameters.model");
  EXPECT_EQ(field({{"suite", "s"}, {"exclude", {{{"gemm", "cutlass"}}, {{"gemm", "cudnn"}}}}}), "exclude");
  EXPECT_EQ(field({{"suite", "s"}, {"exclude", {{{"gemm", "cudnnx"}}}}}), "exclude[0].gemm");
  EXPECT_EQ(field({{"suite", "s"}, {"targets", {{{"arch", "blackwell"}}}}}), "targets[0].arch");
  EXPECT_EQ(field({{"suite", "s"}, {"repeats", 0}}), "repeats");
  EXPECT_EQ(field({{"suite", "s"}, {"prune", "yes"}}), "prune");
  EXPECT_EQ(field({{"suite", "s"}, {"colour", "red"}}), "colour");
  EXPECT_EQ(field({{"name", "no suite"}}), "suite");
}

TEST(Sweep, AHugeGridFailsBeforeItIsBuilt) {
  auto s = ParseSuite(json::parse(R"({"name": "big", "parameters": {
    "a": [1,2,3,4,5,6,7,8,9,10], "b": [1,2,3,4,5,6,7,8,9,10], "c": [1,2,3,4,5,6,7,8,9,10],
    "d": [1,2,3,4,5,6,7,8,9,10], "e": [1,2,3,4,5,6,7,8,9,10], "f": [1,2,3,4,5,6,7,8,9,10],
    "g": [1,2,3,4,5,6,7,8,9,10], "h": [1,2,3,4,5,6,7,8,9,10], "i": [1,2,3,4,5,6,7,8,9,10]},
    "stages": [{"name": "k", "kind": "command", "argv": ["x"]}]})"));
  ASSERT_TRUE(s.ok());
  auto r = ParseSweepRequest({{"suite", "big"}});
  auto c = ExpandSweep(*s, *r);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().field(), "max_trials");
}

}  // namespace
}  // namespace gauntlet
