// `sm120_native` backend (sm_120a only): Blackwell's block-scaled FP4 tensor-core MMA,
// mma.sync m16n8k64 kind::mxf4nvf4 with UE4M3 scales per 16 elements, so A is quantized to NVFP4
// on the GPU first (W4A4; the reference then uses the same quantized A). Built for sm_120a alone:
// on any other GPU probe() returns the runtime's "no kernel image" error and the tool reports
// `unsupported` before launching anything.
//
// Kernel: each warp computes 16x32 of C from fragments loaded straight from global memory. The
// scale-factor thread mapping (bid/tid selectors 0) follows the PTX ISA's scale_vec::4X layout;
// this file is compile-checked here and has not run on sm_120 hardware (see docs/KERNELS.md).
#include "backend.hpp"
#include "cuda_check.hpp"
#include "quantize.cuh"

namespace gauntlet::kernels {
namespace {
using namespace nvfp4;

constexpr int kWarps = 4, kWarpN = 32;

__device__ __forceinline__ void mma_nvfp4(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                                          uint32_t sfa, uint32_t sfb) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1200)
  asm volatile(
      "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, %10, {%11,%12}, %13, {%14,%15};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(sfa), "h"(uint16_t(0)),
        "h"(uint16_t(0)), "r"(sfb), "h"(uint16_t(0)), "h"(uint16_t(0)));
#else
  __trap();  // never built for other archs; probe() keeps it from launching
#endif
}

struct Params {
  GemmArgs a;
  const uint8_t* aq;  // A quantized: [M, K/2]
  const uint8_t* as;  // A scales, plain [M, K/16]
  const float* a_gs;  // A global scale (device)
};

__device__ __forceinline__ uint32_t ld_u32(const uint8_t* p, bool ok) {
  return ok ? *reinterpret_cast<const uint32_t*>(p) : 0u;
}

__global__ void __launch_bounds__(kWarps * 32) sm120_kernel(Params p) {
  const GemmArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int m0 = blockIdx.y * 16, n0 = (blockIdx.x * kWarps + warp) * kWarpN;
  const int KB = a.K / kBlock;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < a.K; k0 += 64) {
    uint32_t af[4];
    const int ma = m0 + g, mb = m0 + g + 8;
    af[0] = ld_u32(p.aq + size_t(ma) * (a.K / 2) + (k0 + t * 8) / 2, ma < a.M);
    af[1] = ld_u32(p.aq + size_t(mb) * (a.K / 2) + (k0 + t * 8) / 2, mb < a.M);
    af[2] = ld_u32(p.aq + size_t(ma) * (a.K / 2) + (k0 + 32 + t * 8) / 2, ma < a.M);
    af[3] = ld_u32(p.aq + size_t(mb) * (a.K / 2) + (k0 + 32 + t * 8) / 2, mb < a.M);
    const int ms = m0 + g + 8 * (lane & 1);  // scale row this lane supplies
    const uint32_t sfa = ld_u32(p.as + size_t(ms) * KB + k0 / kBlock, ms < a.M);
#pragma unroll
    for (int j = 0; j < kWarpN / 8; ++j) {
      const int n = n0 + j * 8 + g;
      const bool ok = n < a.N;
      const uint32_t b0 = ld_u32(a.Wq + size_t(n) * (a.K / 2) + (k0 + t * 8) / 2, ok);
      const uint32_t b1 = ld_u32(a.Wq + size_t(n) * (a.K / 2) + (k0 + 32 + t * 8) / 2, ok);
      uint32_t sfb = 0;
      if (ok)
#pragma unroll
        for (int i = 0; i < 4; ++i) sfb |= uint32_t(a.Ws[scale_index(a.layout, n, k0 / kBlock + i, a.N, a.K)]) << (8 * i);
      mma_nvfp4(acc[j], af, b0, b1, sfa, sfb);
    }
  }
  const float alpha = a.global_scale * *p.a_gs;
#pragma unroll
  for (int j = 0; j < kWarpN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + g + 8 * h, n = n0 + j * 8 + 2 * t;
      if (m >= a.M) continue;
      if (n < a.N) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(acc[j][2 * h] * alpha);
      if (n + 1 < a.N) a.C[size_t(m) * a.N + n + 1] = __float2bfloat16_rn(acc[j][2 * h + 1] * alpha);
    }
}

class Sm120Backend final : public Backend {
 public:
  ~Sm120Backend() override {
    for (void* q : {static_cast<void*>(aq_), static_cast<void*>(as_), static_cast<void*>(gs_)})
      if (q) cudaFree(q);
  }
  bool quantizes_activations() const override { return true; }
  std::string check_shape(int M, int N, int K) const override {
    if (K % 64) return "sm120_native: K must be a multiple of 64 (one m16n8k64 step)";
    if ((M + 15) / 16 > 65535) return "sm120_native: M too large for the grid";
    return "";
  }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, sm120_kernel);
  }
  void prepare(const GemmArgs& a) override {
    CUDA_CHECK(cudaMalloc(&aq_, size_t(a.M) * a.K / 2));
    CUDA_CHECK(cudaMalloc(&as_, scale_bytes(ScaleLayout::plain, a.M, a.K)));
    CUDA_CHECK(cudaMalloc(&gs_, 2 * sizeof(float)));
  }
  void run(const GemmArgs& a) override {
    amax_gpu(a.A, size_t(a.M) * a.K, gs_ + 1, a.stream);
    global_scale_gpu(gs_ + 1, gs_, a.stream);
    quantize_gpu(a.A, a.M, a.K, gs_, ScaleLayout::plain, aq_, as_, a.stream);
    const Params p{a, aq_, as_, gs_};
    const dim3 grid((a.N + kWarps * kWarpN - 1) / (kWarps * kWarpN), (a.M + 15) / 16);
    sm120_kernel<<<grid, kWarps * 32, 0, a.stream>>>(p);
    CUDA_CHECK_LAUNCH();
  }

 private:
  uint8_t* aq_ = nullptr;
  uint8_t* as_ = nullptr;
  float* gs_ = nullptr;
};
}  // namespace

std::unique_ptr<Backend> make_sm120_native_backend() { return std::make_unique<Sm120Backend>(); }
}  // namespace gauntlet::kernels
