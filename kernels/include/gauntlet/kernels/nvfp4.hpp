// NVFP4 format: E2M1 elements, one E4M3 scale per 16 elements along K, one FP32 global scale.
// Contract: every function here is exact and identical on host and device, so the CPU and GPU
// quantizers produce the same bytes and tests can compare them bit for bit.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GK_HD __host__ __device__ __forceinline__
#else
#define GK_HD inline
#endif

namespace gauntlet::nvfp4 {

constexpr int kBlock = 16;          // elements per E4M3 scale, along K
constexpr float kE2M1Max = 6.0f;
constexpr float kE4M3Max = 448.0f;

// Layout of the [N, K/16] scale matrix in memory.
enum class ScaleLayout { plain, swizzled };

// Magnitude of an E2M1 code 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
GK_HD float e2m1_decode(uint8_t code) {
  const uint8_t mag = code & 7;
  const int e = mag >> 1, m = mag & 1;
  const float v = e == 0 ? 0.5f * m : ldexpf(1.0f + 0.5f * m, e - 1);
  return (code & 8) ? -v : v;
}

// Round to nearest E2M1, ties to the even code (the one whose mantissa bit is 0), saturating at
// +-6. NaN encodes as +0 (the format has no NaN; callers never feed one).
GK_HD uint8_t e2m1_encode(float x) {
  if (x != x) return 0;
  const uint8_t sign = x < 0.0f ? 8 : 0;
  const float a = fabsf(x);
  uint8_t mag;
  if (a <= 0.25f) mag = 0;        // tie 0.25 -> 0 (code 0 even)
  else if (a < 0.75f) mag = 1;    // tie 0.75 -> 1.0 (code 2 even)
  else if (a <= 1.25f) mag = 2;   // tie 1.25 -> 1.0
  else if (a < 1.75f) mag = 3;    // tie 1.75 -> 2.0
  else if (a <= 2.5f) mag = 4;    // tie 2.5 -> 2.0
  else if (a < 3.5f) mag = 5;     // tie 3.5 -> 4.0
  else if (a <= 5.0f) mag = 6;    // tie 5 -> 4.0
  else mag = 7;                   // saturate at 6
  return sign | mag;
}

// E4M3 (the "fn" variant: no infinities, 0x7F is NaN, max 448). Scales are non-negative.
GK_HD float e4m3_decode(uint8_t code) {
  const int e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return NAN;
  const float v = e == 0 ? ldexpf(static_cast<float>(m), -9) : ldexpf(1.0f + m / 8.0f, e - 7);
  return (code & 0x80) ? -v : v;
}

// Round a non-negative float to E4M3, nearest-even, saturating at 448 (never produces NaN).
GK_HD uint8_t e4m3_encode_pos(float x) {
  if (!(x > 0.0f)) return 0;  // zero, negative and NaN scales encode as 0
  if (x >= kE4M3Max) return 0x7E;
  int e;
  frexpf(x, &e);  // x = f * 2^e, f in [0.5, 1) -> unbiased exponent e-1
  int ue = e - 1;
  if (ue < -6) {  // subnormal: multiples of 2^-9; scaling by a power of two is exact
    const float q = rintf(ldexpf(x, 9));
    return static_cast<uint8_t>(q);  // q == 8 is 2^-6, which is also code 8: the encoding is linear
  }
  float q = rintf((ldexpf(x, -ue) - 1.0f) * 8.0f);  // exact: mantissa bits shifted left by 3
  if (q >= 8.0f) { q = 0.0f; ++ue; }
  const int code = ((ue + 7) << 3) | static_cast<int>(q);
  return static_cast<uint8_t>(code > 0x7E ? 0x7E : code);
}

// "E5M3": an E4M3 magnitude renormalised into a 5-bit exponent (bias 10) and 3 mantissa bits, so
// E4M3's subnormals become normal and a GPU decodes a code with one integer multiply-add (the gemv
// v4 repack stores its scales so). Code 0 is zero, exponent 20 with mantissa 1 is NaN; exact for
// every E4M3 magnitude (the sign is the caller's business).
GK_HD uint32_t e5m3_from_e4m3(uint8_t code) {
  uint32_t e = (code >> 3) & 15u, m = code & 7u;
  if (e == 15 && m == 7) return (20u << 3) | 1u;
  if (e == 0) {
    if (m == 0) return 0;
    int sh = 0;  // m * 2^-9 = (m << sh) / 8 * 2^(-6 - sh), with m << sh in [8, 16)
    while (m < 8) { m <<= 1; ++sh; }
    return (uint32_t(4 - sh) << 3) | (m - 8);
  }
  return ((e + 3) << 3) | m;
}
// The bf16 bit pattern of an E5M3 scale times 2^118 (what the gemv v4 multiplies its placed
// E2M1 values by): the code times 16 puts exponent and mantissa in bf16's low exponent and top
// mantissa bits, the bias moves the exponent from 10 to 127 - 118. Never carries past 16 bits.
constexpr uint32_t kE5m3Bf16Bias = (127 - 10 + 118) << 7;
GK_HD uint32_t e5m3_to_bf16_bits(uint32_t code) { return code * 16u + kE5m3Bf16Bias; }
GK_HD float e5m3_decode(uint32_t code) {
  const int e = int(code >> 3), m = int(code & 7);
  if (e == 20 && m == 1) return NAN;
  return code == 0 ? 0.0f : ldexpf(1.0f + m / 8.0f, e - 10);
}

// The block scale for a block whose largest magnitude is amax, given the global scale gs:
// amax / 6 maps the block's largest element to the top E2M1 code.
GK_HD uint8_t block_scale_code(float amax, float gs) { return e4m3_encode_pos(amax / (kE2M1Max * gs)); }

// The global scale for a tensor whose largest magnitude is amax: puts the largest block scale at
// the top of E4M3's range. An all-zero tensor gets 1.
GK_HD float global_scale_for(float amax) { return amax > 0.0f ? amax / (kE2M1Max * kE4M3Max) : 1.0f; }

// Quantize one element given its decoded block scale (bs) and the global scale.
GK_HD uint8_t quantize_element(float x, float bs, float gs) {
  const float denom = bs * gs;
  return denom > 0.0f ? e2m1_encode(x / denom) : static_cast<uint8_t>(0);
}

// Scale matrix geometry: rows = N, cols = ceil(K/16). The swizzled layout pads rows to 128 and
// cols to 4 and stores each 128x4 tile as 512 contiguous bytes, row r of the tile at
// (r % 32) * 16 + (r / 32) * 4: the layout cuBLASLt and CUTLASS use for block-scaled operands.
GK_HD int scale_cols(int K) { return (K + kBlock - 1) / kBlock; }
GK_HD size_t scale_bytes(ScaleLayout layout, int N, int K) {
  const size_t cols = scale_cols(K);
  if (layout == ScaleLayout::plain) return static_cast<size_t>(N) * cols;
  const size_t rp = (static_cast<size_t>(N) + 127) / 128 * 128, cp = (cols + 3) / 4 * 4;
  return rp * cp;
}
GK_HD size_t scale_index(ScaleLayout layout, int row, int col, int N, int K) {
  const int cols = scale_cols(K);
  if (layout == ScaleLayout::plain) return static_cast<size_t>(row) * cols + col;
  const int col_tiles = (cols + 3) / 4;
  const size_t tile = static_cast<size_t>(row / 128) * col_tiles + col / 4;
  const int r = row % 128;
  return tile * 512 + (r % 32) * 16 + (r / 32) * 4 + (col % 4);
}

// Packed element bytes: row n holds ceil(K/2) bytes, element k in byte k/2, low nibble first.
GK_HD size_t packed_row_bytes(int K) { return static_cast<size_t>(K + 1) / 2; }

// What the one-time weight repacks read. The scale code of row n, block c, and the E2M1 code of
// element (n, k) of packed W [N, K/2] (K even); both 0 past the matrix, which pads with zeros.
GK_HD uint8_t scale_at(const uint8_t* s, ScaleLayout layout, int n, int c, int N, int K) {
  return (n < N && c < K / kBlock) ? s[scale_index(layout, n, c, N, K)] : 0;
}
GK_HD uint32_t e2m1_at(const uint8_t* w, int n, int k, int N, int K) {
  return (n < N && k < K) ? (w[static_cast<size_t>(n) * (K / 2) + k / 2] >> (4 * (k & 1))) & 0xFu : 0u;
}
// E2M1 codes (the nibbles of `codes` that `nibbles` selects) of one block, with its scale's sign
// folded in: negated where the scale is negative, zero where it is zero. The value of every element
// is then the code times |scale|, which is all a kernel's scale decode needs to read (exact).
GK_HD uint32_t fold_scale_sign(uint32_t codes, uint8_t scale, uint32_t nibbles = 0xFFFFFFFFu) {
  if ((scale & 0x7F) == 0) return 0;
  return (scale & 0x80) ? codes ^ (0x88888888u & nibbles) : codes;
}

}  // namespace gauntlet::nvfp4
