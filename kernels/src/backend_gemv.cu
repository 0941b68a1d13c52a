// `gemv` backend (M <= 16): bandwidth-bound skinny GEMM. Each warp streams 16 weight rows once,
// dequantizes them in registers and feeds mma.sync m16n8k16 with A as the 16-row operand (rows
// >= M are zeros), so 16 activation rows cost no more weight traffic than one.
//
// The K order inside an mma is free as long as A and B agree: lane (g = lane/4, t = lane%4)
// loads 32 contiguous weights of row g at k = base + 32t (one 16-byte load), and mma step j
// (0..7) uses elements 4j..4j+3 of that piece, with A read at the same k. So every global load
// is 16 bytes wide and no shuffles are needed.
#include "backend.hpp"
#include "cuda_check.hpp"
#include "nvfp4_device.cuh"

namespace gauntlet::kernels {
namespace {
using namespace nvfp4;

constexpr int kWarps = 4;
constexpr int kGroups = 2;   // 8-row groups per warp: 16 rows
constexpr int kUnroll = 4;   // 128-wide K chunks in flight per warp
constexpr int kRowsPerBlock = kWarps * kGroups * 8;

__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 32 elements (16 bytes) of W row n at k, zero beyond K. kAligned: K % 128 == 0, every piece is
// whole and 16-byte aligned.
template <bool kAligned>
__device__ __forceinline__ uint4 load_w(const GemmArgs& a, int n, int k) {
  if (n >= a.N) return make_uint4(0, 0, 0, 0);
  const uint8_t* p = a.Wq + size_t(n) * (a.K / 2) + k / 2;
  if (kAligned) return __ldg(reinterpret_cast<const uint4*>(p));
  uint2 lo = make_uint2(0, 0), hi = make_uint2(0, 0);  // K % 16 == 0: 8-byte aligned halves
  if (k < a.K) lo = __ldg(reinterpret_cast<const uint2*>(p));
  if (k + 16 < a.K) hi = __ldg(reinterpret_cast<const uint2*>(p + 8));
  return make_uint4(lo.x, lo.y, hi.x, hi.y);
}

__device__ __forceinline__ uint8_t load_scale(const GemmArgs& a, int n, int kb) {
  if (n >= a.N || kb * kBlock >= a.K) return 0;
  return __ldg(a.Ws + scale_index(a.layout, n, kb, a.N, a.K));
}

// A row m, 32 bf16 at k (as 16 words), zeros past M or K.
template <bool kAligned>
__device__ __forceinline__ void load_a(const GemmArgs& a, int m, int k, uint32_t (&out)[16]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (m < a.M && (kAligned || k + 8 * i < a.K))
      v = __ldg(reinterpret_cast<const uint4*>(a.A + size_t(m) * a.K + k + 8 * i));
    out[4 * i + 0] = v.x; out[4 * i + 1] = v.y; out[4 * i + 2] = v.z; out[4 * i + 3] = v.w;
  }
}

template <bool kAligned>
__global__ void __launch_bounds__(kWarps * 32, 3) gemv_kernel(GemmArgs a) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n_warp = blockIdx.x * kRowsPerBlock + warp * kGroups * 8;
  const int nchunks = (a.K + 127) / 128;
  float acc[kGroups][4] = {};

  for (int c0 = 0; c0 < nchunks; c0 += kUnroll) {
    // Issue every weight load of this batch first: they are the HBM traffic to keep in flight.
    uint4 w[kUnroll][kGroups];
    uint8_t s[kUnroll][kGroups][2];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = (c0 + u) * 128 + 32 * t;
      const bool live = c0 + u < nchunks;
#pragma unroll
      for (int r = 0; r < kGroups; ++r) {
        const int n = n_warp + r * 8 + g;
        w[u][r] = live ? load_w<kAligned>(a, n, k) : make_uint4(0, 0, 0, 0);
        s[u][r][0] = live ? load_scale(a, n, k / kBlock) : 0;
        s[u][r][1] = live ? load_scale(a, n, k / kBlock + 1) : 0;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (c0 + u >= nchunks) break;
      const int k = (c0 + u) * 128 + 32 * t;
      uint32_t alo[16], ahi[16];
      load_a<kAligned>(a, g, k, alo);
      load_a<kAligned>(a, g + 8, k, ahi);
#pragma unroll
      for (int r = 0; r < kGroups; ++r) {
        const __nv_bfloat162 s0 = dev::scale_to_bf16x2_folded(s[u][r][0]);
        const __nv_bfloat162 s1 = dev::scale_to_bf16x2_folded(s[u][r][1]);
        const uint32_t words[4] = {w[u][r].x, w[u][r].y, w[u][r].z, w[u][r].w};
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const uint32_t word = words[j / 2];
          const int sh = (j & 1) * 16;
          const __nv_bfloat162 sc = j < 4 ? s0 : s1;
          const uint32_t b0 = dev::dequant2((word >> sh) & 0xFF, sc);
          const uint32_t b1 = dev::dequant2((word >> (sh + 8)) & 0xFF, sc);
          // A words: element pairs (4j, 4j+1) -> word 2j, (4j+2, 4j+3) -> word 2j+1.
          const uint32_t af[4] = {alo[2 * j], ahi[2 * j], alo[2 * j + 1], ahi[2 * j + 1]};
          mma_bf16_16816(acc[r], af, b0, b1);
        }
      }
    }
  }
  const float alpha = a.global_scale * dev::kDequantFold;
#pragma unroll
  for (int r = 0; r < kGroups; ++r) {
    const int n = n_warp + r * 8 + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = g + 8 * h;
      if (m >= a.M) continue;
      if (n < a.N) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(acc[r][2 * h] * alpha);
      if (n + 1 < a.N) a.C[size_t(m) * a.N + n + 1] = __float2bfloat16_rn(acc[r][2 * h + 1] * alpha);
    }
  }
}

class GemvBackend final : public Backend {
 public:
  std::string check_shape(int M, int N, int K) const override {
    if (M > 16) return "gemv: M must be at most 16 (decode shapes)";
    return "";
  }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, gemv_kernel<true>);
    return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, gemv_kernel<false>);
  }
  void run(const GemmArgs& a) override {
    const dim3 grid((a.N + kRowsPerBlock - 1) / kRowsPerBlock);
    if (a.K % 128 == 0) gemv_kernel<true><<<grid, kWarps * 32, 0, a.stream>>>(a);
    else gemv_kernel<false><<<grid, kWarps * 32, 0, a.stream>>>(a);
    CUDA_CHECK_LAUNCH();
  }
};
}  // namespace

std::unique_ptr<Backend> make_gemv_backend() { return std::make_unique<GemvBackend>(); }
}  // namespace gauntlet::kernels
