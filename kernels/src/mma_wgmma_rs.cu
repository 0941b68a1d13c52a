// wgmma v3 ("RS"), see mma_wgmma_rs.cuh. One CTA computes C[m0..m0+256, n0..n0+128] as the
// transposed product: 128 weight rows are wgmma's M (two consumer warpgroups, 64 rows each), 256
// activation rows its N.
//
// Why: in v2 the consumers wrote every dequantized weight to shared memory and the tensor cores
// read it back (shared memory was the busiest unit, at 62% of cuBLAS). Here each consumer thread
// reads its packed weights (16 bytes per 64-wide K step) and the matching scales from shared
// memory, dequantizes them straight into the wgmma A fragment (the mma.m16n8k16 layout per warp)
// and issues wgmma m64n256k16 with A from registers, so shared memory carries only the activations
// (read by the tensor cores) and 1/8 as many weight bytes.
//
// Weight repack (one time, like loading a checkpoint): chunk (tile, kt) = 128 weight rows x 64 K
// is 5120 contiguous bytes, copied by one bulk copy: [0, 4096) for 16-row group w (0..7), lane L
// (g = L/4, t = L%4), word kk (0..3): the 8 elements rows {g, g+8} x k {2t, 2t+1, 2t+8, 2t+9} of
// K block kk, in dev::pack8_v2's bit layout (the fragment order); [4096, 5120) per group w, row r
// (0..15): four bf16 (K blocks 0..3), each the folded scale of dev::scale_to_bf16x2_folded.
#include "cuda_check.hpp"
#include "mma_wgmma_rs.cuh"
#include "nvfp4_device.cuh"
#include "sm90_async.cuh"
#include "wgmma.cuh"

namespace gauntlet::kernels {
namespace {
using namespace dev;

constexpr int kTileN = 128, kTileM = 256, kBK = 64;
// Ring depth: as many stages as shared memory holds (MB 1: 37 KB each, MB 2: 26 KB each).
__host__ __device__ constexpr int stages_for(int mb) { return mb == 1 ? 5 : 8; }
constexpr int kThreads = 384;
constexpr int kWBytes = 4096, kChunk = 5120;        // packed weights, + scales

struct Params {
  GemmArgs a;
  const uint8_t* pk;
  int kt;  // 64-wide K steps (K padded to 64 in the repack)
};

__global__ void repack_rs_kernel(const uint8_t* w, const uint8_t* s, nvfp4::ScaleLayout layout, int N, int K,
                                 uint32_t* out, int ntiles, int kt) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // one output word
  if (idx >= size_t(ntiles) * kt * (kChunk / 4)) return;
  const int wi = int(idx % (kChunk / 4));
  const size_t chunk = idx / (kChunk / 4);
  const int step = int(chunk % kt), tile = int(chunk / kt);
  uint32_t o = 0;
  if (wi < kWBytes / 4) {
    const int grp = wi / 128, lane = (wi % 128) / 4, kk = wi % 4;
    const int n = tile * kTileN + grp * 16 + lane / 4, k0 = step * kBK + kk * 16 + 2 * (lane % 4);
    constexpr int kDk[4] = {0, 1, 8, 9};
    uint32_t natural = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int ne = n + 8 * (e / 4), ke = k0 + kDk[e % 4];
      const uint32_t v = nvfp4::e2m1_at(w, ne, ke, N, K);
      natural |= nvfp4::fold_scale_sign(v, nvfp4::scale_at(s, layout, ne, ke / nvfp4::kBlock, N, K), 0xFu) << (4 * e);
    }
    o = pack8_v2(natural);
  } else {
    const int sw = wi - kWBytes / 4, grp = sw / 32, r = (sw % 32) / 2, half = sw % 2;
    const int n = tile * kTileN + grp * 16 + r;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = step * 4 + 2 * half + h;
      o |= (bf16x2_as_bits(scale_to_bf16x2_folded(nvfp4::scale_at(s, layout, n, c, N, K))) & 0xFFFFu) << (16 * h);
    }
  }
  out[idx] = o;
}

template <int N>
struct RsMma;
template <>
struct RsMma<256> {
  static __device__ __forceinline__ void run(float (&d)[128], const uint32_t (&a)[4], uint64_t db) {
    wgmma_rs_m64n256k16(d, a, db);
  }
};
template <>
struct RsMma<128> {
  static __device__ __forceinline__ void run(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    wgmma_rs_m64n128k16(d, a, db);
  }
};

