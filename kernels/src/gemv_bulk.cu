// gemv v3, see gemv_bulk.cuh. One CTA owns a group of G weight tiles (16 rows each) over all of K:
// one producer warp and G consumer warps (one tile each). Per stage (KS K steps of 128) the producer
// issues one bulk copy of the group's weight blocks (contiguous in the grouped repack) and one per
// activation row, and signals the stage's full barrier with the byte count; the consumers copy
// their weights, scales and the shared activations from shared memory into registers, free the
// stage at once, dequantize and feed mma.sync m16n8k16 exactly as v2 does (weights as the 16-row
// A operand; see backend_gemv.cu for the K order inside a step).
//
// Why: v2 keeps its loads in flight in registers and spends issue slots on their addresses, and at
// M=16 every warp fetches all activation rows from L2; here the copy engine streams each CTA's rows
// as one contiguous run per stage whatever the consumers are doing, and the activations come to
// each CTA once. G = 14 (one CTA of 15 warps per SM) where that fills the SMs as well as G = 7
// (two CTAs per SM): for N=28672 both make a load of 14 tiles on almost every SM of an H200, and
// one CTA per SM fetches the activations once per SM instead of twice (same call: M=16 2970-2985
// GB/s against 2840-2850, M=1 3470-3513 against 3444-3466). G = 8 leaves SMs half-loaded (224
// CTAs: 3040 instead of 3230 GB/s at M=1).
#include "cuda_check.hpp"
#include "gemv_bulk.cuh"
#include "nvfp4_device.cuh"
#include "sm90_async.cuh"

#include <cstdlib>
#include <string>

