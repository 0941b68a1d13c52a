// NVFP4 format: E2M1 and E4M3 codecs (every code, ties, saturation), the quantizer's round trip
// and edge values, and the 128x4 swizzled scale layout's index math.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "gauntlet/kernels/host.hpp"

using namespace gauntlet::kernels;
using namespace gauntlet::nvfp4;

TEST(E2M1, DecodesEveryCode) {
  const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(e2m1_decode(c), mags[c]) << c;
    EXPECT_EQ(e2m1_decode(c | 8), -mags[c]) << c;
    EXPECT_EQ(e2m1_encode(mags[c]), c) << "round trip " << c;
    if (c) {
      EXPECT_EQ(e2m1_encode(-mags[c]), c | 8) << "negative " << c;
    }
  }
}

TEST(E2M1, TiesGoToEvenCode) {
  // Midpoints between neighbours; the even code (mantissa bit 0) wins.
  EXPECT_EQ(e2m1_encode(0.25f), 0);
  EXPECT_EQ(e2m1_encode(0.75f), 2);   // 0.5 (code 1) vs 1.0 (code 2)
  EXPECT_EQ(e2m1_encode(1.25f), 2);   // 1.0 vs 1.5
  EXPECT_EQ(e2m1_encode(1.75f), 4);   // 1.5 vs 2.0
  EXPECT_EQ(e2m1_encode(2.5f), 4);    // 2 vs 3
  EXPECT_EQ(e2m1_encode(3.5f), 6);    // 3 vs 4
  EXPECT_EQ(e2m1_encode(5.0f), 6);    // 4 vs 6
  EXPECT_EQ(e2m1_encode(-5.0f), 6 | 8);
  // Just off the midpoints round to the nearer value.
  EXPECT_EQ(e2m1_encode(std::nextafter(0.25f, 1.0f)), 1);
  EXPECT_EQ(e2m1_encode(std::nextafter(5.0f, 6.0f)), 7);
  EXPECT_EQ(e2m1_encode(std::nextafter(0.75f, 0.0f)), 1);
}

TEST(E2M1, SaturatesAndHandlesSpecials) {
  EXPECT_EQ(e2m1_encode(6.0f), 7);
  EXPECT_EQ(e2m1_encode(1e30f), 7);
  EXPECT_EQ(e2m1_encode(INFINITY), 7);
  EXPECT_EQ(e2m1_encode(-INFINITY), 15);
  EXPECT_EQ(e2m1_encode(NAN), 0);
  EXPECT_EQ(e2m1_encode(0.0f), 0);
}