// MB = 64-row weight blocks per consumer warpgroup. MB 1: CTA tile 128 weight rows x 256
// activation rows (wgmma n256); MB 2: 256 x 128 (n128), which moves 26 KB per 64-wide K step from
// L2 instead of 37 KB for the same math (the activations dominate), at twice the dequant work.
template <int MB>
__global__ void __launch_bounds__(kThreads, 1) mma_wgmma_rs_kernel(Params p) {
  constexpr int kTileW = kTileN * MB, kTileA = kTileM / MB, kAct = kTileA * kBK * 2, kW = kChunk * MB;
  constexpr int kAcc = 128 / MB, S = stages_for(MB);
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint8_t* sAct = smem;                           // S x kAct (1024-aligned for the swizzle)
  uint8_t* sW = sAct + S * kAct;            // S x kW
  uint64_t* full = reinterpret_cast<uint64_t*>(sW + S * kW);
  uint64_t* empty = full + S;

  const GemmArgs& a = p.a;
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int n0 = blockIdx.x * kTileW, m0 = blockIdx.y * kTileA;
  const int KT = p.kt;

  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 129);  // 128 cp.async arrivals + the bulk copies' expect_tx arrival
      mbar_init(&empty[s], 8);   // one arrival per consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    for (int j = 0; j < KT; ++j) {
      const int s = j % S;
      if (j >= S) mbar_wait(&empty[s], ((j / S) - 1) & 1);
      if (t == 0) {
        mbar_arrive_expect_tx(&full[s], kW);
#pragma unroll
        for (int b = 0; b < MB; ++b)  // the 128-row tiles' chunks are KT chunks apart in the repack
          bulk_g2s(sW + s * kW + b * kChunk, p.pk + (size_t(blockIdx.x * MB + b) * KT + j) * kChunk, kChunk, &full[s]);
      }
      cp_async_tile_swizzled<kTileA>(smem_u32(sAct + s * kAct), a.A, a.M, a.K, m0, j * kBK, t);
      cp_async_mbar_arrive(&full[s]);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const int wgc = wg - 1, warp = t / 32, lane = t % 32, g = lane / 4;
  // Block b of this warpgroup: chunk ch (a 128-row tile of the CTA), 16-row group grp(b) in it.
  auto chunk_of = [&](int b) { return MB == 1 ? 0 : wgc; };
  auto group_of = [&](int b) { return MB == 1 ? wgc * 4 + warp : b * 4 + warp; };
  float d[MB][kAcc];
#pragma unroll
  for (int b = 0; b < MB; ++b) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) d[b][i] = 0.0f;
    fence_operands(d[b]);
  }
  uint32_t frag[MB][4][4];  // the A operand: [block][K block][fragment register]

  // Step kt: wait for its stage, dequantize this warp's weights of every block into `frag`, run
  // the wgmmas to completion and free the stage. Why not keep a step in flight: defining A
  // registers while any wgmma is in flight makes ptxas serialize the wgmmas (C7513). The two
  // consumer warpgroups drift out of phase instead (one dequantizes while the other's wgmmas run).
  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % S;
    mbar_wait(&full[s], (kt / S) & 1);
#pragma unroll
    for (int b = 0; b < MB; ++b) {
      const uint8_t* ws = sW + s * kW + chunk_of(b) * kChunk;
      const int grp = group_of(b);
      const uint4 wv = *reinterpret_cast<const uint4*>(ws + grp * 512 + lane * 16);
      const uint2 slo = *reinterpret_cast<const uint2*>(ws + kWBytes + grp * 128 + g * 8);
      const uint2 shi = *reinterpret_cast<const uint2*>(ws + kWBytes + grp * 128 + (g + 8) * 8);
      const uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint32_t lo2 = kk < 2 ? slo.x : slo.y, hi2 = kk < 2 ? shi.x : shi.y;
        uint32_t o[4];  // elements (g: 2t,2t+1), (g: 2t+8,2t+9), (g+8: 2t,2t+1), (g+8: 2t+8,2t+9)
        dequant8_v2_rows(words[kk], splat_bf16(lo2, kk & 1), splat_bf16(hi2, kk & 1), o);
        frag[b][kk][0] = o[0];
        frag[b][kk][1] = o[2];
        frag[b][kk][2] = o[1];
        frag[b][kk][3] = o[3];
        fence_operands(frag[b][kk]);
      }
    }
    const uint32_t act = smem_u32(sAct + s * kAct);
    wgmma_fence();
