// `mma` backend, mma.sync path (sm_80 and later): 128x128x32 tiles, 8 warps of 64x32; A streamed
// with cp.async, W loaded packed into registers, dequantized and written to shared memory as bf16,
// both double-buffered so the next tile's loads overlap this tile's MMAs. Runs where wgmma does
// not (Ampere, Ada, Blackwell); slower than the wgmma path on Hopper.
#include "backend.hpp"
#include "cuda_check.hpp"
#include "mma_repack.cuh"
#include "nvfp4_device.cuh"

namespace gauntlet::kernels {
namespace {

constexpr int BM = 128, BN = 128, BK = 32, LDS = BK + 8;  // +8 bf16 per row: no ldmatrix conflicts
constexpr int kThreads = 256;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

struct Params {
  GemmArgs a;
  const uint8_t* w;  // repacked [Npad, Kpad/2]
  const uint8_t* s;  // repacked [Npad, Kpad/16]
  int Kpad;
};

__global__ void __launch_bounds__(kThreads) mma_sync_kernel(Params p) {
  __shared__ __align__(16) __nv_bfloat16 sA[2][BM * LDS];
  __shared__ __align__(16) __nv_bfloat16 sB[2][BN * LDS];
  const GemmArgs& a = p.a;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / 4, wn = warp % 4;  // 2 x 4 warps, 64 x 32 each
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int KT = p.Kpad / BK;

  auto load_a = [&](int kt, int buf) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // 128 rows x 4 chunks of 8 bf16
      const int idx = tid + i * kThreads, r = idx / 4, c = idx % 4;
      const int m = m0 + r, k = kt * BK + c * 8;
      const bool ok = m < a.M && k < a.K;
      cp_async16(&sA[buf][r * LDS + c * 8], ok ? a.A + size_t(m) * a.K + k : a.A, ok);
    }
    asm volatile("cp.async.commit_group;\n");
  };
  // W: threads 0..127 each own one row n of the tile: 16 packed bytes (32 k) and 2 scales.
  uint4 wreg = make_uint4(0, 0, 0, 0);
  uint32_t sreg = 0;
  auto load_w = [&](int kt) {
    if (tid < BN) {
      const int n = n0 + tid;
      wreg = *reinterpret_cast<const uint4*>(p.w + size_t(n) * (p.Kpad / 2) + kt * (BK / 2));
      sreg = *reinterpret_cast<const uint16_t*>(p.s + size_t(n) * (p.Kpad / 16) + kt * (BK / 16));
    }
  };
  auto store_w = [&](int buf) {
    if (tid < BN) {
      const uint32_t words[4] = {wreg.x, wreg.y, wreg.z, wreg.w};
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // two 16-element scale blocks
        const __nv_bfloat162 sc = dev::scale_to_bf16x2_folded((sreg >> (8 * h)) & 0xFF);
        uint32_t o[8];
        dev::dequant8(words[2 * h], sc, *reinterpret_cast<uint32_t(*)[4]>(&o[0]));
        dev::dequant8(words[2 * h + 1], sc, *reinterpret_cast<uint32_t(*)[4]>(&o[4]));
        const uint4* out = reinterpret_cast<const uint4*>(o);
        *reinterpret_cast<uint4*>(&sB[buf][tid * LDS + h * 16]) = out[0];
        *reinterpret_cast<uint4*>(&sB[buf][tid * LDS + h * 16 + 8]) = out[1];
      }
    }
  };

  float acc[4][4][4] = {};
  load_a(0, 0);
  load_w(0);
  store_w(0);
  asm volatile("cp.async.wait_all;\n");
  __syncthreads();

  for (int kt = 0; kt < KT; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < KT) {
      load_a(kt + 1, cur ^ 1);
      load_w(kt + 1);
    }
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[4][4], bfr[2][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
        ldmatrix_x4(af[mi], &sA[cur][(wm * 64 + mi * 16 + (lane % 16)) * LDS + kk + (lane / 16) * 8]);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj)  // two ldmatrix.x4, each two n8 tiles x two k halves
        ldmatrix_x4(bfr[nj], &sB[cur][(wn * 32 + nj * 16 + (lane / 16) * 8 + (lane % 8)) * LDS + kk +
                                      ((lane / 8) % 2) * 8]);
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
          dev::mma_bf16_16816(acc[mi][ni], af[mi], bfr[ni / 2][(ni % 2) * 2], bfr[ni / 2][(ni % 2) * 2 + 1]);
    }
    if (kt + 1 < KT) store_w(cur ^ 1);
    asm volatile("cp.async.wait_all;\n");
    __syncthreads();
  }

  const float alpha = a.global_scale * dev::kDequantFold;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = m0 + wm * 64 + mi * 16 + lane / 4 + 8 * h;
        const int n = n0 + wn * 32 + ni * 8 + (lane % 4) * 2;
        if (m >= a.M) continue;
        if (n < a.N) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(acc[mi][ni][2 * h] * alpha);
        if (n + 1 < a.N) a.C[size_t(m) * a.N + n + 1] = __float2bfloat16_rn(acc[mi][ni][2 * h + 1] * alpha);
      }
}

class MmaSyncBackend final : public Backend {
 public:
  std::string variant() const override { return "mma.sync"; }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, mma_sync_kernel);
    return e != cudaSuccess ? e : repack_probe();
  }
  std::string check_shape(int M, int N, int K) const override {
    return (M + BM - 1) / BM > 65535 ? "mma: M too large for the grid" : "";
  }
  void prepare(const GemmArgs& a) override { repack_for_mma(a, BN, BK, w_); }
  void run(const GemmArgs& a) override {
    const Params p{a, w_.w, w_.s, w_.Kpad};
    const dim3 grid(w_.Npad / BN, (a.M + BM - 1) / BM);
    mma_sync_kernel<<<grid, kThreads, 0, a.stream>>>(p);
    CUDA_CHECK_LAUNCH();
  }

 private:
  RepackedWeights w_;
};
}  // namespace

std::unique_ptr<Backend> make_mma_sync_backend() { return std::make_unique<MmaSyncBackend>(); }
}  // namespace gauntlet::kernels
