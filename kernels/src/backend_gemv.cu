// `gemv` backend (M <= 16): bandwidth-bound skinny GEMM. A block owns 16 weight rows; its 4 warps
// split K four ways and add their partial sums through shared memory at the end (so there are
// many small blocks: no half-empty last wave, short dependency chains). Each warp streams its
// weights once, two 128-wide K chunks per step with the next step's loads already in flight,
// dequantizes them in registers and feeds mma.sync m16n8k16 with A as the 16-row operand (rows
// >= M are zeros), so 16 activation rows cost no more weight traffic than one.
//
// The K order inside an mma is free as long as A and B agree: lane (g = lane/4, t = lane%4)
// loads 32 contiguous weights of row g at k = base + 32t (one 16-byte load), and mma step j
// (0..7) uses elements 4j..4j+3 of that piece, with A read at the same k. Weights come from the
// one-time repack (mma_repack.cuh: padded, plain scales, nibble order for dev::dequant8).
#include "backend.hpp"
#include "cuda_check.hpp"
#include "mma_repack.cuh"
#include "nvfp4_device.cuh"

namespace gauntlet::kernels {
namespace {

constexpr int kWarps = 4;    // K split
constexpr int kGroups = 2;   // 8-row groups per block: 16 rows
constexpr int kStep = 2;     // 128-wide K chunks per pipeline step
constexpr int kRows = kGroups * 8;

__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct Params {
  GemmArgs a;
  const uint8_t* w;  // repacked [Npad, Kpad/2]
  const uint8_t* s;  // repacked [Npad, Kpad/16]
  int Kpad;
};

// A row m, 32 bf16 at k (16 words), zeros past M or K (K % 16 == 0: 8-element chunks are whole).
__device__ __forceinline__ void load_a(const GemmArgs& a, int m, int k, uint32_t (&out)[16]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (m < a.M && k + 8 * i < a.K) v = __ldg(reinterpret_cast<const uint4*>(a.A + size_t(m) * a.K + k + 8 * i));
    out[4 * i + 0] = v.x; out[4 * i + 1] = v.y; out[4 * i + 2] = v.z; out[4 * i + 3] = v.w;
  }
}

struct StepLoads {
  uint4 w[kStep][kGroups];
  uint32_t s[kStep][kGroups];  // two scale bytes (the lane's 32 elements)
};

__device__ __forceinline__ void load_step(const Params& p, int n_base, int chunk, int lane, StepLoads& L) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int u = 0; u < kStep; ++u) {
    const int k = (chunk + u) * 128 + 32 * t;
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
      const size_t n = size_t(n_base + r * 8 + g);
      L.w[u][r] = __ldg(reinterpret_cast<const uint4*>(p.w + n * (p.Kpad / 2) + k / 2));
      L.s[u][r] = __ldg(reinterpret_cast<const uint16_t*>(p.s + n * (p.Kpad / 16) + k / 16));
    }
  }
}

__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(Params p) {
  __shared__ float partial[kWarps - 1][32][kGroups * 4];
  const GemmArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n_base = blockIdx.x * kRows;
  const int chunks = p.Kpad / 128 / kWarps;  // per warp; Kpad % (128 * kWarps * kStep) == 0
  const int c_begin = warp * chunks;
  float acc[kStep][kGroups][4] = {};

  StepLoads cur;
  load_step(p, n_base, c_begin, lane, cur);
  for (int c = 0; c < chunks; c += kStep) {
    StepLoads next;
    if (c + kStep < chunks) load_step(p, n_base, c_begin + c + kStep, lane, next);  // in flight during compute
#pragma unroll
    for (int u = 0; u < kStep; ++u) {
      const int k = (c_begin + c + u) * 128 + 32 * t;
      uint32_t alo[16], ahi[16];
      load_a(a, g, k, alo);
      load_a(a, g + 8, k, ahi);
#pragma unroll
      for (int r = 0; r < kGroups; ++r) {
        const uint32_t words[4] = {cur.w[u][r].x, cur.w[u][r].y, cur.w[u][r].z, cur.w[u][r].w};
        const __nv_bfloat162 s0 = dev::scale_to_bf16x2_folded(cur.s[u][r] & 0xFF);
        const __nv_bfloat162 s1 = dev::scale_to_bf16x2_folded((cur.s[u][r] >> 8) & 0xFF);
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // word q: elements 8q..8q+7 -> mma steps 2q, 2q+1
          uint32_t b[4];
          dev::dequant8(words[q], q < 2 ? s0 : s1, b);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int j = 2 * q + h;  // A words: pairs (4j,4j+1) -> 2j, (4j+2,4j+3) -> 2j+1
            const uint32_t af[4] = {alo[2 * j], ahi[2 * j], alo[2 * j + 1], ahi[2 * j + 1]};
            mma_bf16_16816(acc[u][r], af, b[2 * h], b[2 * h + 1]);
          }
        }
      }
    }
    if (c + kStep < chunks) cur = next;
  }

  float sum[kGroups * 4];
#pragma unroll
  for (int r = 0; r < kGroups; ++r)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float v = 0.0f;
#pragma unroll
      for (int u = 0; u < kStep; ++u) v += acc[u][r][i];
      sum[r * 4 + i] = v;
    }
  if (warp > 0)
#pragma unroll
    for (int i = 0; i < kGroups * 4; ++i) partial[warp - 1][lane][i] = sum[i];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int w = 0; w < kWarps - 1; ++w)
#pragma unroll
    for (int i = 0; i < kGroups * 4; ++i) sum[i] += partial[w][lane][i];

  const float alpha = a.global_scale * dev::kDequantFold;
#pragma unroll
  for (int r = 0; r < kGroups; ++r) {
    const int n = n_base + r * 8 + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = g + 8 * h;
      if (m >= a.M) continue;
      if (n < a.N) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(sum[r * 4 + 2 * h] * alpha);
      if (n + 1 < a.N) a.C[size_t(m) * a.N + n + 1] = __float2bfloat16_rn(sum[r * 4 + 2 * h + 1] * alpha);
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
    const cudaError_t e = cudaFuncGetAttributes(&attr, gemv_kernel);
    return e != cudaSuccess ? e : repack_probe();
  }
  void prepare(const GemmArgs& a) override { repack_for_mma(a, kRows, 128 * kWarps * kStep, w_); }
  void run(const GemmArgs& a) override {
    const Params p{a, w_.w, w_.s, w_.Kpad};
    gemv_kernel<<<w_.Npad / kRows, kWarps * 32, 0, a.stream>>>(p);
    CUDA_CHECK_LAUNCH();
  }

 private:
  RepackedWeights w_;
};
}  // namespace

std::unique_ptr<Backend> make_gemv_backend() { return std::make_unique<GemvBackend>(); }
}  // namespace gauntlet::kernels
