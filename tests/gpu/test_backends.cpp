// Every backend through the same path as `gauntlet-kernels gemm` (fresh random inputs, poisoned
// outputs, fp64 CPU reference, a second check after timed runs) on awkward sizes, fixed seeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "device_info.hpp"
#include "exit_codes.hpp"
#include "gemm_cmd.hpp"
#include "gpu_env.hpp"

using namespace gauntlet::kernels;

namespace {
struct Case {
  std::string backend;
  int M, N, K;
  std::string layout = "plain";
  std::string mma_path = "auto";
  std::string signs = "positive";  // GemmOptions::scale_signs
};

std::string name_of(const Case& c) {
  std::string p = c.mma_path == "auto" ? "" : "_" + c.mma_path;
  return c.backend + p + "_" + std::to_string(c.M) + "x" + std::to_string(c.N) + "x" + std::to_string(c.K) + "_" +
         c.layout;
}

int run_case(const Case& c, nlohmann::json& out, const std::string& fault = "", uint64_t seed = 7) {
  GemmOptions o;
  o.backend = c.backend;
  o.M = c.M;
  o.N = c.N;
  o.K = c.K;
  o.scale_layout = c.layout;
  o.mma_path = c.mma_path;
  o.scale_signs = c.signs;
  o.fault = fault;
  o.seed = seed;
  o.iters = 3;
  o.warmup = 1;
  return run_gemm(o, out);
}
}  // namespace

class Backends : public ::testing::TestWithParam<Case> {};

TEST_P(Backends, MatchFp64Reference) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const DeviceInfo dev = query_device();
  if (c.mma_path == "wgmma" && dev.arch != "sm_90") GTEST_SKIP() << "wgmma path needs sm_90, have " << dev.arch;
  nlohmann::json out;
  const int code = run_case(c, out);
  if (c.backend == "sm120_native" && dev.cc_major != 12) {
    // Built for sm_120a only: must refuse with the runtime's own words, never run.
    EXPECT_EQ(code, exit_code::kUnsupported) << out.dump();
    EXPECT_EQ(out.value("verdict", ""), "unsupported");
    EXPECT_NE(out.value("detail", "").find("no kernel image"), std::string::npos) << out.dump();
    return;
  }
  EXPECT_EQ(code, exit_code::kPassed) << out.dump();
  EXPECT_EQ(out.value("verdict", ""), "passed") << out.dump();
  EXPECT_LT(out.value("rel_err", 1.0), 5e-3) << out.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Awkward, Backends,
    ::testing::Values(
        Case{"reference", 5, 33, 48}, Case{"reference", 17, 130, 208, "swizzled"},
        Case{"dequant_cublas", 7, 129, 80}, Case{"dequant_cublas", 130, 257, 1040, "swizzled"},
        Case{"gemv", 1, 1001, 528}, Case{"gemv", 7, 333, 1024, "swizzled"}, Case{"gemv", 16, 2050, 4096},
        Case{"gemv", 16, 257, 48},
        // N >= 112 rows x 132 SMs: the bulk-copy kernel (v3) on Hopper; partial tiles, groups, K
        // steps and ring stages (odd step counts), one and two activation n-tiles.
        Case{"gemv", 1, 17000, 528}, Case{"gemv", 7, 20000, 1040, "swizzled"}, Case{"gemv", 5, 17000, 1008},
        Case{"gemv", 13, 20000, 1040, "swizzled"}, Case{"gemv", 16, 16900, 256},
        Case{"mma", 1, 300, 64}, Case{"mma", 129, 300, 208},
        Case{"mma", 257, 513, 1040, "swizzled"}, Case{"mma", 384, 512, 4096},
        Case{"mma", 129, 300, 208, "plain", "sync"}, Case{"mma", 257, 513, 1040, "swizzled", "sync"},
        Case{"mma", 200, 700, 512, "plain", "wgmma"}, Case{"sm120_native", 33, 65, 128},
        Case{"sm120_native", 16, 256, 1024, "swizzled"}),
    [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });

TEST(Fault, MisreadScaleLayoutIsWrongOutput) {
  SKIP_WITHOUT_GPU();
  for (const char* be : {"reference", "mma", "gemv", "dequant_cublas"}) {
    for (const char* layout : {"plain", "swizzled"}) {
      nlohmann::json out;
      const int code = run_case(Case{be, 16, 384, 512, layout}, out, "scale-layout");
      EXPECT_EQ(code, exit_code::kWrongOutput) << be << " " << layout << " " << out.dump();
      EXPECT_EQ(out.value("verdict", ""), "wrong_output");
      EXPECT_GT(out.value("rel_err", 0.0), 0.05);
    }
  }
}

