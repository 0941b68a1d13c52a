// gemv v4, see gemv_wgmma.cuh.
//
// Work: the weights are cut into groups of G = 8*MB 16-row tiles (128*MB rows); a group's 128-wide
// K steps are the work items, numbered group-major. CTA i takes items [i*T/grid, (i+1)*T/grid): a
// contiguous run that may start or end inside a group (stream-K), so every CTA moves the same
// bytes whatever N is. Two consumer warpgroups own a group's rows (MB 64-row blocks each, one
// 16-row tile per warp and block); the producer warp streams one item per ring stage: the group's
// weights of that step (one bulk copy: contiguous in the repack) and the NB activation rows' 128 K
// values (cp.async into wgmma's 128-byte-swizzled K-major layout; rows >= M, K past the end zeros).
// Per item a consumer warp reads its tile's 1152 bytes (two 16-byte and one broadcast 16-byte
// load per lane), dequantizes them straight into the wgmma A fragments of the step's eight k16
// blocks and issues eight wgmma m64nNBk16 (B = the activations in shared memory), in two halves
// pipelined against each other (see the consumer loop); a stage is freed once both halves are
// done. At the end of its run inside a group a CTA that covered the whole group stores
// C; otherwise it adds its partial sums into an fp32 workspace (red.add) and counts its steps on
// the group's counter, and the CTA that completes the count stores C from the workspace and
// zeroes both for the next launch. No CTA ever waits for another.
//
// Why it was tried (against v3's mma.sync): each v3 warp loads all 16 activation rows from shared
// memory per step and issues 16 mma.sync; here the tensor cores read the activations once per
// warpgroup and one wgmma replaces 2-4 mma.sync plus their operand loads. Measured on the H200 it
// is slower than v3 at M=1 and M=16 (docs/BENCHMARKS.md, fourth round): the natural K order that
// wgmma's B layout forces costs 16 scale splats per lane-step against v3's 4, each wgmma takes its
// descriptor through uniform registers, and the warpgroup waits on its wgmmas. Opt-in only.
//
// Repack, per tile and K step, 1152 bytes ([group][step][tile of the group]):
//  [0, 1024): lane L (g = L/4, t = L%4), word kk (0..7) at 16L + 4kk (kk < 4) or 512 + 16L + 4(kk-4):
//    rows {g, g+8} x k {2t, 2t+1, 2t+8, 2t+9} of k16 block kk in dev::pack8_v2's bit layout, which
//    dequantizes to exactly the four A fragment registers of that block.
//  [1024, 1152): 16 bytes per g (0..7): for kk = 0..7, the E5M3 codes of rows g and g+8, block kk.
// Every k16 block is one scale block, so each fragment register has one scale. Negative scales are
// made positive by flipping their 16 weights' signs and zero scales zero their weights: exact.
#include "cuda_check.hpp"
#include "gemv_wgmma.cuh"
#include "nvfp4_device.cuh"
#include "sm90_async.cuh"
#include "wgmma.cuh"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace gauntlet::kernels {
namespace {
using namespace dev;

constexpr int kStepBytes = 1152;
constexpr int kConsumers = 256;            // two warpgroups
constexpr int kThreads = kConsumers + 32;  // and the producer warp

// Stage: the activation tile first (NB rows x 128 K bf16: two 64-wide swizzle-atom columns), then
// the group's weights. Both sizes are multiples of 1024, so every activation tile is atom-aligned.
template <int NB>
__host__ __device__ constexpr int act_bytes() { return NB * 256; }
template <int NB, int MB>
__host__ __device__ constexpr int stage_bytes() { return act_bytes<NB>() + 8 * MB * kStepBytes; }
template <int NB, int MB, int S>
__host__ __device__ constexpr int smem_bytes() { return 1024 + S * stage_bytes<NB, MB>() + 2 * S * 8 + 16; }

struct Params {
  GemmArgs a;
  const uint8_t* pk;
  float* ws;
  unsigned* cnt;
  int steps;
  long long total;  // groups * steps
  uint32_t sixteen;  // 16 (see dev::e5m3_splat)
};

__device__ __forceinline__ uint4 lds128(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

// One warp's share of an item as it sits in shared memory (per 64-row block b): its 8 weight words
// and the 16 scale codes of its rows.
template <int MB>
struct Raw {
  uint4 w0[MB], w1[MB], sc[MB];
};

// Half an item's weight fragments, dequantized: [block][k16 block of the half][A register].
template <int MB>
struct Frag {
  uint32_t r[MB][4][4];
};

template <int MB>
__device__ __forceinline__ void load_raw(Raw<MB>& raw, uint32_t weights, int lane) {
#pragma unroll
  for (int b = 0; b < MB; ++b) {
    const uint32_t w = weights + b * 4 * kStepBytes;
    raw.w0[b] = lds128(w + lane * 16);
    raw.w1[b] = lds128(w + 512 + lane * 16);
    raw.sc[b] = lds128(w + 1024 + (lane / 4) * 16);
  }
}

// Dequantizes k16 blocks 4*half .. 4*half+3 of the item in `raw`.
template <int MB>
__device__ __forceinline__ void dequant(const Raw<MB>& raw, Frag<MB>& f, int half, uint32_t sixteen) {
#pragma unroll
  for (int b = 0; b < MB; ++b) {
    const uint4 w = half ? raw.w1[b] : raw.w0[b];
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    const uint32_t codes[2] = {half ? raw.sc[b].z : raw.sc[b].x, half ? raw.sc[b].w : raw.sc[b].y};
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint32_t c = codes[kk / 2];  // bytes: rows g, g+8 of block 2j, then of block 2j+1
      uint32_t o[4];  // (g: 2t,2t+1), (g: 2t+8,2t+9), (g+8: 2t,2t+1), (g+8: 2t+8,2t+9)
      dequant8_v2_rows(words[kk], e5m3_splat(c, 2 * (kk & 1), sixteen), e5m3_splat(c, 2 * (kk & 1) + 1, sixteen), o);
      f.r[b][kk][0] = o[0];
      f.r[b][kk][1] = o[2];
      f.r[b][kk][2] = o[1];
      f.r[b][kk][3] = o[3];
      fence_operands(f.r[b][kk]);
    }
  }
}

// Issues the MB x 4 wgmmas of one half item (B: the stage's activation tile, whose descriptor is
// `act`, low word) as one commit group. k16 block kk of block b accumulates into d[b * NA + kk % NA]: NA
// independent chains, because consecutive wgmmas into one accumulator wait for each other.
template <int NB, int MB, int NA>
__device__ __forceinline__ void issue(float (&d)[MB * NA][NB / 2], const Frag<MB>& f, uint32_t act, int half) {
  wgmma_fence();
#pragma unroll
  for (int b = 0; b < MB; ++b)
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_rs_m64nk16<NB>(d[b * NA + kk % NA], f.r[b][kk], act + ((half * (NB * 128) + kk * 32) >> 4));
  wgmma_commit();
}

template <int NB, int MB, int S, int NA>
__global__ void __launch_bounds__(kThreads, 1) __maxnreg__(MB == 1 ? 112 : 224) gemv_wgmma_kernel(Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int G = 8 * MB, kAct = act_bytes<NB>(), kStage = stage_bytes<NB, MB>(), kAcc = NB / 2;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
  uint64_t* empty = full + S;
  int* last_flag = reinterpret_cast<int*>(empty + S);
  const uint32_t smem0 = smem_u32(smem);
  const GemmArgs& a = p.a;
  const int tid = threadIdx.x;
  const long long it0 = p.total * blockIdx.x / gridDim.x, it1 = p.total * (blockIdx.x + 1) / gridDim.x;
  const int n = int(it1 - it0);  // items of this CTA
  const int step0 = int(it0 % p.steps);
  const int group0 = int(it0 / p.steps);

  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 33);  // the producer lanes' cp.async arrivals + lane 0's expect_tx
      mbar_init(&empty[s], kConsumers / 32);
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (tid >= kConsumers) {  // producer warp
    const int lane = tid - kConsumers;
    const uint8_t* src = p.pk + size_t(it0) * G * kStepBytes;
    int k0 = step0 * 128;
    for (int j = 0; j < n; ++j) {
      const int s = j % S;
      if (j >= S) mbar_wait(&empty[s], ((j / S) - 1) & 1);
      uint8_t* stage = smem + s * kStage;
      if (lane == 0) {
        mbar_arrive_expect_tx(&full[s], G * kStepBytes);
        bulk_g2s(stage + kAct, src, G * kStepBytes, &full[s]);
      }
      const uint32_t act = smem0 + s * kStage;
      cp_async_tile_swizzled<NB, 32>(act, a.A, a.M, a.K, 0, k0, lane);
      cp_async_tile_swizzled<NB, 32>(act + NB * 128, a.A, a.M, a.K, 0, k0 + 64, lane);
      cp_async_mbar_arrive(&full[s]);
      src += G * kStepBytes;
      k0 = k0 + 128 == p.steps * 128 ? 0 : k0 + 128;
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    return;
  }

  const int wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
  const float alpha = a.global_scale * kDequantFold;
  const uint32_t desc0 = smem_desc_lo(smem0);
  const uint32_t wofs = kAct + (wg * MB * 4 + warp) * kStepBytes;  // this warp's tile in a stage
  float d[MB * NA][kAcc];
  auto zero_acc = [&] {
#pragma unroll
    for (int b = 0; b < MB * NA; ++b) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) d[b][i] = 0.0f;
      fence_operands(d[b]);
    }
  };
  // Element (b, i) of this thread's accumulators: row in the group, activation row m.
  auto row_of = [&](int b, int i) { return (wg * MB + b) * 64 + warp * 16 + g + 8 * ((i % 4) / 2); };
  auto m_of = [&](int i) { return 8 * (i / 4) + 2 * t + (i % 2); };
  auto store_c = [&](int group, int b, int i, float v) {
    const long long nn = 16LL * G * group + row_of(b, i);
    const int m = m_of(i);
    if (nn < a.N && m < a.M) a.C[size_t(m) * a.N + nn] = __float2bfloat16_rn(v * alpha);
  };
  // The end of this CTA's run in `group`, K steps first..last, with its sums in `sum`.
  auto finish = [&](const float (&sum)[MB][kAcc], int group, int first, int last) {
    if (first == 0 && last == p.steps - 1) {
#pragma unroll
      for (int b = 0; b < MB; ++b)
#pragma unroll
        for (int i = 0; i < kAcc; ++i) store_c(group, b, i, sum[b][i]);
      return;
    }
    float* ws = p.ws + size_t(group) * (16 * G * NB);
#pragma unroll
    for (int b = 0; b < MB; ++b)
#pragma unroll
      for (int i = 0; i < kAcc; ++i) atomicAdd(ws + row_of(b, i) * NB + m_of(i), sum[b][i]);
    __threadfence();  // the adds are visible before the count that may let another CTA read them
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
    if (tid == 0) {
      const unsigned mine = unsigned(last - first + 1);
      *last_flag = atomicAdd(p.cnt + group, mine) + mine == unsigned(p.steps);
    }
    asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers) : "memory");
    if (*last_flag) {
      __threadfence();
#pragma unroll
      for (int b = 0; b < MB; ++b)
#pragma unroll
        for (int i = 0; i < kAcc; ++i) {
          float* q = ws + row_of(b, i) * NB + m_of(i);
          store_c(group, b, i, __ldcg(q));
          __stcg(q, 0.0f);
        }
      if (tid == 0) p.cnt[group] = 0;
    }
  };
  zero_acc();

  // Software pipeline over half items (k16 blocks 0-3 in fragment set f0, 4-7 in f1): each half's
  // wgmmas run while the other half is dequantized, and a stage is freed once both its halves are
  // done. The wgmma waits sit on paths every thread of the warpgroup takes (ptxas serializes the
  // wgmmas otherwise), so the last item's next-item work is done on stale data rather than skipped,
  // and the sums leave the accumulators only after the pipeline has drained, at the end of a run.
  Raw<MB> raw;
  Frag<MB> f0, f1;
  if (n > 0) {
    mbar_wait(&full[0], 0);
    load_raw(raw, smem0 + wofs, lane);
    dequant(raw, f0, 0, p.sixteen);
  }
  int j = 0, group = group0, first = step0;
  int s = 0, phase = 0, prev = 0;  // item j's stage and its full barrier's phase; item j-1's stage
  while (j < n) {
    const int len = min(n - j, p.steps - first);  // this run's items in `group`
    for (int e = 0; e < len; ++e, ++j) {
      const uint32_t act = desc0 + s * (kStage >> 4);
      issue<NB, MB, NA>(d, f0, act, 0);
      wgmma_wait<1>();  // the previous item is done: f1 and its stage are free
      __syncwarp();
      if (lane == 0 && e > 0) mbar_arrive(&empty[prev]);
      dequant(raw, f1, 1, p.sixteen);
      issue<NB, MB, NA>(d, f1, act, 1);
      prev = s;
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
      if (j + 1 < n) mbar_wait(&full[s], phase);
      load_raw(raw, smem0 + s * kStage + wofs, lane);
      wgmma_wait<1>();  // this item's first half is done: f0 is free
      dequant(raw, f0, 0, p.sixteen);
    }
    wgmma_wait<0>();
    float sum[MB][kAcc] = {};
#pragma unroll
    for (int b = 0; b < MB; ++b)
#pragma unroll
      for (int c = 0; c < NA; ++c) {
        fence_operands(d[b * NA + c]);
#pragma unroll
        for (int i = 0; i < kAcc; ++i) sum[b][i] += d[b * NA + c][i];
      }
    zero_acc();
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[prev]);
    finish(sum, group, first, first + len - 1);
    ++group;
    first = 0;
  }