TEST(E4M3, EveryFiniteCodeRoundTrips) {
  for (int c = 0; c < 0x7F; ++c) {
    const float v = e4m3_decode(c);
    EXPECT_EQ(e4m3_encode_pos(v), c == 0 ? 0 : c) << "code " << c << " value " << v;
  }
  EXPECT_TRUE(std::isnan(e4m3_decode(0x7F)));
  EXPECT_EQ(e4m3_decode(0x7E), 448.0f);
  EXPECT_EQ(e4m3_decode(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(e4m3_decode(0x08), std::ldexp(1.0f, -6));  // smallest normal
}

TEST(E4M3, RoundsNearestEvenAndSaturates) {
  // Between 1.0 (0x38) and 1.125 (0x39): the midpoint goes to the even mantissa (1.0).
  EXPECT_EQ(e4m3_encode_pos(1.0625f), 0x38);
  // Between 1.125 (0x39) and 1.25 (0x3A): midpoint to 1.25.
  EXPECT_EQ(e4m3_encode_pos(1.1875f), 0x3A);
  // Mantissa overflow carries into the exponent: 1.9375 -> 2.0.
  EXPECT_EQ(e4m3_encode_pos(1.97f), 0x40);
  EXPECT_EQ(e4m3_encode_pos(448.0f), 0x7E);
  EXPECT_EQ(e4m3_encode_pos(464.0f), 0x7E);  // would round to 480, which E4M3fn lacks: saturate
  EXPECT_EQ(e4m3_encode_pos(1e9f), 0x7E);
  EXPECT_EQ(e4m3_encode_pos(INFINITY), 0x7E);
  // Subnormals: multiples of 2^-9, ties to even.
  EXPECT_EQ(e4m3_encode_pos(std::ldexp(1.5f, -9)), 0x02);
  EXPECT_EQ(e4m3_encode_pos(std::ldexp(2.5f, -9)), 0x02);
  EXPECT_EQ(e4m3_encode_pos(std::ldexp(0.5f, -9)), 0x00);
  EXPECT_EQ(e4m3_encode_pos(std::ldexp(7.5f, -9)), 0x08);  // rounds up into the first normal
  EXPECT_EQ(e4m3_encode_pos(0.0f), 0);
  EXPECT_EQ(e4m3_encode_pos(-3.0f), 0);
  EXPECT_EQ(e4m3_encode_pos(NAN), 0);
}

// The gemv v4 repack's scale codes: every E4M3 magnitude (subnormals, 448, NaN) survives the
// re-encoding exactly, fits a byte, and the GPU's one-multiply-add bf16 decode is that value x 2^118.
TEST(E5M3, EveryE4M3MagnitudeIsExactAndDecodesToBf16) {
  for (int c = 0; c < 256; ++c) {
    const float want = std::fabs(e4m3_decode(uint8_t(c)));
    const uint32_t code = e5m3_from_e4m3(uint8_t(c));
    ASSERT_LT(code, 256u) << c;
    const float got = e5m3_decode(code);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
    } else {
      EXPECT_EQ(got, want) << c;
    }
    const uint32_t bits = e5m3_to_bf16_bits(code);
    ASSERT_LT(bits, 0x10000u) << c;  // two codes decode side by side in one 32-bit word
    uint32_t f32 = bits << 16;
    float as_float;
    std::memcpy(&as_float, &f32, 4);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(as_float)) << c;
    } else if (want != 0.0f) {
      EXPECT_EQ(as_float, std::ldexp(want, 118)) << c;
    }
  }
}

// What every repack reads and folds: out-of-matrix reads are zero, a negative scale negates its
// block's codes (only the selected nibbles), a zero scale zeroes them, and code x |scale| then equals
// the signed decode for every code and scale.
TEST(Repack, ScaleSignFoldIsExactAndReadsPadWithZeros) {
  const uint8_t w[2] = {0x3A, 0x71};  // row 0: codes 0xA, 0x3, 0x1, 0x7 (K = 4)
  EXPECT_EQ(e2m1_at(w, 0, 0, 1, 4), 0xAu);
  EXPECT_EQ(e2m1_at(w, 0, 3, 1, 4), 0x7u);
  EXPECT_EQ(e2m1_at(w, 1, 0, 1, 4), 0u);  // past N
  EXPECT_EQ(e2m1_at(w, 0, 4, 1, 4), 0u);  // past K
  const uint8_t s[2] = {0x38, 0xB8};      // N = 2, K = 16: one block per row
  EXPECT_EQ(scale_at(s, ScaleLayout::plain, 1, 0, 2, 16), 0xB8);
  EXPECT_EQ(scale_at(s, ScaleLayout::plain, 2, 0, 2, 16), 0);
  EXPECT_EQ(scale_at(s, ScaleLayout::plain, 0, 1, 2, 16), 0);
  EXPECT_EQ(fold_scale_sign(0x12345678u, 0x80 | 0x38, 0xFu), 0x12345670u);  // only nibble 0 flips
  for (int scale = 0; scale < 256; ++scale) {
    if ((scale & 0x7F) == 0x7F) continue;  // NaN
    for (uint32_t code = 0; code < 16; ++code) {
      const uint32_t folded = fold_scale_sign(code, uint8_t(scale), 0xFu);
      ASSERT_LT(folded, 16u);
      EXPECT_EQ(e2m1_decode(uint8_t(folded)) * std::fabs(e4m3_decode(uint8_t(scale))),
                e2m1_decode(uint8_t(code)) * e4m3_decode(uint8_t(scale)))
          << code << " " << scale;
    }
  }
  EXPECT_EQ(fold_scale_sign(0x12345678u, 0xB8), 0x9ABCDEF0u);
  EXPECT_EQ(fold_scale_sign(0x12345678u, 0x80), 0u);
}

