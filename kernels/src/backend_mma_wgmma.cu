// `mma` backend, wgmma path (sm_90a only): one CTA computes a 128x256 tile of C with three
// warpgroups. Warpgroup 0 is the producer: it streams A (bf16) with cp.async into 128-byte-swizzled
// shared memory, streams the packed FP4 weights and their scales, dequantizes them to bf16 in the
// same swizzled layout, and signals a full barrier per stage. Warpgroups 1 and 2 each issue
// wgmma m64n256k16 over 64 rows of A and all 256 columns, with both operands read by the tensor
// cores straight from shared memory, and release each stage through an empty barrier.
//
// Why this shape: wgmma needs B in shared memory, so dequantization must land there; a dedicated
// producer warpgroup overlaps it with the consumers' MMAs. The dequantized value is e2m1*scale*2^-8
// (exact in bf16, see nvfp4_device.cuh); the epilogue multiplies by global_scale*256.
#include "backend.hpp"
#include "cuda_check.hpp"
#include "mma_repack.cuh"
#include "mma_wgmma_rs.cuh"
#include "nvfp4_device.cuh"
#include "sm90_async.cuh"
#include "wgmma.cuh"

#include <cstdlib>
#include <string>

namespace gauntlet::kernels {
namespace {
using namespace dev;

constexpr int BM = 128, BN = 256, BK = 64;
constexpr int kStages = 4;  // A+B(bf16) ring
constexpr int kRaw = 3;     // packed W + scales ring; must be >= 3 (see producer)
constexpr int kThreads = 384;
constexpr int kABytes = BM * BK * 2, kBBytes = BN * BK * 2;
constexpr int kRawW = BN * BK / 2, kRawS = BN * BK / 16;
constexpr int kSmem = kStages * (kABytes + kBBytes) + kRaw * (kRawW + kRawS) + 2 * kStages * 8 + 1024;

struct Params {
  GemmArgs a;
  const uint8_t* w;  // repacked [Npad, Kpad/2]
  const uint8_t* s;  // repacked [Npad, Kpad/16]
  int Kpad;
};

// The v1/v2 epilogue: warpgroup-local thread t's m64n256 accumulators (rows m_base.., columns
// n0..) times global_scale*256, to bf16 C with bounds checks.
__device__ __forceinline__ void store_c_tile(const float (&d)[128], const GemmArgs& a, int m_base, int n0, int t) {
  const float alpha = a.global_scale * dev::kDequantFold;
  const int warp = t / 32, lane = t % 32;
  const int row = m_base + warp * 16 + lane / 4;
#pragma unroll
  for (int b = 0; b < 32; ++b) {
    const int n = n0 + b * 8 + (lane % 4) * 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = row + 8 * h;
      if (m >= a.M) continue;
      __nv_bfloat16* c = a.C + size_t(m) * a.N + n;
      const float v0 = d[b * 4 + 2 * h] * alpha, v1 = d[b * 4 + 2 * h + 1] * alpha;
      if (n + 1 < a.N && (a.N % 2 == 0)) {
        *reinterpret_cast<__nv_bfloat162*>(c) = __floats2bfloat162_rn(v0, v1);
      } else {
        if (n < a.N) c[0] = __float2bfloat16_rn(v0);
        if (n + 1 < a.N) c[1] = __float2bfloat16_rn(v1);
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1) mma_wgmma_kernel(Params p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint8_t* sA = smem;                                   // kStages x 16 KB
  uint8_t* sB = sA + kStages * kABytes;                 // kStages x 32 KB
  uint8_t* rawW = sB + kStages * kBBytes;               // kRaw x 8 KB
  uint8_t* rawS = rawW + kRaw * kRawW;                  // kRaw x 1 KB
  uint64_t* full = reinterpret_cast<uint64_t*>(rawS + kRaw * kRawS);
  uint64_t* empty = full + kStages;

  const GemmArgs& a = p.a;
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int KT = p.Kpad / BK;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 128);  // every producer thread arrives
      mbar_init(&empty[s], 8);   // one arrival per consumer warp
    }
  }
  __syncthreads();

