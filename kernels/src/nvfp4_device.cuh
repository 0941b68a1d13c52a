// Device helpers for NVFP4 decode. Contract: exact (no rounding) conversions used by every
// backend that dequantizes inside a kernel.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "gauntlet/kernels/nvfp4.hpp"

namespace gauntlet::kernels::dev {

// One byte (two E2M1 codes, low nibble first) -> bf16x2 bits holding value * 2^-126. Putting the
// 3 magnitude bits straight into bf16's exponent/mantissa makes every code a bf16 whose value is
// the E2M1 value times 2^-126 (codes 0..1 land on bf16 subnormals, which bf16 math keeps).
__device__ __forceinline__ uint32_t e2m1x2_to_bf16x2_bits(uint32_t byte) {
  const uint32_t y = (byte | (byte << 12)) & 0x000F000Fu;  // lo nibble -> bits 0..3, hi -> 16..19
  return ((y & 0x00070007u) << 6) | ((y & 0x00080008u) << 12);
}

// The multiplier that pairs with e2m1x2_to_bf16x2_bits: E4M3 scale * 2^118, so the product is
// e2m1 * scale * 2^-8, exact in bf16 (at most 6 significant bits, exponent well inside range).
// Callers multiply the final fp32 sum by global_scale * 256.
constexpr float kDequantFold = 256.0f;
__device__ __forceinline__ __nv_bfloat162 scale_to_bf16x2_folded(uint8_t code) {
  const float s = nvfp4::e4m3_decode(code) * 0x1.0p118f;
  const __nv_bfloat16 b = __float2bfloat16_rn(s);  // exact: s has at most 4 significant bits
  return __nv_bfloat162(b, b);
}

__device__ __forceinline__ __nv_bfloat162 bits_as_bf16x2(uint32_t u) {
  return *reinterpret_cast<const __nv_bfloat162*>(&u);
}
__device__ __forceinline__ uint32_t bf16x2_as_bits(__nv_bfloat162 v) {
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Two decoded elements (times scale, times 2^-8) as bf16x2 bits.
__device__ __forceinline__ uint32_t dequant2(uint32_t byte, __nv_bfloat162 scale_folded) {
  return bf16x2_as_bits(__hmul2(bits_as_bf16x2(e2m1x2_to_bf16x2_bits(byte)), scale_folded));
}

}  // namespace gauntlet::kernels::dev
