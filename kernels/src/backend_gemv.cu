// `gemv` backend (M <= 16): bandwidth-bound skinny GEMM. The default kernel is v2 (below) or, on
// Hopper where N fills a wave, v3 (gemv_bulk.cu), both reading this file's repack; v4
// (gemv_wgmma.cu) and v1 (gemv_v1.cu) are kept for same-run comparisons (GK_GEMV_IMPL).
#include "backend.hpp"
#include "cuda_check.hpp"
#include "gemv_bulk.cuh"
#include "gemv_wgmma.cuh"
#include "nvfp4_device.cuh"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gauntlet::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// v2 (default): weights streamed straight into registers from a gemv-specific interleaved repack.
//
// Repack: W is cut into tiles of 16 rows; each tile is one contiguous stream of 128-wide K steps,
// each step 1152 bytes laid out exactly in the order one warp's lanes consume it: [0,512) lane L's
// 16 bytes of row L/4 (its four 8-element chunks gemv_chunk_k(L%4, c), one 32-bit word each, in
// dev::pack8_v2's bit layout), [512,1024) the same for row L/4 + 8, [1024,1152) lane L's 4 scale
// bytes as E5M3 codes (blocks L%4 and 4 + L%4 of row L/4, then of row L/4 + 8). So a warp step is
// two fully coalesced 16-byte loads and one 4-byte load per lane, every byte used once, and the
// scales cost no extra transactions.
//
// Kernel: one warp owns RT tiles (16*RT rows) over all of K, keeps U steps of loads in flight in
// registers (rotating buffer, compile-time indices), dequantizes in registers and feeds
// mma.sync m16n8k16 with the WEIGHTS as the 16-row A operand and the activations as the 8-column
// B operand (one mma per 8 activation rows: M <= 8 uses one, M <= 16 two), so M=1 wastes 7/8 of
// the mma instead of 15/16. No shared memory, no block-level sync; the whole grid (N/16/RT warps)
// is resident in one wave, every warp moving the same number of bytes.
constexpr int kV2StepBytes = 1152;
constexpr int kV2RowAlign = 32;  // Npad multiple of 16 * max RT

// group > 0 (for gemv v3): tiles go in groups of `group`, and a group's step blocks of one K step
// are adjacent ([group][step][tile]), so one bulk copy moves a whole K step of a CTA's rows.
__global__ void repack_gemv_v2_kernel(const uint8_t* w, const uint8_t* s, nvfp4::ScaleLayout layout, int N, int K,
                                      uint32_t* out, int ntiles, int steps, int group) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // one 32-bit word of the output
  const size_t total = size_t(ntiles) * steps * (kV2StepBytes / 4);
  if (idx >= total) return;
  const int wi = int(idx % (kV2StepBytes / 4));
  const size_t chunk = idx / (kV2StepBytes / 4);
  int step = int(chunk % steps), tile = int(chunk / steps);
  if (group > 0) {
    const size_t in_group = chunk % (size_t(steps) * group);
    step = int(in_group / group);
    tile = int(chunk / (size_t(steps) * group)) * group + int(in_group % group);
  }
  const int lane = (wi % 128) / 4, t = lane % 4;
  uint32_t o = 0;
  if (wi < 256) {
    const int half = wi / 128, q = wi % 4;
    const int n = tile * 16 + lane / 4 + 8 * half;
    const int k = step * 128 + gemv_chunk_k(t, q);  // 8 elements: k..k+7 (K % 16 == 0)
    uint32_t in = 0;
    if (n < N && k < K) in = *reinterpret_cast<const uint32_t*>(w + size_t(n) * (K / 2) + k / 2);
    // The E5M3 code of a zero scale does not decode to zero: fold_scale_sign zeroes the weights.
    in = nvfp4::fold_scale_sign(in, nvfp4::scale_at(s, layout, n, k / nvfp4::kBlock, N, K));
    o = dev::pack8_v2(in);  // bit layout for dev::dequant8_v2
  } else {
    const int sl = wi - 256, g = sl / 4, st = sl % 4;  // scale word of lane (g, t = st)
#pragma unroll
    for (int b = 0; b < 4; ++b)  // rows g, g (block t, 4+t), then g+8 likewise: E5M3 codes
      o |= nvfp4::e5m3_from_e4m3(nvfp4::scale_at(s, layout, tile * 16 + g + 8 * (b / 2), step * 8 + 4 * (b % 2) + st, N, K))
           << (8 * b);
  }
  out[idx] = o;
}