#endif
}

__global__ void repack_gemv_wgmma_kernel(const uint8_t* w, const uint8_t* s, nvfp4::ScaleLayout layout, int N, int K,
                                         uint32_t* out, long long words, int steps, int G) {
  const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;  // one output word
  if (idx >= words) return;
  const int wi = int(idx % (kStepBytes / 4));
  const long long chunk = idx / (kStepBytes / 4);  // (group * steps + step) * G + tile in group
  const int step = int(chunk / G % steps);
  const long long tile = chunk / G / steps * G + chunk % G;
  uint32_t o = 0;
  if (wi < 256) {
    const int lane = (wi % 128) / 4, kk = 4 * (wi / 128) + wi % 4, g = lane / 4, t = lane % 4;
    constexpr int kDk[4] = {0, 1, 8, 9};
    uint32_t natural = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int n = int(tile * 16) + g + 8 * (e / 4);
      const uint32_t v = nvfp4::e2m1_at(w, n, step * 128 + kk * 16 + 2 * t + kDk[e % 4], N, K);
      natural |= nvfp4::fold_scale_sign(v, nvfp4::scale_at(s, layout, n, step * 8 + kk, N, K), 0xFu) << (4 * e);
    }
    o = pack8_v2(natural);
  } else {
    const int g = (wi - 256) / 4, j = (wi - 256) % 4;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int n = int(tile * 16) + g + 8 * (b % 2);
      o |= nvfp4::e5m3_from_e4m3(nvfp4::scale_at(s, layout, n, step * 8 + 2 * j + b / 2, N, K)) << (8 * b);
    }
  }
  out[idx] = o;
}