TEST(Quantizer, RoundTripWithinHalfAStep) {
  const int rows = 37, cols = 208;
  const auto w = random_normal(size_t(rows) * cols, 7);
  for (ScaleLayout layout : {ScaleLayout::plain, ScaleLayout::swizzled}) {
    const Nvfp4Matrix q = quantize_cpu(w, rows, cols, layout);
    ASSERT_EQ(q.packed.size(), size_t(rows) * cols / 2);
    ASSERT_EQ(q.scales.size(), scale_bytes(layout, rows, cols));
    const auto d = dequantize_cpu(q);
    for (int r = 0; r < rows; ++r)
      for (int b = 0; b < cols / 16; ++b) {
        const float s = e4m3_decode(q.scales[scale_index(layout, r, b, rows, cols)]) * q.global_scale;
        for (int k = b * 16; k < b * 16 + 16; ++k) {
          const float x = w[r * cols + k], y = d[r * cols + k];
          // E2M1's widest gap is 2 (4 -> 6): at most 1 scale unit off, plus saturation at 6 scale units,
          // plus the E4M3 rounding of the scale itself (relative 1/16).
          EXPECT_LE(std::fabs(x - y), 1.0f * s + std::fabs(x) * 0.0625f + 1e-6f) << r << "," << k;
        }
      }
  }
}

TEST(Quantizer, BlockMaxMapsToTopCode) {
  // A block whose max is exactly representable after scaling lands on code 7 (6.0).
  std::vector<float> w(32, 0.0f);
  for (int i = 0; i < 16; ++i) w[i] = (i % 2 ? -1.0f : 1.0f) * float(i) / 15.0f * 3.0f;
  w[16] = 100.0f;  // second block
  const Nvfp4Matrix q = quantize_cpu(w, 1, 32, ScaleLayout::plain);
  EXPECT_FLOAT_EQ(q.global_scale, 100.0f / (6.0f * 448.0f));
  EXPECT_EQ(q.scales[1], 0x7E);          // largest block gets E4M3's max
  EXPECT_EQ(q.packed[8] & 0xF, 7);       // element 16 -> +6
  EXPECT_NEAR(q.at(0, 16), 100.0f, 1e-3f);
}

TEST(Quantizer, EdgeValues) {
  // All zeros: global scale 1, scales 0, codes 0, decoded exactly 0.
  const Nvfp4Matrix z = quantize_cpu(std::vector<float>(64, 0.0f), 2, 32, ScaleLayout::plain);
  EXPECT_EQ(z.global_scale, 1.0f);
  for (uint8_t s : z.scales) EXPECT_EQ(s, 0);
  for (uint8_t p : z.packed) EXPECT_EQ(p, 0);
  // One zero block next to a large one: the zero block's scale is 0, never NaN.
  std::vector<float> w(32, 0.0f);
  for (int i = 16; i < 32; ++i) w[i] = 1e6f;
  const Nvfp4Matrix q = quantize_cpu(w, 1, 32, ScaleLayout::plain);
  EXPECT_EQ(q.scales[0], 0);
  EXPECT_EQ(q.at(0, 3), 0.0f);
  EXPECT_NEAR(q.at(0, 20), 1e6f, 1.0f);
  // Tiny values: a block far below the tensor's max underflows to scale 0 (E4M3 min 2^-9 of max).
  std::vector<float> t(32, 1e-6f);
  t[31] = 1000.0f;
  const Nvfp4Matrix qt = quantize_cpu(t, 1, 32, ScaleLayout::plain);
  EXPECT_EQ(qt.at(0, 0), 0.0f);
  // Packing: element 0 in the low nibble.
  std::vector<float> p(16, 0.0f);
  p[0] = 6.0f;
  p[1] = -3.0f;
  const Nvfp4Matrix qp = quantize_cpu(p, 1, 16, ScaleLayout::plain);
  EXPECT_EQ(qp.packed[0], (0xD << 4) | 0x7);  // -3 = sign | code 5
}