__device__ __forceinline__ uint4 ld_stream16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint32_t ld_stream4(const void* p) {
  uint32_t v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];\n" : "=r"(v) : "l"(p));
  return v;
}

struct V2Params {
  GemmArgs a;
  const uint8_t* pk;
  int ntiles, steps;
  uint32_t sixteen;  // 16 (see dev::e5m3_splat)
};

template <int RT>
struct V2Buf {
  uint4 w[RT][2];
  uint32_t s[RT];
};

// One wave: N=28672 gives 1792 tiles; with RT=1 and KS=2 that is 896 blocks, which fit 132 SMs
// only at 7 blocks (<= 72 registers) each.
template <int NT, int RT, int U, int KS>
__global__ void __launch_bounds__(128, (RT == 1 && KS >= 2 && U <= 3) ? 7 : 1) gemv_v2_kernel(V2Params p) {
  const GemmArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int ks = warp % KS;  // K part of this warp; the KS warps of a tile sit side by side
  const int tile0 = (blockIdx.x * (4 / KS) + warp / KS) * RT;
  if (tile0 >= p.ntiles) return;  // the KS warps of a tile leave together
  const int s_lo = p.steps * ks / KS, s_hi = p.steps * (ks + 1) / KS, steps = s_hi - s_lo;
  const uint8_t* base[RT];
#pragma unroll
  for (int r = 0; r < RT; ++r)
    base[r] = p.pk + (size_t(tile0 + r) * p.steps + s_lo) * kV2StepBytes + lane * 16;

  auto load = [&](V2Buf<RT>& b, int step) {
#pragma unroll
    for (int r = 0; r < RT; ++r) {
      const uint8_t* q = base[r] + size_t(step) * kV2StepBytes;
      b.w[r][0] = ld_stream16(q);
      b.w[r][1] = ld_stream16(q + 512);
      b.s[r] = ld_stream4(q + 1024 - lane * 12);  // 1024 + lane*4
    }
  };

  V2Buf<RT> buf[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (u < steps) load(buf[u], u);

  float acc[RT][NT][2][4];
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[r][j][e][i] = 0.0f;

  // Activation rows this lane supplies as the B operand (column g of n-tile j = row 8j+g of A).
  const __nv_bfloat16* arow[NT];
  bool aok[NT];
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    aok[j] = 8 * j + g < a.M;
    arow[j] = a.A + size_t(aok[j] ? 8 * j + g : 0) * a.K;
  }

  for (int s0 = 0; s0 < steps; s0 += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int step = s0 + u;
      if (step < steps) {
        const int k0 = (s_lo + step) * 128;
        uint32_t av[NT][16];
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int k = k0 + gemv_chunk_k(t, i);
            uint4 v = make_uint4(0, 0, 0, 0);
            if (aok[j] && k < a.K) v = __ldg(reinterpret_cast<const uint4*>(arow[j] + k));
            av[j][4 * i + 0] = v.x; av[j][4 * i + 1] = v.y; av[j][4 * i + 2] = v.z; av[j][4 * i + 3] = v.w;
          }
        // Dequantize the whole step first, so its load registers are free for the refill below
        // (no register copies to keep the rotating buffer in place).
        uint32_t lo[RT][4][4], hi[RT][4][4];
#pragma unroll
        for (int r = 0; r < RT; ++r) {
          const uint32_t sc = buf[u].s[r];
          const __nv_bfloat162 slo0 = dev::e5m3_splat(sc, 0, p.sixteen), slo1 = dev::e5m3_splat(sc, 1, p.sixteen);
          const __nv_bfloat162 shi0 = dev::e5m3_splat(sc, 2, p.sixteen), shi1 = dev::e5m3_splat(sc, 3, p.sixteen);
          const uint32_t wlo[4] = {buf[u].w[r][0].x, buf[u].w[r][0].y, buf[u].w[r][0].z, buf[u].w[r][0].w};
          const uint32_t whi[4] = {buf[u].w[r][1].x, buf[u].w[r][1].y, buf[u].w[r][1].z, buf[u].w[r][1].w};
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            dev::dequant8_v2(wlo[q], q < 2 ? slo0 : slo1, lo[r][q]);
            dev::dequant8_v2(whi[q], q < 2 ? shi0 : shi1, hi[r][q]);
          }
        }
        if (step + U < steps) load(buf[u], step + U);
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
          for (int q = 0; q < 4; ++q)  // word q: elements 8q..8q+7 -> mma steps 2q, 2q+1
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int i = 2 * q + h;  // mma step: physical elements 4i..4i+3 of this lane's 32
              const uint32_t af[4] = {lo[r][q][2 * h], hi[r][q][2 * h], lo[r][q][2 * h + 1], hi[r][q][2 * h + 1]};
#pragma unroll
              for (int j = 0; j < NT; ++j) dev::mma_bf16_16816(acc[r][j][h], af, av[j][2 * i], av[j][2 * i + 1]);
            }
      }
    }
  }

  if constexpr (KS > 1) {
    // The KS warps of a tile add up through shared memory (a named barrier per tile group).
    __shared__ float part[4][32][RT * NT * 4];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) part[warp][lane][(r * NT + j) * 4 + e] = acc[r][j][0][e] + acc[r][j][1][e];
    asm volatile("bar.sync %0, %1;\n" ::"r"(1 + warp / KS), "r"(32 * KS) : "memory");
    if (ks != 0) return;