template <int NB, int MB, int S, int NA>
struct Config {
  static auto kernel() { return gemv_wgmma_kernel<NB, MB, S, NA>; }
  static constexpr int smem = smem_bytes<NB, MB, S>();
};

// Calls f(kernel, smem bytes) for the instantiation that serves (nb, mb, stages, chains); the
// defaults are 6 stages and 2 accumulator chains; GK_GEMV_STAGES=4|8 and GK_GEMV_ACC=1|4 pick
// others for MB 1 (benchmarking).
template <int NB, class F>
void with_kernel_nb(int mb, int stages, int na, F&& f) {
  if (mb == 2) return f(Config<NB, 2, 4, 2>::kernel(), Config<NB, 2, 4, 2>::smem);
  if (na == 1) return f(Config<NB, 1, 6, 1>::kernel(), Config<NB, 1, 6, 1>::smem);
  if (na == 4) return f(Config<NB, 1, 6, 4>::kernel(), Config<NB, 1, 6, 4>::smem);
  if (stages == 4) return f(Config<NB, 1, 4, 2>::kernel(), Config<NB, 1, 4, 2>::smem);
  if (stages == 8) return f(Config<NB, 1, 8, 2>::kernel(), Config<NB, 1, 8, 2>::smem);
  return f(Config<NB, 1, 6, 2>::kernel(), Config<NB, 1, 6, 2>::smem);
}
template <class F>
void with_kernel(int nb, int mb, int stages, int na, F&& f) {
  if (nb == 8) return with_kernel_nb<8>(mb, stages, na, f);
  return with_kernel_nb<16>(mb, stages, na, f);
}

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e ? std::atoi(e) : fallback;
}

}  // namespace