// Negative block scales (legal in the format, never made by the quantizer): every kernel must
// follow the reference's signed decode. Each repack folds the sign into its block's weights.
// sm120_native is left out: its hardware scales are unsigned (UE4M3).
TEST(ScaleSigns, NegativeBlockScalesAreHonoured) {
  SKIP_WITHOUT_GPU();
  const bool hopper = query_device().arch == "sm_90";
  struct V {
    const char* var;  // an environment variable that picks the kernel, or nullptr
    const char* val;
    Case c;
  };
  std::vector<V> vs = {
      {nullptr, nullptr, Case{"reference", 7, 129, 80, "plain", "auto", "mixed"}},
      {nullptr, nullptr, Case{"dequant_cublas", 7, 129, 80, "swizzled", "auto", "mixed"}},
      {nullptr, nullptr, Case{"mma", 129, 300, 208, "plain", "sync", "mixed"}},
      {nullptr, nullptr, Case{"gemv", 5, 300, 528, "plain", "auto", "mixed"}},
      {"GK_GEMV_IMPL", "v1", Case{"gemv", 13, 300, 1040, "swizzled", "auto", "mixed"}},
  };
  if (hopper) {
    vs.push_back({nullptr, nullptr, Case{"mma", 257, 513, 1040, "swizzled", "auto", "mixed"}});
    vs.push_back({"GK_WGMMA_IMPL", "v2", Case{"mma", 129, 300, 208, "plain", "auto", "mixed"}});
    vs.push_back({"GK_WGMMA_IMPL", "v1", Case{"mma", 129, 300, 208, "plain", "auto", "mixed"}});
    vs.push_back({nullptr, nullptr, Case{"gemv", 16, 17000, 1008, "swizzled", "auto", "mixed"}});
    vs.push_back({"GK_GEMV_IMPL", "v4", Case{"gemv", 11, 17000, 1008, "plain", "auto", "mixed"}});
  }
  for (const V& v : vs) {
    if (v.var) setenv(v.var, v.val, 1);
    nlohmann::json out;
    EXPECT_EQ(run_case(v.c, out), exit_code::kPassed) << name_of(v.c) << " " << (v.val ? v.val : "") << " "
                                                      << out.dump();
    EXPECT_EQ(out.value("scale_signs", ""), "mixed");
    if (v.var) unsetenv(v.var);
  }
}

TEST(Shapes, GemvRefusesLargeM) {
  SKIP_WITHOUT_GPU();
  nlohmann::json out;
  EXPECT_EQ(run_case(Case{"gemv", 17, 64, 64}, out), exit_code::kUnsupported) << out.dump();
}

// --timing rotate: back-to-back runs over rotated input sets, replayed from a CUDA graph. Each
// backend family must survive the capture (plain launches, the wgmma path, cuBLAS), every set's
// output must be written, and the method must be reported with its sets and launches.
TEST(Timing, RotatedGraphReplays) {
  SKIP_WITHOUT_GPU();
  // gemv at N=60000 runs more than one wave of CTAs, each launch letting the next one start early
  // (programmatic dependent launch): the next grid may only start once every CTA has started.
  for (const Case& c : {Case{"gemv", 16, 28000, 528}, Case{"gemv", 5, 60000, 272}, Case{"gemv", 3, 4000, 1040},
                        Case{"mma", 129, 300, 208},
                        Case{"dequant_cublas", 7, 520, 272}, Case{"reference", 5, 64, 96}}) {
    GemmOptions o;
    o.backend = c.backend;
    o.M = c.M;
    o.N = c.N;
    o.K = c.K;
    o.iters = 3;
    o.warmup = 1;
    o.timing = "rotate";
    nlohmann::json out;
    ASSERT_EQ(run_gemm(o, out), exit_code::kPassed) << name_of(c) << " " << out.dump();
    EXPECT_EQ(out.value("timing", ""), "rotate");
    EXPECT_GE(out.value("rotate_sets", 0), 2) << name_of(c);
    EXPECT_GE(out.value("graph_launches", 0), 32) << name_of(c);
    EXPECT_EQ(out.value("graph_launches", 0) % out.value("rotate_sets", 1), 0) << name_of(c);
    EXPECT_GT(out.value("ms_p50", 0.0), 0.0) << name_of(c);
  }
}

TEST(Seeds, DifferentSeedsStillPass) {
  SKIP_WITHOUT_GPU();
  for (uint64_t seed : {1, 2, 3}) {
    nlohmann::json out;
    EXPECT_EQ(run_case(Case{"mma", 100, 200, 320}, out, "", seed), 0) << out.dump();
    EXPECT_EQ(run_case(Case{"gemv", 3, 200, 320}, out, "", seed), 0) << out.dump();
  }
}