#pragma unroll
    for (int b = 0; b < MB; ++b)
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) RsMma<kTileA>::run(d[b], frag[b][kk], smem_desc(act + kk * 32));
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int b = 0; b < MB; ++b) fence_operands(d[b]);
    if (lane == 0) mbar_arrive(&empty[s]);
  }

  // d[b][4j+e]: weight row g + 8*(e/2) of the warp's 16 in block b, activation row 8j + 2t + e%2.
  // Lanes g and g^1 swap one value so each stores two adjacent weight columns of one activation row.
  const float alpha = a.global_scale * kDequantFold;
  const bool odd = g & 1, paired = (a.N % 2) == 0;
  const int t4 = lane % 4;
#pragma unroll
  for (int b = 0; b < MB; ++b) {
    const int nb = n0 + chunk_of(b) * kTileN + group_of(b) * 16 + g;
#pragma unroll
    for (int j = 0; j < kTileA / 8; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int n = nb + 8 * h, m = m0 + 8 * j + 2 * t4;
        const float v0 = d[b][4 * j + 2 * h] * alpha, v1 = d[b][4 * j + 2 * h + 1] * alpha;
        const float x = __shfl_xor_sync(0xFFFFFFFFu, odd ? v0 : v1, 4);
        if (paired) {
          const int mm = odd ? m + 1 : m, nn = odd ? n - 1 : n;
          if (mm < a.M && nn < a.N)
            *reinterpret_cast<__nv_bfloat162*>(a.C + size_t(mm) * a.N + nn) =
                odd ? __floats2bfloat162_rn(x, v1) : __floats2bfloat162_rn(v0, x);
        } else if (n < a.N) {
          if (m < a.M) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(v0);
          if (m + 1 < a.M) a.C[size_t(m + 1) * a.N + n] = __float2bfloat16_rn(v1);
        }
      }
    }
  }
}

template <int MB>
constexpr int smem_bytes() {
  return stages_for(MB) * (kTileM / MB * kBK * 2 + kChunk * MB) + 2 * stages_for(MB) * 8 + 1024;
}

}  // namespace

WgmmaRs::~WgmmaRs() {
  if (pk_) cudaFree(pk_);
}

cudaError_t WgmmaRs::probe() {
  cudaFuncAttributes attr;
  const cudaError_t e = cudaFuncGetAttributes(&attr, mma_wgmma_rs_kernel<1>);
  return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, repack_rs_kernel);
}

void WgmmaRs::prepare(const GemmArgs& a, int mb) {
  mb_ = mb == 2 ? 2 : 1;
  CUDA_CHECK(cudaFuncSetAttribute(mma_wgmma_rs_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<1>()));
  CUDA_CHECK(cudaFuncSetAttribute(mma_wgmma_rs_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<2>()));
  if (pk_) CUDA_CHECK(cudaFree(pk_));
  pk_ = nullptr;
  ntiles_ = (a.N + 2 * kTileN - 1) / (2 * kTileN) * 2;  // even: MB 2 reads tiles in pairs (zeros past N)
  kt_ = (a.K + kBK - 1) / kBK;
  const size_t bytes = size_t(ntiles_) * kt_ * kChunk;
  CUDA_CHECK(cudaMalloc(&pk_, bytes));
  repack_rs_kernel<<<unsigned((bytes / 4 + 255) / 256), 256, 0, a.stream>>>(
      a.Wq, a.Ws, a.layout, a.N, a.K, reinterpret_cast<uint32_t*>(pk_), ntiles_, kt_);
  CUDA_CHECK_LAUNCH();
}

void WgmmaRs::run(const GemmArgs& a) const {
  const Params p{a, pk_, kt_};
  if (mb_ == 2)
    mma_wgmma_rs_kernel<2><<<dim3(ntiles_ / 2, (a.M + kTileM / 2 - 1) / (kTileM / 2)), kThreads, smem_bytes<2>(), a.stream>>>(p);
  else
    mma_wgmma_rs_kernel<1><<<dim3(ntiles_, (a.M + kTileM - 1) / kTileM), kThreads, smem_bytes<1>(), a.stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gauntlet::kernels