#pragma unroll
    for (int o = 1; o < KS; ++o)
#pragma unroll
      for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[r][j][0][e] += part[warp + o][lane][(r * NT + j) * 4 + e];
  }

  // C fragment: acc[.][j][.][0..1] = weight row g, activation rows 8j+2t, +1; [2..3] = row g+8.
  const float alpha = a.global_scale * dev::kDequantFold;
#pragma unroll
  for (int r = 0; r < RT; ++r) {
#pragma unroll
    for (int j = 0; j < NT; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int n = (tile0 + r) * 16 + g + 8 * (e / 2);
        const int m = 8 * j + 2 * t + (e % 2);
        if (n < a.N && m < a.M)
          a.C[size_t(m) * a.N + n] = __float2bfloat16_rn((acc[r][j][0][e] + acc[r][j][1][e]) * alpha);
      }
    }
  }
}

struct GemvV2Config {
  int rt = 1, u = 3, ks = 2;
};

// Defaults per activation-row count (measured on the H200, see docs/BENCHMARKS.md).
GemvV2Config v2_config(int M) {
  GemvV2Config c = M <= 8 ? GemvV2Config{1, 4, 2} : GemvV2Config{2, 2, 1};
  // GK_GEMV_CFG=RTxUxKS (benchmarking only): row tiles per warp x steps in flight x K split.
  if (const char* e = std::getenv("GK_GEMV_CFG")) {
    int rt = 0, u = 0, ks = 0;
    if (std::sscanf(e, "%dx%dx%d", &rt, &u, &ks) == 3) c = {rt, u, ks};
  }
  return c;
}

