// Device helpers for NVFP4 decode. Contract: exact (no rounding) conversions used by every
// backend that dequantizes inside a kernel.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "gauntlet/kernels/nvfp4.hpp"

namespace gauntlet::kernels::dev {

// The multiplier that pairs with the bit-placed E2M1 values: E4M3 scale * 2^118, so the product is
// e2m1 * scale * 2^-8, exact in bf16 (at most 6 significant bits, exponent well inside range).
// Callers multiply the final fp32 sum by global_scale * 256. The sign bit is ignored: every repack
// folds a negative scale into its block's weight signs. The E4M3 code is decoded by placing
// its bits in an fp32 (exponent field 4 bits wide at the bottom, mantissa at the top): that float is
// scale * 2^-120, subnormal codes included (fp32 math keeps denormals here: no -ftz).
constexpr float kDequantFold = 256.0f;
__device__ __forceinline__ __nv_bfloat162 scale_to_bf16x2_folded(uint32_t code) {
  const float s = __uint_as_float((code & 0x7Fu) << 20) * 0x1.0p120f * 0x1.0p118f;
  const __nv_bfloat16 b = __float2bfloat16_rn(s);  // exact: s has at most 4 significant bits
  return __nv_bfloat162(b, b);
}

__device__ __forceinline__ __nv_bfloat162 bits_as_bf16x2(uint32_t u) {
  return *reinterpret_cast<const __nv_bfloat162*>(&u);
}
__device__ __forceinline__ uint32_t bf16x2_as_bits(__nv_bfloat162 v) {
  return *reinterpret_cast<const uint32_t*>(&v);
}
// Half `hi` (0: low, 1: high) of a bf16x2 in both halves.
__device__ __forceinline__ __nv_bfloat162 splat_bf16(uint32_t two, int hi) {
  return bits_as_bf16x2(__byte_perm(two, 0, hi ? 0x3232 : 0x1010));
}
// E5M3 code (nvfp4::e5m3_from_e4m3) in byte `b` (0..3, compile-time) of `codes` as a bf16x2 splat
// of scale * 2^118 (the fold of scale_to_bf16x2_folded): nvfp4::e5m3_to_bf16_bits in both halves.
// `sixteen` must be 16: passed at run time, so the multiply-add stays an IMAD on the FMA pipe
// rather than becoming an LEA on the integer pipe, which the dequantization already saturates.
__device__ __forceinline__ __nv_bfloat162 e5m3_splat(uint32_t codes, int b, uint32_t sixteen) {
  return bits_as_bf16x2(__byte_perm(codes, 0, 0x4040 | (b << 8) | b) * sixteen + nvfp4::kE5m3Bf16Bias * 0x10001u);
}


// Eight E2M1 codes in one 32-bit word, stored in the repacked nibble order (nibble i holds element
// 0,2,4,6,1,3,5,7 for i = 0..7; see mma_repack.cuh), to four bf16x2 in natural order (elements 0-1,
// 2-3, 4-5, 6-7), each times the folded scale. Nibbles i and i+4 sit 16 bits apart, so one shift
// and one LOP3 place both halves of a bf16x2 at once: ~3 integer ops and one HMUL2 per pair.
// The 3 magnitude bits land in bf16's exponent/mantissa, so each placed value is the E2M1 value
// times 2^-126 (codes 0 and 1 become bf16 subnormals, which bf16 math keeps); the folded scale
// brings it to e2m1 * scale * 2^-8.
__device__ __forceinline__ void dequant8(uint32_t w, __nv_bfloat162 sc, uint32_t (&out)[4]) {
  constexpr uint32_t kMag = 0x01C001C0u, kSign = 0x80008000u;
  const uint32_t p0 = ((w << 6) & kMag) | ((w << 12) & kSign);
  const uint32_t p1 = ((w << 2) & kMag) | ((w << 8) & kSign);
  const uint32_t p2 = ((w >> 2) & kMag) | ((w << 4) & kSign);
  const uint32_t p3 = ((w >> 6) & kMag) | (w & kSign);
  out[0] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p0), sc));
  out[1] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p1), sc));
  out[2] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p2), sc));
  out[3] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p3), sc));
}

// The "v2" bit layout of eight E2M1 codes in a 32-bit word (used by the gemv v2 and wgmma v2
// repacks): element e (pair p = e/2, half h = e%2) keeps its magnitude bits (m, e0, e1) at
// 6+b+16h-kDm[p] and its sign at 15+16h-kDs[p], (kDm, kDs) being the left shifts that bring them to
// their bf16 places (bits 6..8 and 15 of each half). dequant8_v2 then needs 11 integer ops per word
// instead of dequant8's 16 (pair 2 is already in place, pair 1 needs one shift), same values.
__host__ __device__ __forceinline__ uint32_t pack8_v2(uint32_t natural) {  // natural: element e at nibble e
  constexpr int kDm[4] = {6, 3, 0, -3}, kDs[4] = {1, 3, 0, 2};
  uint32_t o = 0;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const uint32_t nib = (natural >> (4 * e)) & 0xFu;
    const int pr = e / 2, h = e % 2;
#pragma unroll
    for (int b = 0; b < 3; ++b)
      if ((nib >> b) & 1u) o |= 1u << (6 + b + 16 * h - kDm[pr]);
    if (nib & 8u) o |= 1u << (15 + 16 * h - kDs[pr]);
  }
  return o;
}
// The four bf16x2 of a v2 word before scaling (each value e2m1 * 2^-126).
__device__ __forceinline__ void place8_v2(uint32_t w, uint32_t (&p)[4]) {
  constexpr uint32_t kMag = 0x01C001C0u, kSign = 0x80008000u, kBoth = kMag | kSign;
  p[0] = ((w << 6) & kMag) | ((w << 1) & kSign);
  p[1] = (w << 3) & kBoth;
  p[2] = w & kBoth;
  p[3] = ((w >> 3) & kMag) | ((w << 2) & kSign);
}
__device__ __forceinline__ void dequant8_v2(uint32_t w, __nv_bfloat162 sc, uint32_t (&out)[4]) {
  uint32_t p[4];
  place8_v2(w, p);
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p[i]), sc));
}
// Same, with elements 0-3 scaled by sc_lo and 4-7 by sc_hi (a word that spans two weight rows).
__device__ __forceinline__ void dequant8_v2_rows(uint32_t w, __nv_bfloat162 sc_lo, __nv_bfloat162 sc_hi,
                                                 uint32_t (&out)[4]) {
  uint32_t p[4];
  place8_v2(w, p);
  out[0] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p[0]), sc_lo));
  out[1] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p[1]), sc_lo));
  out[2] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p[2]), sc_hi));
  out[3] = bf16x2_as_bits(__hmul2(bits_as_bf16x2(p[3]), sc_hi));
}

// D += A (16x16 bf16, row) x B (16x8 bf16, col) in fp32: the sm_80+ tensor-core step that the
// mma.sync GEMM and the gemv both issue.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace gauntlet::kernels::dev
