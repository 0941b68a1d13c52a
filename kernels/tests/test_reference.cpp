// The fp64 CPU reference GEMM on small odd sizes, checked against an independent naive product,
// and the comparison's verdicts (tolerance, NaN, first mismatches).
#include <gtest/gtest.h>

#include <cmath>

#include "gauntlet/kernels/host.hpp"

using namespace gauntlet::kernels;
using gauntlet::nvfp4::ScaleLayout;

namespace {
// Independent decode: the code and scale looked up per element, products in long double.
std::vector<long double> decode_exact(const Nvfp4Matrix& w) {
  std::vector<long double> out(size_t(w.rows) * w.cols);
  for (int r = 0; r < w.rows; ++r)
    for (int c = 0; c < w.cols; ++c) {
      const uint8_t byte = w.packed[size_t(r) * (w.cols / 2) + c / 2];
      const int code = (c % 2 == 1) ? (byte >> 4) : (byte & 0xF);
      const long double mags[8] = {0, 0.5L, 1, 1.5L, 2, 3, 4, 6};
      const long double v = (code & 8 ? -1 : 1) * mags[code & 7];
      const long double s = gauntlet::nvfp4::e4m3_decode(
          w.scales[gauntlet::nvfp4::scale_index(w.layout, r, c / 16, w.rows, w.cols)]);
      out[size_t(r) * w.cols + c] = v * s * (long double)w.global_scale;
    }
  return out;
}

std::vector<double> naive(const std::vector<uint16_t>& a, const std::vector<long double>& wd, int M, int N, int K) {
  std::vector<double> c(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      long double acc = 0;
      for (int k = 0; k < K; ++k) acc += (long double)bf16_to_f32(a[m * K + k]) * wd[n * K + k];
      c[m * N + n] = double(acc);
    }
  return c;
}
}  // namespace

class ReferenceGemm : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(ReferenceGemm, MatchesNaiveProduct) {
  const auto [M, N, K] = GetParam();
  const auto a = to_bf16(random_normal(size_t(M) * K, 100 + M));
  for (ScaleLayout layout : {ScaleLayout::plain, ScaleLayout::swizzled}) {
    const Nvfp4Matrix w = quantize_cpu(random_normal(size_t(N) * K, 200 + N), N, K, layout);
    const auto ref = reference_gemm_fp64(a, w, M);
    const auto want = naive(a, decode_exact(w), M, N, K);
    ASSERT_EQ(ref.size(), want.size());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(ref[i], want[i], 1e-9 * (1 + std::fabs(want[i]))) << i;
    // Threads split rows of W; the answer must not change.
    EXPECT_EQ(reference_gemm_fp64(bf16_to_double(a), M, w, 3), ref);
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, ReferenceGemm,
                         ::testing::Values(std::tuple{1, 1, 16}, std::tuple{3, 5, 16}, std::tuple{7, 13, 48},
                                           std::tuple{17, 31, 80}, std::tuple{33, 129, 144}));

TEST(Compare, PassesRoundedCopyOfReference) {
  const int M = 9, N = 11;
  std::vector<double> ref(M * N);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::sin(double(i)) * 10;
  std::vector<uint16_t> out(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) out[i] = f32_to_bf16(float(ref[i]));
  const Comparison c = compare(out, ref, M, N, 5e-3);
  EXPECT_TRUE(c.passed) << c.first_mismatches;
  EXPECT_LT(c.rel_err, 3e-3);
  EXPECT_EQ(c.mismatches, 0u);
}

TEST(Compare, FlagsNaNAndOutliersAndNamesThem) {
  const int M = 4, N = 4;
  std::vector<double> ref(16, 1.0);
  std::vector<uint16_t> out(16, f32_to_bf16(1.0f));
  out[5] = 0xFFFF;  // NaN (the poison value)
  Comparison c = compare(out, ref, M, N, 5e-3);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.nonfinite, 1u);
  EXPECT_NE(c.first_mismatches.find("(1,1)"), std::string::npos) << c.first_mismatches;
  out[5] = f32_to_bf16(1.0f);
  out[14] = f32_to_bf16(1.5f);  // one element 50% off: rel_err 0.125 > tol
  c = compare(out, ref, M, N, 5e-3);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_NE(c.first_mismatches.find("(3,2) got 1.5 want 1"), std::string::npos) << c.first_mismatches;
}

TEST(RandomNormal, DeterministicAndPlausible) {
  const auto a = random_normal(100000, 42), b = random_normal(100000, 42), c = random_normal(100000, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0, var = 0;
  for (float x : a) mean += x;
  mean /= a.size();
  for (float x : a) var += (x - mean) * (x - mean);
  var /= a.size();
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
}