template <int NT, int RT, int U, int KS>
void launch_v2(const V2Params& p, cudaStream_t st) {
  const int warps = (p.ntiles + RT - 1) / RT * KS;
  gemv_v2_kernel<NT, RT, U, KS><<<(warps + 3) / 4, 128, 0, st>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int NT>
void dispatch_v2(const GemvV2Config& c, const V2Params& p, cudaStream_t st) {
  if (c.rt == 1 && c.u == 4 && c.ks == 1) return launch_v2<NT, 1, 4, 1>(p, st);
  if (c.rt == 1 && c.u == 2 && c.ks == 2) return launch_v2<NT, 1, 2, 2>(p, st);
  if (c.rt == 2 && c.u == 2 && c.ks == 1) return launch_v2<NT, 2, 2, 1>(p, st);
  if (c.rt == 2 && c.u == 2 && c.ks == 2) return launch_v2<NT, 2, 2, 2>(p, st);
  if (c.rt == 1 && c.u == 4 && c.ks == 4) return launch_v2<NT, 1, 4, 4>(p, st);
  if (c.rt == 1 && c.u == 3 && c.ks == 2) return launch_v2<NT, 1, 3, 2>(p, st);
  if (c.rt == 1 && c.u == 6 && c.ks == 2) return launch_v2<NT, 1, 6, 2>(p, st);
  if (c.rt == 1 && c.u == 8 && c.ks == 2) return launch_v2<NT, 1, 8, 2>(p, st);
  if (c.rt == 2 && c.u == 3 && c.ks == 1) return launch_v2<NT, 2, 3, 1>(p, st);
  if (c.rt == 2 && c.u == 4 && c.ks == 1) return launch_v2<NT, 2, 4, 1>(p, st);
  return launch_v2<NT, 1, 4, 2>(p, st);
}

class GemvV2Backend final : public Backend {
 public:
  ~GemvV2Backend() override {
    if (pk_) cudaFree(pk_);
  }
  std::string variant() const override { return v4_ ? "v4" : bulk_ ? "v3" : "v2"; }
  std::string check_shape(int M, int N, int K) const override {
    if (M > 16) return "gemv: M must be at most 16 (decode shapes)";
    return "";
  }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, gemv_v2_kernel<1, 1, 4, 2>);
    return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, repack_gemv_v2_kernel);
  }
  // v3 (gemv_bulk.cu) where the GPU has bulk copies and N fills a wave; GK_GEMV_IMPL=v2 forces v2,
  // GK_GEMV_STAGES=SK (stages x K steps per stage: 32 default; 61, 22 with 7-tile groups, 42, 52
  // with 14) sets v3's ring, GK_GEMV_GROUP its tiles per CTA (benchmarking).
  bool pick_bulk(const GemmArgs& a) {
    const char* e = std::getenv("GK_GEMV_IMPL");
    if (e && std::string(e) == "v2") return false;
    int dev = 0, major = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    group_ = gemv_bulk_group(a.N, sms);
    if (!gemv_bulk_usable(a.M, a.N, group_, major, sms) || gemv_bulk_probe() != cudaSuccess) return false;
    if (const char* st = std::getenv("GK_GEMV_STAGES")) stages_ = std::atoi(st);
    gemv_bulk_prepare();
    return true;
  }
  // v4 (gemv_wgmma.cu) when GK_GEMV_IMPL=v4 and its sm_90a image runs (measured slower than v3
  // so far; see docs/BENCHMARKS.md).
  static bool pick_wgmma() {
    const char* e = std::getenv("GK_GEMV_IMPL");
    if (!e || std::string(e) != "v4") return false;
    if (GemvWgmma::probe() == cudaSuccess) return true;
    cudaGetLastError();  // the missing image is an answer here, not an error for the next check
    return false;
  }
  void prepare(const GemmArgs& a) override {
    if (pk_) CUDA_CHECK(cudaFree(pk_));
    pk_ = nullptr;
    v4_.reset();
    if (pick_wgmma()) {
      v4_ = std::make_unique<GemvWgmma>();
      v4_->prepare(a);
      return;
    }
    cfg_ = v2_config(a.M);
    const int Npad = (a.N + kV2RowAlign - 1) / kV2RowAlign * kV2RowAlign;
    bulk_ = pick_bulk(a);
    ntiles_ = bulk_ ? (Npad / 16 + group_ - 1) / group_ * group_ : Npad / 16;  // v3 reads whole groups
    steps_ = (a.K + 127) / 128;
    const size_t bytes = size_t(ntiles_) * steps_ * kV2StepBytes;
    CUDA_CHECK(cudaMalloc(&pk_, bytes));
    const size_t words = bytes / 4;
    repack_gemv_v2_kernel<<<unsigned((words + 255) / 256), 256, 0, a.stream>>>(
        a.Wq, a.Ws, a.layout, a.N, a.K, reinterpret_cast<uint32_t*>(pk_), ntiles_, steps_, bulk_ ? group_ : 0);
    CUDA_CHECK_LAUNCH();
  }
  void run(const GemmArgs& a) override {
    if (v4_) return v4_->run(a);
    if (bulk_) return gemv_bulk_run(a, pk_, ntiles_, steps_, group_, stages_);
    const V2Params p{a, pk_, ntiles_, steps_, 16u};
    if (a.M <= 8) dispatch_v2<1>(cfg_, p, a.stream);
    else dispatch_v2<2>(cfg_, p, a.stream);
  }

 private:
  uint8_t* pk_ = nullptr;
  int ntiles_ = 0, steps_ = 0, stages_ = 32, group_ = 7;
  GemvV2Config cfg_;
  bool bulk_ = false;
  std::unique_ptr<GemvWgmma> v4_;
};

}  // namespace

// GK_GEMV_IMPL=v1 selects the earlier cp.async-ring kernel (kept for same-run comparisons).
std::unique_ptr<Backend> make_gemv_backend() {
  const char* e = std::getenv("GK_GEMV_IMPL");
  if (e && std::string(e) == "v1") return make_gemv_v1_backend();
  return std::make_unique<GemvV2Backend>();
}
}  // namespace gauntlet::kernels