GemvWgmma::~GemvWgmma() {
  if (pk_) cudaFree(pk_);
  if (ws_) cudaFree(ws_);
  if (cnt_) cudaFree(cnt_);
}

cudaError_t GemvWgmma::probe() {
  cudaFuncAttributes attr;
  const cudaError_t e = cudaFuncGetAttributes(&attr, gemv_wgmma_kernel<16, 1, 6, 2>);
  return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, repack_gemv_wgmma_kernel);
}

void GemvWgmma::prepare(const GemmArgs& a, int mb, int ctas_per_sm) {
  for (void* q : {static_cast<void*>(pk_), static_cast<void*>(ws_), static_cast<void*>(cnt_)})
    if (q) CUDA_CHECK(cudaFree(q));
  pk_ = nullptr;
  ws_ = nullptr;
  cnt_ = nullptr;
  nb_ = a.M <= 8 ? 8 : 16;
  mb_ = env_int("GK_GEMV_MB", mb) == 2 ? 2 : 1;
  stages_ = env_int("GK_GEMV_STAGES", 0);
  na_ = env_int("GK_GEMV_ACC", 2);
  const int G = 8 * mb_;
  groups_ = (a.N + 16 * G - 1) / (16 * G);
  steps_ = (a.K + 127) / 128;
  const long long words = (long long)groups_ * steps_ * G * (kStepBytes / 4);
  CUDA_CHECK(cudaMalloc(&pk_, size_t(words) * 4));
  CUDA_CHECK(cudaMalloc(&ws_, size_t(groups_) * 16 * G * nb_ * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&cnt_, size_t(groups_) * sizeof(unsigned)));
  CUDA_CHECK(cudaMemsetAsync(ws_, 0, size_t(groups_) * 16 * G * nb_ * sizeof(float), a.stream));
  CUDA_CHECK(cudaMemsetAsync(cnt_, 0, size_t(groups_) * sizeof(unsigned), a.stream));
  repack_gemv_wgmma_kernel<<<unsigned((words + 255) / 256), 256, 0, a.stream>>>(
      a.Wq, a.Ws, a.layout, a.N, a.K, reinterpret_cast<uint32_t*>(pk_), words, steps_, G);
  CUDA_CHECK_LAUNCH();

  int dev = 0, sms = 0, fit = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  with_kernel(nb_, mb_, stages_, na_, [&](auto kernel, int smem) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, smem));
  });
  const int per_sm = std::clamp(env_int("GK_GEMV_CTAS", ctas_per_sm), 0, fit);
  grid_ = int(std::min<long long>(1LL * sms * (per_sm > 0 ? per_sm : std::max(fit, 1)), 1LL * groups_ * steps_));
}

void GemvWgmma::run(const GemmArgs& a) const {
  const Params p{a, pk_, ws_, cnt_, steps_, 1LL * groups_ * steps_, 16u};
  with_kernel(nb_, mb_, stages_, na_, [&](auto kernel, int smem) {
    kernel<<<grid_, kThreads, smem, a.stream>>>(p);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace gauntlet::kernels
