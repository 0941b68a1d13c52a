// gemv v3, see gemv_bulk.cuh. One CTA owns a group of 8 weight tiles (128 rows) over all of K:
// one producer warp and 8 consumer warps (one tile each). Per 128-wide K step the producer issues
// bulk copies of the 8 tiles' 1152-byte step blocks and of the step's activation rows into one
// ring stage and signals its full barrier with the byte count; the consumers read their weights,
// scales and the shared activations from shared memory, free the stage at once (everything is in
// registers by then), dequantize and feed mma.sync m16n8k16 exactly as v2 does (weights as the
// 16-row A operand; see backend_gemv.cu for the K order inside a step).
//
// Why: v2 kept its loads in flight in registers, which capped the bytes in flight per SM and spent
// issue slots on address math and LDGs; here the copy engine keeps up to `stages` x 13.5 KB in
// flight per CTA (two CTAs per SM) whatever the consumers are doing, and the 16 activation rows
// are fetched once per CTA instead of once per warp.
#include "cuda_check.hpp"
#include "gemv_bulk.cuh"
#include "nvfp4_device.cuh"
#include "sm90_async.cuh"

namespace gauntlet::kernels {
namespace {
using namespace dev;

constexpr int kTiles = 8;                       // consumer warps = 16-row tiles per CTA
constexpr int kThreads = (kTiles + 1) * 32;     // + the producer warp
constexpr int kStepBytes = 1152;                // one tile's 128-wide K step (v2 repack)
constexpr int kStageW = kTiles * kStepBytes;    // 9216
constexpr int kRowStride = 256 + 16;            // activation row: 128 bf16, padded against bank conflicts
constexpr int kStageA = 16 * kRowStride;        // 4352
constexpr int kStage = kStageW + kStageA;

struct Params {
  GemmArgs a;
  const uint8_t* pk;
  int ntiles, steps;
};

template <int NT, int S>
__global__ void __launch_bounds__(kThreads, 2) gemv_bulk_kernel(Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
  uint64_t* empty = full + S;
  const GemmArgs& a = p.a;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tile0 = blockIdx.x * kTiles;
  const int nvalid = min(kTiles, p.ntiles - tile0);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 1);       // the producer's expect_tx arrival; bytes complete the phase
      mbar_init(&empty[s], kTiles); // one arrival per consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (warp == kTiles) {  // producer
    for (int st = 0; st < p.steps; ++st) {
      const int s = st % S;
      if (st >= S) mbar_wait(&empty[s], ((st / S) - 1) & 1);
      const int k0 = st * 128;
      const uint32_t abytes = uint32_t(min(128, a.K - k0)) * 2;  // K % 16 == 0: a multiple of 32
      if (lane == 0) mbar_arrive_expect_tx(&full[s], nvalid * kStepBytes + a.M * abytes);
      __syncwarp();
      uint8_t* stage = smem + s * kStage;
      if (lane < nvalid)
        bulk_g2s(stage + lane * kStepBytes, p.pk + (size_t(tile0 + lane) * p.steps + st) * kStepBytes, kStepBytes,
                 &full[s]);
      else if (lane >= kTiles && lane - kTiles < a.M)
        bulk_g2s(stage + kStageW + (lane - kTiles) * kRowStride, a.A + size_t(lane - kTiles) * a.K + k0, abytes,
                 &full[s]);
    }
    return;
  }