TEST(Swizzle, KnownPositions) {
  const int N = 300, K = 16 * 10;  // 10 scale columns -> padded to 12; rows padded to 384
  EXPECT_EQ(scale_bytes(ScaleLayout::swizzled, N, K), size_t(384 * 12));
  EXPECT_EQ(scale_bytes(ScaleLayout::plain, N, K), size_t(300 * 10));
  auto idx = [&](int r, int c) { return scale_index(ScaleLayout::swizzled, r, c, N, K); };
  EXPECT_EQ(idx(0, 0), 0u);
  EXPECT_EQ(idx(0, 3), 3u);
  EXPECT_EQ(idx(1, 0), 16u);    // rows 0..31 step 16 bytes
  EXPECT_EQ(idx(31, 0), 496u);
  EXPECT_EQ(idx(32, 0), 4u);    // row 32 shares the 16-byte group of row 0
  EXPECT_EQ(idx(96, 2), 14u);
  EXPECT_EQ(idx(0, 4), 512u);   // next 128x4 tile along K
  EXPECT_EQ(idx(128, 0), 3u * 512u);  // next row of tiles: 3 tiles per row
  EXPECT_EQ(idx(299, 9), (2u * 3 + 2) * 512 + (299 % 128 % 32) * 16 + (299 % 128 / 32) * 4 + 1);
  EXPECT_EQ(scale_index(ScaleLayout::plain, 5, 7, N, K), 57u);
}

TEST(Swizzle, IsABijectionOntoThePaddedBuffer) {
  for (auto [N, K] : {std::pair{1, 16}, {128, 64}, {129, 80}, {300, 160}, {1000, 528}}) {
    const int rp = (N + 127) / 128 * 128, cp = (scale_cols(K) + 3) / 4 * 4;
    std::set<size_t> seen;
    for (int r = 0; r < rp; ++r)
      for (int c = 0; c < cp; ++c) {
        const size_t i = scale_index(ScaleLayout::swizzled, r, c, N, K);
        ASSERT_LT(i, scale_bytes(ScaleLayout::swizzled, N, K));
        ASSERT_TRUE(seen.insert(i).second) << "collision at " << r << "," << c;
      }
    EXPECT_EQ(seen.size(), scale_bytes(ScaleLayout::swizzled, N, K));
  }
}

TEST(Swizzle, RelayoutRoundTrips) {
  const int N = 200, K = 96;
  const auto w = random_normal(size_t(N) * K, 3);
  const Nvfp4Matrix a = quantize_cpu(w, N, K, ScaleLayout::plain);
  const Nvfp4Matrix b = quantize_cpu(w, N, K, ScaleLayout::swizzled);
  EXPECT_EQ(a.packed, b.packed);
  EXPECT_EQ(relayout_scales(a.scales, ScaleLayout::plain, ScaleLayout::swizzled, N, K), b.scales);
  EXPECT_EQ(relayout_scales(b.scales, ScaleLayout::swizzled, ScaleLayout::plain, N, K), a.scales);
  EXPECT_EQ(dequantize_cpu(a), dequantize_cpu(b));
}

TEST(Bf16, RoundsNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);   // tie -> even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}