  if (wg == 0) {
    // Producer. Iteration j issues the copies for tile j, then dequantizes tile j-1 (whose copies
    // it waits for), so one tile's loads are always in flight under the previous one's work.
    // rawW/rawS slot j%kRaw is rewritten at iteration j+kRaw; the bar.sync of iteration j+kRaw-1
    // (>= j+2) orders that after every thread finished reading it at iteration j+1.
    for (int j = 0; j <= KT; ++j) {
      if (j < KT) {
        const int s = j % kStages, q = j % kRaw;
        if (j >= kStages) mbar_wait(&empty[s], ((j / kStages) - 1) & 1);
        const uint32_t a_base = smem_u32(sA + s * kABytes);
        cp_async_tile_swizzled<BM>(a_base, a.A, a.M, a.K, m0, j * BK, t);
        const uint32_t w_base = smem_u32(rawW + q * kRawW);
#pragma unroll
        for (int i = 0; i < 4; ++i) {  // W: 256 rows x 2 chunks of 16 bytes
          const int idx = t + i * 128, r = idx >> 1, c = idx & 1;
          cp_async16(w_base + r * 32 + c * 16, p.w + size_t(n0 + r) * (p.Kpad / 2) + j * (BK / 2) + c * 16, true);
        }
        const uint32_t s_base = smem_u32(rawS + q * kRawS);
#pragma unroll
        for (int i = 0; i < 2; ++i) {  // scales: 256 rows x 4 bytes
          const int r = t + i * 128;
          cp_async4(s_base + r * 4, p.s + size_t(n0 + r) * (p.Kpad / 16) + j * (BK / 16));
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
      }
      if (j >= 1) {
        const int jd = j - 1, s = jd % kStages, q = jd % kRaw;
        if (j < KT) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
        else asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        asm volatile("bar.sync 1, 128;\n" ::: "memory");  // everyone's copies of tile jd landed
        const uint8_t* rw = rawW + q * kRawW;
        const uint8_t* rs = rawS + q * kRawS;
        uint8_t* b_tile = sB + s * kBBytes;
#pragma unroll 8
        for (int i = 0; i < 16; ++i) {  // B: 256 rows x 8 chunks of 8 bf16 (one packed word each)
          const int idx = t + i * 128, r = idx >> 3, c = idx & 7;
          const uint32_t word = *reinterpret_cast<const uint32_t*>(rw + r * 32 + c * 4);
          uint32_t o[4];
          dev::dequant8(word, dev::scale_to_bf16x2_folded(rs[r * 4 + (c >> 1)]), o);
          *reinterpret_cast<uint4*>(b_tile + swz(r, c)) = make_uint4(o[0], o[1], o[2], o[3]);
        }
        // Generic-proxy writes (st.shared, cp.async) must be visible to the tensor cores' async proxy.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        mbar_arrive(&full[s]);
      }
    }
  } else {
    // Consumers: warpgroup 1 takes rows 0..63 of the tile, warpgroup 2 rows 64..127.
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    const int wgc = wg - 1;
    for (int kt = 0; kt < KT; ++kt) {
      const int s = kt % kStages;
      mbar_wait(&full[s], (kt / kStages) & 1);
      const uint32_t a_addr = smem_u32(sA + s * kABytes) + wgc * 64 * 128;
      const uint32_t b_addr = smem_u32(sB + s * kBBytes);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)  // 16 bf16 = 32 bytes along the swizzled row
        wgmma_m64n256k16(d, smem_desc(a_addr + kk * 32), smem_desc(b_addr + kk * 32));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // Keep this tile's MMAs in flight; the previous tile's are done, so release its stage.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (kt > 0 && (t & 31) == 0) mbar_arrive(&empty[(kt - 1) % kStages]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    store_c_tile(d, a, m0 + wgc * 64, n0, t);
  }
}

// ---------------------------------------------------------------------------------------------
// v2 (default): the consumers dequantize. Warpgroup 0 only issues copies (cp.async for A, packed W
// and scales) into a 4-stage load ring and hands completion straight to the stage's full barrier
// (cp.async.mbarrier.arrive.noinc), so it runs ahead of the math without waiting. Warpgroups 1 and
// 2 each dequantize half of the B tile (128 of its 256 rows) into a separate 3-stage bf16 ring,
// meet at a named barrier, and issue their wgmmas; the dequantization of tile k+1 runs on the CUDA
// cores while the tensor cores work on tile k (two wgmma groups in flight per warpgroup). The
// dequant work is spread over 8 warps (2 per scheduler) instead of 4 lone producer warps.
constexpr int kV2Load = 4;  // A + packed W + scales ring
constexpr int kV2B = 3;     // dequantized B ring (>= 3: see the hazard note in the consumer loop)
constexpr int kV2LoadBytes = kABytes + kRawW + kRawS;
constexpr int kV2Smem = kV2Load * kV2LoadBytes + kV2B * kBBytes + 2 * kV2Load * 8 + 1024;

template <int DQ_UNROLL>
__global__ void __launch_bounds__(kThreads, 1) mma_wgmma_v2_kernel(Params p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint8_t* sB = smem;                                // kV2B x 32 KB (1024-aligned)
  uint8_t* sL = sB + kV2B * kBBytes;                 // kV2Load x (A 16 KB | W 8 KB | S 1 KB)
  uint64_t* full = reinterpret_cast<uint64_t*>(sL + kV2Load * kV2LoadBytes);
  uint64_t* empty = full + kV2Load;
  auto stA = [&](int s) { return sL + s * kV2LoadBytes; };
  auto stW = [&](int s) { return sL + s * kV2LoadBytes + kABytes; };
  auto stS = [&](int s) { return sL + s * kV2LoadBytes + kABytes + kRawW; };

  const GemmArgs& a = p.a;
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int KT = p.Kpad / BK;

  if (tid == 0) {
    for (int s = 0; s < kV2Load; ++s) {
      mbar_init(&full[s], 128);  // one cp.async-completion arrival per producer thread
      mbar_init(&empty[s], 8);   // one arrival per consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) {
    // The producer needs few registers; hand them to the consumers (128 fp32 accumulators each).
    asm volatile("setmaxnreg.dec.sync.aligned.u32 80;\n" ::: "memory");
    for (int j = 0; j < KT; ++j) {
      const int s = j % kV2Load;
      if (j >= kV2Load) mbar_wait(&empty[s], ((j / kV2Load) - 1) & 1);
      const uint32_t a_base = smem_u32(stA(s));
      cp_async_tile_swizzled<BM>(a_base, a.A, a.M, a.K, m0, j * BK, t);
      const uint32_t w_base = smem_u32(stW(s));
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // W: 256 rows x 2 chunks of 16 bytes
        const int idx = t + i * 128, r = idx >> 1, c = idx & 1;
        cp_async16(w_base + r * 32 + c * 16, p.w + size_t(n0 + r) * (p.Kpad / 2) + j * (BK / 2) + c * 16, true);
      }
      const uint32_t s_base = smem_u32(stS(s));
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // scales: 256 rows x 4 bytes
        const int r = t + i * 128;
        cp_async4(s_base + r * 4, p.s + size_t(n0 + r) * (p.Kpad / 16) + j * (BK / 16));
      }
      cp_async_mbar_arrive(&full[s]);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 208;\n" ::: "memory");
    const int wgc = wg - 1;
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;

    // Wait for tile kt's copies, dequantize this warpgroup's 128 rows of its B tile.
    auto dequant = [&](int kt) {
      const int s = kt % kV2Load;
      mbar_wait(&full[s], (kt / kV2Load) & 1);
      const uint8_t* rw = stW(s);
      const uint8_t* rs = stS(s);
      uint8_t* b_tile = sB + (kt % kV2B) * kBBytes;
#pragma unroll DQ_UNROLL
      for (int i = 0; i < 8; ++i) {  // 128 rows x 8 chunks of 8 bf16 (one packed word each)
        const int idx = t + i * 128, r = wgc * 128 + (idx >> 3), c = idx & 7;
        const uint32_t word = *reinterpret_cast<const uint32_t*>(rw + r * 32 + c * 4);
        uint32_t o[4];
        dev::dequant8_v2(word, dev::scale_to_bf16x2_folded(rs[r * 4 + (c >> 1)]), o);
        *reinterpret_cast<uint4*>(b_tile + swz(r, c)) = make_uint4(o[0], o[1], o[2], o[3]);
      }
      // Our st.shared (and the producer's cp.async data, observed through the barrier) must be
      // visible to the tensor cores' async proxy.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    };
    auto issue = [&](int kt) {
      const uint32_t a_addr = smem_u32(stA(kt % kV2Load)) + wgc * 64 * 128;
      const uint32_t b_addr = smem_u32(sB + (kt % kV2B) * kBBytes);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        wgmma_m64n256k16(d, smem_desc(a_addr + kk * 32), smem_desc(b_addr + kk * 32));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    };

    dequant(0);
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    issue(0);
    // B-ring hazard: dequant(kt+1) overwrites the B stage of tile kt-2. This warpgroup's wgmma(kt-1)
    // finished at the end of iteration kt-1; the other warpgroup had finished its wgmma(kt-2) before
    // it reached the named barrier of iteration kt-1, which we passed. Hence kV2B >= 3.
    for (int kt = 0; kt < KT; ++kt) {
      if (kt + 1 < KT) {
        dequant(kt + 1);
        asm volatile("bar.sync 1, 256;\n" ::: "memory");
        issue(kt + 1);
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      } else {
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      }
      if ((t & 31) == 0) mbar_arrive(&empty[kt % kV2Load]);  // wgmma(kt) done: A/W/S stage free
    }

    store_c_tile(d, a, m0 + wgc * 64, n0, t);
  }
}

class MmaWgmmaBackend final : public Backend {
 public:
  MmaWgmmaBackend() {
    // GK_WGMMA_IMPL selects an earlier kernel for same-run comparisons: v2 (consumers dequantize
    // into shared memory, dequant loop fully unrolled), v2u4 (the same, unrolled 4), v1 (one
    // producer warpgroup dequantizes). Default: v3, mma_wgmma_rs.cu.
    const char* e = std::getenv("GK_WGMMA_IMPL");
    impl_ = e ? std::string(e) : "v3";
    if (impl_ != "v1" && impl_ != "v2" && impl_ != "v2u4" && impl_ != "v3n256") impl_ = "v3";
  }
  std::string variant() const override { return "wgmma"; }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, mma_wgmma_kernel);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, mma_wgmma_v2_kernel<4>);
    if (e == cudaSuccess) e = WgmmaRs::probe();
    return e != cudaSuccess ? e : repack_probe();
  }
  std::string check_shape(int M, int N, int K) const override {
    return (M + BM - 1) / BM > 65535 ? "mma: M too large for the grid" : "";
  }
  void prepare(const GemmArgs& a) override {
    if (impl_ == "v3" || impl_ == "v3n256") return rs_.prepare(a, impl_ == "v3" ? 2 : 1);
    CUDA_CHECK(cudaFuncSetAttribute(mma_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CUDA_CHECK(cudaFuncSetAttribute(mma_wgmma_v2_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, kV2Smem));
    CUDA_CHECK(cudaFuncSetAttribute(mma_wgmma_v2_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, kV2Smem));
    repack_for_mma(a, BN, BK, w_, /*v2_bits=*/impl_ != "v1");
  }
  void run(const GemmArgs& a) override {
    if (impl_ == "v3" || impl_ == "v3n256") return rs_.run(a);
    const Params p{a, w_.w, w_.s, w_.Kpad};
    const dim3 grid(w_.Npad / BN, (a.M + BM - 1) / BM);
    if (impl_ == "v1") mma_wgmma_kernel<<<grid, kThreads, kSmem, a.stream>>>(p);
    else if (impl_ == "v2") mma_wgmma_v2_kernel<8><<<grid, kThreads, kV2Smem, a.stream>>>(p);
    else mma_wgmma_v2_kernel<4><<<grid, kThreads, kV2Smem, a.stream>>>(p);
    CUDA_CHECK_LAUNCH();
  }

 private:
  RepackedWeights w_;
  WgmmaRs rs_;
  std::string impl_;
};
}  // namespace

std::unique_ptr<Backend> make_mma_wgmma_backend() { return std::make_unique<MmaWgmmaBackend>(); }
}  // namespace gauntlet::kernels