  const int g = lane / 4, t = lane % 4;
  const bool valid = warp < nvalid;
  float acc[NT][2][4] = {};
  for (int st = 0; st < p.steps; ++st) {
    const int s = st % S;
    mbar_wait(&full[s], (st / S) & 1);
    const uint8_t* stage = smem + s * kStage;
    const uint8_t* wp = stage + warp * kStepBytes + lane * 16;
    const uint4 w0 = *reinterpret_cast<const uint4*>(wp);
    const uint4 w1 = *reinterpret_cast<const uint4*>(wp + 512);
    const uint32_t sc = *reinterpret_cast<const uint32_t*>(stage + warp * kStepBytes + 1024 + lane * 4);
    // Activation row 8j+g, this lane's 32 elements at k = 32t..32t+31 of the step (16 words).
    uint32_t av[NT][16];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int m = 8 * j + g;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (m < a.M) v = *reinterpret_cast<const uint4*>(stage + kStageW + m * kRowStride + 64 * t + 16 * i);
        av[j][4 * i + 0] = v.x; av[j][4 * i + 1] = v.y; av[j][4 * i + 2] = v.z; av[j][4 * i + 3] = v.w;
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);  // all of this stage is in registers now
    if (!valid) continue;
    const int rem = a.K - st * 128;
    if (rem < 128) {  // last, partial step: the ring holds stale activations past K; weights there are 0
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int i = 0; i < 8; ++i)
          if (32 * t + 4 * i >= rem) av[j][2 * i] = av[j][2 * i + 1] = 0;
    }
    const uint32_t wlo[4] = {w0.x, w0.y, w0.z, w0.w}, whi[4] = {w1.x, w1.y, w1.z, w1.w};
    const __nv_bfloat162 slo0 = scale_to_bf16x2_folded(sc & 0xFF), slo1 = scale_to_bf16x2_folded((sc >> 8) & 0xFF);
    const __nv_bfloat162 shi0 = scale_to_bf16x2_folded((sc >> 16) & 0xFF), shi1 = scale_to_bf16x2_folded(sc >> 24);
#pragma unroll
    for (int q = 0; q < 4; ++q) {  // word q: elements 8q..8q+7 -> mma steps 2q, 2q+1
      uint32_t lo[4], hi[4];
      dequant8_v2(wlo[q], q < 2 ? slo0 : slo1, lo);
      dequant8_v2(whi[q], q < 2 ? shi0 : shi1, hi);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = 2 * q + h;
        const uint32_t af[4] = {lo[2 * h], hi[2 * h], lo[2 * h + 1], hi[2 * h + 1]};
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_bf16_16816(acc[j][h], af, av[j][2 * i], av[j][2 * i + 1]);
      }
    }
  }
  if (!valid) return;
  // C fragment: acc[j][.][0..1] = weight row g, activation rows 8j+2t, +1; [2..3] = row g+8.
  const float alpha = a.global_scale * kDequantFold;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int n = (tile0 + warp) * 16 + g + 8 * (e / 2), m = 8 * j + 2 * t + (e % 2);
      if (n < a.N && m < a.M) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn((acc[j][0][e] + acc[j][1][e]) * alpha);
    }
#endif
}

template <int S>
constexpr int smem_bytes() {
  return S * kStage + 2 * S * 8;
}

template <int NT, int S>
void launch(const Params& p, cudaStream_t st) {
  gemv_bulk_kernel<NT, S><<<(p.ntiles + kTiles - 1) / kTiles, kThreads, smem_bytes<S>(), st>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int NT, int S>
void allow_smem() {
  CUDA_CHECK(cudaFuncSetAttribute(gemv_bulk_kernel<NT, S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem_bytes<S>()));
}

template <int NT>
void dispatch(const Params& p, int stages, cudaStream_t st) {
  if (stages == 4) return launch<NT, 4>(p, st);
  if (stages == 8) return launch<NT, 8>(p, st);
  return launch<NT, 6>(p, st);
}

}  // namespace

bool gemv_bulk_usable(int M, int N, int ntiles, int cc_major, int sms) {
  return cc_major >= 9 && M >= 1 && M <= 16 && (ntiles + kTiles - 1) / kTiles >= sms;
}

void gemv_bulk_prepare() {
  allow_smem<1, 4>(); allow_smem<1, 6>(); allow_smem<1, 8>();
  allow_smem<2, 4>(); allow_smem<2, 6>(); allow_smem<2, 8>();
}

void gemv_bulk_run(const GemmArgs& a, const uint8_t* pk, int ntiles, int steps, int stages) {
  const Params p{a, pk, ntiles, steps};
  if (a.M <= 8) dispatch<1>(p, stages, a.stream);
  else dispatch<2>(p, stages, a.stream);
}

cudaError_t gemv_bulk_probe() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, gemv_bulk_kernel<1, 6>);
}

}  // namespace gauntlet::kernels