// The default kernels on Hopper are wgmma v3 and gemv v3; the others stay selectable
// (GK_WGMMA_IMPL, GK_GEMV_IMPL) for same-run comparisons and must stay right too.
TEST(Variants, HopperDefaultsAndEarlierKernels) {
  SKIP_WITHOUT_GPU();
  if (query_device().arch != "sm_90") GTEST_SKIP() << "Hopper-only kernels";
  nlohmann::json out;
  // gemv v4 (wgmma, stream-K) for every shape: groups split between CTAs at any step (N=300,
  // K=2000: 48 one-step runs over 3 groups), runs crossing group boundaries (17000 x 528), n8, n16.
  setenv("GK_GEMV_IMPL", "v4", 1);
  for (const Case& c : {Case{"gemv", 1, 17000, 528}, Case{"gemv", 9, 17000, 528}, Case{"gemv", 2, 4000, 528},
                        Case{"gemv", 16, 300, 2000}, Case{"gemv", 5, 300, 2000, "swizzled"}}) {
    ASSERT_EQ(run_case(c, out), 0) << name_of(c) << " " << out.dump();
    EXPECT_EQ(out.value("variant", ""), "v4") << name_of(c);
  }
  EXPECT_EQ(run_case(Case{"gemv", 8, 17000, 512}, out, "scale-layout"), exit_code::kWrongOutput) << out.dump();
  // Its other shapes: 256-row groups, one CTA per SM, one accumulator chain, a shallower ring.
  for (const auto& [var, val] : std::vector<std::pair<const char*, const char*>>{
           {"GK_GEMV_MB", "2"}, {"GK_GEMV_CTAS", "1"}, {"GK_GEMV_ACC", "1"}, {"GK_GEMV_STAGES", "4"}}) {
    setenv(var, val, 1);
    EXPECT_EQ(run_case(Case{"gemv", 11, 17000, 1008}, out), 0) << var << "=" << val << " " << out.dump();
    EXPECT_EQ(run_case(Case{"gemv", 3, 300, 2000}, out), 0) << var << "=" << val << " " << out.dump();
    unsetenv(var);
  }
  unsetenv("GK_GEMV_IMPL");
  // gemv v3 (bulk copies, mma.sync) where N fills a wave of 7-tile groups, v2 below that.
  ASSERT_EQ(run_case(Case{"gemv", 1, 17000, 528}, out), 0) << out.dump();
  EXPECT_EQ(out.value("variant", ""), "v3");
  ASSERT_EQ(run_case(Case{"gemv", 9, 17000, 528}, out), 0) << out.dump();
  EXPECT_EQ(out.value("variant", ""), "v3");
  ASSERT_EQ(run_case(Case{"gemv", 2, 4000, 528}, out), 0) << out.dump();
  EXPECT_EQ(out.value("variant", ""), "v2");
  for (const char* ring : {"61", "22"}) {  // the other ring shapes and the 8-tile groups stay right
    setenv("GK_GEMV_STAGES", ring, 1);
    setenv("GK_GEMV_GROUP", "8", 1);
    EXPECT_EQ(run_case(Case{"gemv", 11, 17000, 1008}, out), 0) << ring << " " << out.dump();
  }
  // 14-tile groups (one CTA per SM), the default where N fills the SMs that way (N=28000 on an
  // H200), at both n-tile counts, and forced with the deeper rings they allow.
  for (int m : {16, 3}) {
    ASSERT_EQ(run_case(Case{"gemv", m, 28000, 528}, out), 0) << m << " " << out.dump();
    EXPECT_EQ(out.value("variant", ""), "v3");
  }
  // Launched without programmatic dependent launch, it stays right too.
  setenv("GK_GEMV_PDL", "0", 1);
  EXPECT_EQ(run_case(Case{"gemv", 16, 28000, 1040}, out), 0) << out.dump();
  EXPECT_EQ(run_case(Case{"gemv", 1, 28070, 272, "swizzled"}, out), 0) << out.dump();
  unsetenv("GK_GEMV_PDL");
  setenv("GK_GEMV_GROUP", "14", 1);
  for (const char* ring : {"42", "52"}) {
    setenv("GK_GEMV_STAGES", ring, 1);
    EXPECT_EQ(run_case(Case{"gemv", 12, 28000, 1008}, out), 0) << ring << " " << out.dump();
    EXPECT_EQ(run_case(Case{"gemv", 16, 28070, 16}, out), 0) << ring << " " << out.dump();
  }
  unsetenv("GK_GEMV_STAGES");
  unsetenv("GK_GEMV_GROUP");
  setenv("GK_GEMV_IMPL", "v2", 1);
  EXPECT_EQ(run_case(Case{"gemv", 1, 17000, 528}, out), 0) << out.dump();
  EXPECT_EQ(out.value("variant", ""), "v2");
  setenv("GK_GEMV_IMPL", "v1", 1);
  EXPECT_EQ(run_case(Case{"gemv", 13, 3000, 1040, "swizzled"}, out), 0) << out.dump();
  EXPECT_EQ(out.value("variant", ""), "v1");
  unsetenv("GK_GEMV_IMPL");
  for (const char* impl : {"v1", "v2", "v2u4"}) {
    setenv("GK_WGMMA_IMPL", impl, 1);
    EXPECT_EQ(run_case(Case{"mma", 129, 300, 208}, out), 0) << impl << " " << out.dump();
  }
  unsetenv("GK_WGMMA_IMPL");
}