namespace gauntlet::kernels {
namespace {
using namespace dev;

constexpr int kStepBytes = 1152;                // one tile's 128-wide K step (v2 repack)
// A CTA owns G tiles (G consumer warps + a producer warp). A stage holds KS consecutive K steps of
// all G tiles, contiguous in the grouped repack. Activation rows are padded by 16 bytes against
// bank conflicts.
__host__ __device__ constexpr int stage_w(int g, int ks) { return g * kStepBytes * ks; }
__host__ __device__ constexpr int row_stride(int ks) { return 256 * ks + 16; }
__host__ __device__ constexpr int stage_bytes(int g, int nt, int ks) { return stage_w(g, ks) + 8 * nt * row_stride(ks); }

// CTAs per SM for a group of g tiles: two CTAs of up to 8 consumer warps, or one larger CTA.
__host__ __device__ constexpr int ctas_per_sm(int g) { return g > 8 ? 1 : 2; }

struct Params {
  GemmArgs a;
  const uint8_t* pk;
  int ntiles, steps;
  uint32_t sixteen;  // 16 (see dev::e5m3_splat)
};

// The K stage (KS steps of 128) a CTA starts at; it then goes round all of K from there. Each CTA
// starting at its own stage means that at any moment the CTAs copy different pieces of the
// activation rows, instead of all of them the same few lines, which all CTAs requested within a
// short time of each other (+1-1.5% at M=16; the sum over K just runs in another order).
__device__ __forceinline__ int first_stage(int stages) { return int(blockIdx.x * stages / gridDim.x); }

// NT: 8-row n-tiles of activations (1 for M <= 8, 2 for M <= 16).
template <int G, int NT, int S, int KS>
__global__ void __launch_bounds__((G + 1) * 32, ctas_per_sm(G)) gemv_bulk_kernel(Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kStage = stage_bytes(G, NT, KS), kStageW = stage_w(G, KS), kRowStride = row_stride(KS);
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + S * kStage);
  uint64_t* empty = full + S;
  const GemmArgs& a = p.a;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Let the next kernel in the stream launch (programmatic dependent launch) as SMs free up:
  // it waits with griddepcontrol.wait before it reads anything this kernel writes.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const int tile0 = blockIdx.x * G;
  const int nvalid = min(G, (a.N - tile0 * 16 + 15) / 16);  // tiles holding rows < N
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 1);       // the producer's expect_tx arrival; bytes complete the phase
      mbar_init(&empty[s], G * 32);  // one arrival per consumer thread
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (warp == G) {  // producer
    // Activation rows M..8*NT-1 are never copied: zero them in every stage once, so the consumers
    // load all rows without a bound check (ordered before their reads by the stages' first arrive).
    for (int s = 0; s < S; ++s)
      for (int i = lane; i < (8 * NT - a.M) * (256 * KS / 16); i += 32) {
        const int m = a.M + i / (256 * KS / 16), c = i % (256 * KS / 16);
        *reinterpret_cast<uint4*>(smem + s * kStage + kStageW + m * kRowStride + 16 * c) = make_uint4(0, 0, 0, 0);
      }
    const int stages = (p.steps + KS - 1) / KS, first = first_stage(stages);
    // Stage sg of this CTA's order (K stage k_stage(sg)): announce its bytes and copy its weights;
    // then, separately, its activation rows. Split so that the first S stages' weights, which no
    // earlier kernel writes, stream in before griddepcontrol.wait (programmatic dependent launch:
    // this kernel may start while the one before it in the stream finishes) and only the
    // activations wait for it.
    auto k_stage = [&](int sg) { return (first + sg) % stages; };
    auto act_bytes = [&](int rs) { return uint32_t(min(128 * KS, a.K - rs * KS * 128)) * 2; };  // K % 16 == 0
    auto issue_weights = [&](int sg) {
      const int s = sg % S, st = k_stage(sg) * KS, nst = min(KS, p.steps - st);
      const uint32_t abytes = act_bytes(k_stage(sg));
      const uint32_t wbytes = nst * G * kStepBytes;  // [step][tile] blocks, contiguous
      uint8_t* stage = smem + s * kStage;
      if (abytes < 256 * KS) {
        // The last K stage ends inside the slot: zero the activations past K (the weights there
        // are 0, but stale activations could be NaN/Inf from uninitialised memory), and the
        // weight blocks of K steps past the end (stale or uninitialised scale codes could decode
        // to Inf), so the consumers compute every step of every stage with no masking and no
        // branch between the steps (one block of code the compiler can interleave). Ordered
        // before their reads by lane 0's arrive (release) below.
        for (int i = lane; i < a.M * (256 * KS - int(abytes)) / 16; i += 32) {
          const int per_row = (256 * KS - int(abytes)) / 16, m = i / per_row, c = i % per_row;
          *reinterpret_cast<uint4*>(stage + kStageW + m * kRowStride + abytes + 16 * c) = make_uint4(0, 0, 0, 0);
        }
        for (int i = int(wbytes) / 16 + lane; i < kStageW / 16; i += 32)
          reinterpret_cast<uint4*>(stage)[i] = make_uint4(0, 0, 0, 0);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // before the bulk copies write beside them
      }
      __syncwarp();
      if (lane == 0) {
        mbar_arrive_expect_tx(&full[s], wbytes + a.M * abytes);
        bulk_g2s(stage, p.pk + (size_t(blockIdx.x) * p.steps + st) * G * kStepBytes, wbytes, &full[s]);
      }
    };
    auto issue_acts = [&](int sg) {
      const int s = sg % S, rs = k_stage(sg);
      __syncwarp();  // after lane 0's expect_tx
      if (lane < a.M)
        bulk_g2s(smem + s * kStage + kStageW + lane * kRowStride, a.A + size_t(lane) * a.K + rs * KS * 128,
                 act_bytes(rs), &full[s]);
    };
    const int ahead = min(S, stages);
    for (int sg = 0; sg < ahead; ++sg) issue_weights(sg);
    asm volatile("griddepcontrol.wait;\n" ::: "memory");  // the kernel before this one is done
    for (int sg = 0; sg < ahead; ++sg) issue_acts(sg);
    for (int sg = ahead; sg < stages; ++sg) {
      mbar_wait(&empty[sg % S], ((sg / S) - 1) & 1);
      issue_weights(sg);
      issue_acts(sg);
    }
    return;
  }

