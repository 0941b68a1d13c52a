// Sweep validation and expansion: include, exclude, targets, repeats, limits; errors name the field.
#include <gtest/gtest.h>

#include "core/sweep.h"

#include <cmath>
#include <limits>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST(Sweep, ATargetMayCarryAPricePerGpuHourAndABadOneIsRefusedByName) {
  auto r = ParseSweepRequest({{"suite", "s"},
                              {"targets", {{{"arch", "sm_90"}, {"cost_per_gpu_hour", 2.5}}, {{"arch", "sm_100"}}}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->targets[0].cost_per_gpu_hour, 2.5);
  EXPECT_EQ(r->targets[0].req.arch, std::vector<std::string>{"sm_90"});
  EXPECT_EQ(r->targets[0].raw["cost_per_gpu_hour"], 2.5);  // shown as submitted
  EXPECT_FALSE(r->targets[1].cost_per_gpu_hour);
  EXPECT_EQ(r->targets[1].Price(), 1.0);
  EXPECT_EQ(ParseSweepRequest({{"suite", "s"}, {"targets", {{{"cost_per_gpu_hour", 3}}}}})->targets[0].Price(), 3.0);
  for (const json& bad : {json(0), json(-1.5), json("2.5"), json(nullptr), json(true), json(std::nan("")),
                          json(std::numeric_limits<double>::infinity()), json::array({2.5})}) {
    auto e = ParseSweepRequest({{"suite", "s"}, {"targets", {{{"arch", "sm_90"}}, {{"cost_per_gpu_hour", bad}}}}});
    ASSERT_FALSE(e.ok()) << bad.dump();
    EXPECT_EQ(e.status().field(), "targets[1].cost_per_gpu_hour") << bad.dump();
  }
  // A typo is an unknown field, not a price silently ignored.
  auto typo = ParseSweepRequest({{"suite", "s"}, {"targets", {{{"cost_per_gpu_hr", 2}}}}});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().field(), "targets[0].cost_per_gpu_hr");
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

// A 3.2M-config grid that an exclude trims was expanded in full first (17 s and 4 GB once); an
// include re-expanded the grid per entry. Both are now counted first, over value indices: a sweep
// over the limit fails at once, naming max_trials, and one under it still expands exactly.
TEST(Sweep, ExcludeAndIncludeAreCountedBeforeAnythingIsBuilt) {
  std::string params;
  for (char p = 'a'; p <= 'f'; ++p) {  // 12^6 = 2,985,984 configs
    params += std::string(params.empty() ? "" : ",") + "\"" + p + "\": [";
    for (int v = 0; v < 12; ++v) params += std::string(v ? "," : "") + "\"" + std::to_string(v) + "\"";
    params += "]";
  }
  auto s = ParseSuite(json::parse("{\"name\": \"grid\", \"parameters\": {" + params +
                                  "}, \"stages\": [{\"name\": \"k\", \"kind\": \"command\", \"argv\": [\"x\"]}]}"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto big = ParseSweepRequest({{"suite", "grid"}, {"exclude", {{{"a", "0"}}}}});
  ASSERT_TRUE(big.ok());
  // Refused within a bounded budget: a child process with 256 MB of address space and 20 s of CPU
  // (expanding first needed gigabytes), exiting 0 only for the max_trials refusal.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit mem{256u << 20, 256u << 20}, cpu{20, 20};
    setrlimit(RLIMIT_AS, &mem);
    setrlimit(RLIMIT_CPU, &cpu);
    try {
      auto c = ExpandSweep(*s, *big);
      _exit(!c.ok() && c.status().field() == "max_trials" &&
                    c.status().message().find("2737152 trials") != std::string::npos  // 11 * 12^5
                ? 0
                : 1);
    } catch (...) {
      _exit(2);  // bad_alloc: it tried to build the grid
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  // Pinning four parameters leaves 144 configs; the excludes take out 12 + 12 - 1; an include of a
  // pinned-out value adds its own 12 back.
  auto small = ParseSweepRequest({{"suite", "grid"},
                                  {"parameters", {{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}, {"d", {"0"}}}},
                                  {"exclude", {{{"e", "1"}}, {{"f", "2"}}}},
                                  {"include", {{{"a", "5"}, {"b", "0"}, {"c", "0"}, {"d", "0"}, {"e", "0"}}}}});
  ASSERT_TRUE(small.ok());
  auto ok = ExpandSweep(*s, *small);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->size(), 144u - 23u + 12u);
  // Many includes, each fixing one value, count as the grid they re-expand.
  json includes = json::array();
  for (int i = 0; i < 40; ++i) includes.push_back({{"a", "1"}});
  auto inc = ParseSweepRequest({{"suite", "grid"}, {"parameters", {{"a", {"0"}}}}, {"include", includes}});
  ASSERT_TRUE(inc.ok());
  auto many = ExpandSweep(*s, *inc);
  ASSERT_FALSE(many.ok());
}

}  // namespace
}  // namespace gauntlet