  const int g = lane / 4, t = lane % 4;
  float acc[NT][2][4] = {};
  // The step count in a register: read from the parameter bank inside the loop, it cost a
  // dependent constant load (short-scoreboard stall) after every barrier wait.
  int steps;
  asm("mov.u32 %0, %1;" : "=r"(steps) : "r"(p.steps));
  const int stages = (steps + KS - 1) / KS;
  // Stages in the producer's order; which K stage each is does not matter here (K steps past the
  // end arrive as zeros). Unrolled over the ring's S slots, so each slot's addresses are constant
  // offsets from registers set once (no address arithmetic between the barrier and the loads).
  for (int sg0 = 0, phase = 0; sg0 < stages; sg0 += S, phase ^= 1)
#pragma unroll
  for (int s = 0; s < S; ++s) {
    if (sg0 + s >= stages) break;
    mbar_wait(&full[s], phase);
    const uint8_t* stage = smem + s * kStage;
    // Everything this warp needs from the stage goes to registers first, so the stage is freed
    // before the math and the KS sub-steps' loads are all in flight together.
    uint4 w0[KS], w1[KS];
    uint32_t sc[KS];
    uint32_t av[KS][NT][16];
#pragma unroll
    for (int u = 0; u < KS; ++u) {
      const uint8_t* wp = stage + (u * G + warp) * kStepBytes + lane * 16;
      w0[u] = *reinterpret_cast<const uint4*>(wp);
      w1[u] = *reinterpret_cast<const uint4*>(wp + 512);
      sc[u] = *reinterpret_cast<const uint32_t*>(wp + 1024 - lane * 12);  // 1024 + lane * 4
      // Activation row 8j+g, this lane's 32 elements of the step (chunks gemv_chunk_k(t, i)).
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int m = 8 * j + g;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const uint4 v = *reinterpret_cast<const uint4*>(stage + kStageW + m * kRowStride + 256 * u + 2 * gemv_chunk_k(t, i));
          av[u][j][4 * i + 0] = v.x; av[u][j][4 * i + 1] = v.y; av[u][j][4 * i + 2] = v.z; av[u][j][4 * i + 3] = v.w;
        }
      }
    }
    // Every lane frees the stage once its own loads are in (no warp-wide step first). Warps past
    // the last valid tile compute too: their rows are the repack's zero padding.
    mbar_arrive(&empty[s]);
#pragma unroll
    for (int u = 0; u < KS; ++u) {
      const uint32_t wlo[4] = {w0[u].x, w0[u].y, w0[u].z, w0[u].w}, whi[4] = {w1[u].x, w1[u].y, w1[u].z, w1[u].w};
      const uint32_t c = sc[u];
      const __nv_bfloat162 slo0 = e5m3_splat(c, 0, p.sixteen), slo1 = e5m3_splat(c, 1, p.sixteen);
      const __nv_bfloat162 shi0 = e5m3_splat(c, 2, p.sixteen), shi1 = e5m3_splat(c, 3, p.sixteen);
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
          for (int j = 0; j < NT; ++j) mma_bf16_16816(acc[j][h], af, av[u][j][2 * i], av[u][j][2 * i + 1]);
        }
      }
    }
  }
  if (warp >= nvalid) return;
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

template <int G, int NT, int S, int KS>
constexpr int smem_bytes() {
  return S * stage_bytes(G, NT, KS) + 2 * S * 8;
}

// Programmatic dependent launch (the kernel's griddepcontrol instructions); GK_GEMV_PDL=0
// launches it the ordinary way, for comparisons.
bool pdl_enabled() {
  const char* e = std::getenv("GK_GEMV_PDL");
  return !(e && std::string(e) == "0");
}

template <int G, int NT, int S, int KS>
void launch(const Params& p, cudaStream_t st) {
  // An SM has 228 KB of shared memory and reserves 1 KB of it per CTA.
  static_assert((smem_bytes<G, NT, S, KS>() + 1024) * ctas_per_sm(G) <= 228 * 1024, "CTAs per SM must fit");
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(p.ntiles / G);
  cfg.blockDim = dim3((G + 1) * 32);
  cfg.dynamicSmemBytes = smem_bytes<G, NT, S, KS>();
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = pdl_enabled() ? 1 : 0;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemv_bulk_kernel<G, NT, S, KS>, p));
}

template <int G, int NT, int S, int KS>
void allow_smem() {
  CUDA_CHECK(cudaFuncSetAttribute(gemv_bulk_kernel<G, NT, S, KS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem_bytes<G, NT, S, KS>()));
}

// Ring configurations (GK_GEMV_STAGES picks one): 10 * stages + K steps per stage. 32 is the
// default (see docs/BENCHMARKS.md); the others are for comparisons. One CTA per SM leaves room
// for deeper rings.
template <int G, int NT>
void dispatch(const Params& p, int ring, cudaStream_t st) {
  if constexpr (ctas_per_sm(G) == 1) {
    if (ring == 42) return launch<G, NT, 4, 2>(p, st);
    if (ring == 52) return launch<G, NT, 5, 2>(p, st);
  } else {
    if (ring == 61) return launch<G, NT, 6, 1>(p, st);
    if (ring == 22) return launch<G, NT, 2, 2>(p, st);
  }
  launch<G, NT, 3, 2>(p, st);
}

template <int G, int NT>
void allow_all() {
  allow_smem<G, NT, 3, 2>();
  if constexpr (ctas_per_sm(G) == 1) {
    allow_smem<G, NT, 4, 2>();
    allow_smem<G, NT, 5, 2>();
  } else {
    allow_smem<G, NT, 6, 1>();
    allow_smem<G, NT, 2, 2>();
  }
}

// True when groups of g tiles make at least one CTA per SM (90% of the SMs where a CTA takes a
// whole SM), so one wave covers N without splitting K.
bool fills_wave(int N, int g, int sms) {
  const int ctas = (N + 16 * g - 1) / (16 * g);
  return ctas_per_sm(g) == 1 ? ctas * 10 >= sms * 9 : ctas >= sms;
}

// Share of the SMs' tile slots that hold a tile when N's tiles run in groups of g, over whole waves.
double fill(int N, int g, int sms) {
  const int ntiles = (N + 15) / 16, ctas = (ntiles + g - 1) / g, slots = sms * ctas_per_sm(g);
  const int waves = (ctas + slots - 1) / slots;
  return double(ntiles) / (double(waves) * slots * g);
}

}  // namespace

bool gemv_bulk_usable(int M, int N, int group, int cc_major, int sms) {
  // Hopper only: the kernel's body exists in the sm_90 image alone (newer GPUs would JIT the
  // compute_80 PTX, whose body is empty).
  return cc_major == 9 && M >= 1 && M <= 16 && fills_wave(N, group, sms);
}

int gemv_bulk_group(int N, int sms) {
  if (const char* e = std::getenv("GK_GEMV_GROUP")) {
    const int g = std::atoi(e);
    if (g == 7 || g == 8 || g == 14) return g;
  }
  return fills_wave(N, 14, sms) && fill(N, 14, sms) >= fill(N, 7, sms) ? 14 : 7;
}

void gemv_bulk_prepare() {
  allow_all<7, 1>();
  allow_all<7, 2>();
  allow_all<8, 1>();
  allow_all<8, 2>();
  allow_all<14, 1>();
  allow_all<14, 2>();
}

void gemv_bulk_run(const GemmArgs& a, const uint8_t* pk, int ntiles, int steps, int group, int ring) {
  const Params p{a, pk, ntiles, steps, 16u};
  if (group == 8) return a.M <= 8 ? dispatch<8, 1>(p, ring, a.stream) : dispatch<8, 2>(p, ring, a.stream);
  if (group == 14) return a.M <= 8 ? dispatch<14, 1>(p, ring, a.stream) : dispatch<14, 2>(p, ring, a.stream);
  return a.M <= 8 ? dispatch<7, 1>(p, ring, a.stream) : dispatch<7, 2>(p, ring, a.stream);
}

cudaError_t gemv_bulk_probe() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, gemv_bulk_kernel<7, 1, 3, 2>);
}

}  // namespace gauntlet::kernels
