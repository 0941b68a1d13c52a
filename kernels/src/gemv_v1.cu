// `gemv` backend, v1 (GK_GEMV_IMPL=v1, kept for same-run comparisons). A block owns 32 weight
// rows (sharing each activation load); its 4 warps split K four ways and add their partial sums
// through shared memory at the end (many small blocks: no half-empty last wave, short dependency
// chains). Each warp streams its weights once through its own 4-slot cp.async ring in shared
// memory (3 steps of loads in flight without spending registers), dequantizes them in registers
// and feeds mma.sync m16n8k16 with A as the 16-row operand (rows >= M are zeros), so 16 activation
// rows cost no more weight traffic than one.
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
constexpr int kGroups = 4;   // 8-row groups per block: 32 rows share each A load
constexpr int kStep = 2;     // 128-wide K chunks per pipeline step
constexpr int kStages = 4;   // steps in flight per warp (cp.async ring in shared memory)
constexpr int kRows = kGroups * 8;
constexpr int kStepW = kStep * kGroups * 32 * 16;  // weight bytes per warp per step
constexpr int kStepS = kStep * kGroups * 8 * 8;    // scale bytes: 8 rows x 8 scales per (u, r)
constexpr int kSmem = kWarps * kStages * (kStepW + kStepS);


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

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Each lane copies its own 16-byte weight pieces; lane t == 0 of each quad also copies the 8
// scale bytes of its row (the quad's 4 lanes use 2 each).
__device__ __forceinline__ void issue_step(const Params& p, int n_base, int chunk, int lane, uint8_t* sw,
                                           uint8_t* ss) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int u = 0; u < kStep; ++u) {
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
      const size_t n = size_t(n_base + r * 8 + g);
      const int k = (chunk + u) * 128 + 32 * t;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(sw + ((u * kGroups + r) * 32 + lane) * 16)),
                   "l"(p.w + n * (p.Kpad / 2) + k / 2));
      if (t == 0)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_u32(ss + ((u * kGroups + r) * 8 + g) * 8)),
                     "l"(p.s + n * (p.Kpad / 16) + (chunk + u) * 8));
    }
  }
}

__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(Params p) {
  extern __shared__ __align__(16) uint8_t smem[];
  const GemmArgs& a = p.a;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int n_base = blockIdx.x * kRows;
  const int steps = p.Kpad / 128 / kWarps / kStep;  // Kpad % (128 * kWarps * kStep) == 0
  const int c_begin = warp * steps * kStep;
  uint8_t* ring = smem + warp * kStages * (kStepW + kStepS);
  auto slot_w = [&](int i) { return ring + (i % kStages) * (kStepW + kStepS); };
  auto slot_s = [&](int i) { return slot_w(i) + kStepW; };
  float acc[kGroups][4] = {};

#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (i < steps) issue_step(p, n_base, c_begin + i * kStep, lane, slot_w(i), slot_s(i));
    asm volatile("cp.async.commit_group;\n");
  }
  for (int i = 0; i < steps; ++i) {
    // Refill the slot consumed last iteration (the __syncwarp at the end made that safe).
    if (i + kStages - 1 < steps)
      issue_step(p, n_base, c_begin + (i + kStages - 1) * kStep, lane, slot_w(i + kStages - 1),
                 slot_s(i + kStages - 1));
    asm volatile("cp.async.commit_group;\n");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    __syncwarp();  // the quad leader's scale copy is visible to its quad
    const uint8_t* sw = slot_w(i);
    const uint8_t* ss = slot_s(i);
#pragma unroll
    for (int u = 0; u < kStep; ++u) {
      const int k = (c_begin + i * kStep + u) * 128 + 32 * t;
      uint32_t alo[16], ahi[16];
      load_a(a, g, k, alo);
      load_a(a, g + 8, k, ahi);
#pragma unroll
      for (int r = 0; r < kGroups; ++r) {
        const uint4 w4 = *reinterpret_cast<const uint4*>(sw + ((u * kGroups + r) * 32 + lane) * 16);
        const uint32_t sc2 = *reinterpret_cast<const uint16_t*>(ss + ((u * kGroups + r) * 8 + g) * 8 + 2 * t);
        const uint32_t words[4] = {w4.x, w4.y, w4.z, w4.w};
        const __nv_bfloat162 s0 = dev::scale_to_bf16x2_folded(sc2 & 0xFF);
        const __nv_bfloat162 s1 = dev::scale_to_bf16x2_folded(sc2 >> 8);
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // word q: elements 8q..8q+7 -> mma steps 2q, 2q+1
          uint32_t b[4];
          dev::dequant8(words[q], q < 2 ? s0 : s1, b);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int j = 2 * q + h;  // A words: pairs (4j,4j+1) -> 2j, (4j+2,4j+3) -> 2j+1
            const uint32_t af[4] = {alo[2 * j], ahi[2 * j], alo[2 * j + 1], ahi[2 * j + 1]};
            dev::mma_bf16_16816(acc[r], af, b[2 * h], b[2 * h + 1]);
          }
        }
      }
    }
    __syncwarp();  // every lane is done with slot i before anyone refills it
  }
  asm volatile("cp.async.wait_group 0;\n");

  // Partial sums of warps 1..3 go through shared memory (reusing the ring) to warp 0.
  __syncthreads();
  float* partial = reinterpret_cast<float*>(smem);  // [kWarps-1][32][kGroups*4]
  if (warp > 0)
#pragma unroll
    for (int r = 0; r < kGroups; ++r)
#pragma unroll
      for (int i = 0; i < 4; ++i) partial[((warp - 1) * 32 + lane) * kGroups * 4 + r * 4 + i] = acc[r][i];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int w = 0; w < kWarps - 1; ++w)
#pragma unroll
    for (int r = 0; r < kGroups; ++r)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[r][i] += partial[(w * 32 + lane) * kGroups * 4 + r * 4 + i];

  const float alpha = a.global_scale * dev::kDequantFold;
#pragma unroll
  for (int r = 0; r < kGroups; ++r) {
    const int n = n_base + r * 8 + 2 * t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = g + 8 * h;
      if (m >= a.M) continue;
      if (n < a.N) a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(acc[r][2 * h] * alpha);
      if (n + 1 < a.N) a.C[size_t(m) * a.N + n + 1] = __float2bfloat16_rn(acc[r][2 * h + 1] * alpha);
    }
  }
}

class GemvV1Backend final : public Backend {
 public:
  std::string variant() const override { return "v1"; }
  std::string check_shape(int M, int N, int K) const override {
    if (M > 16) return "gemv: M must be at most 16 (decode shapes)";
    return "";
  }
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, gemv_kernel);
    return e != cudaSuccess ? e : repack_probe();
  }
  void prepare(const GemmArgs& a) override {
    CUDA_CHECK(cudaFuncSetAttribute(gemv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    repack_for_mma(a, kRows, 128 * kWarps * kStep, w_);
  }
  void run(const GemmArgs& a) override {
    const Params p{a, w_.w, w_.s, w_.Kpad};
    gemv_kernel<<<w_.Npad / kRows, kWarps * 32, kSmem, a.stream>>>(p);
    CUDA_CHECK_LAUNCH();
  }

 private:
  RepackedWeights w_;
};

}  // namespace

std::unique_ptr<Backend> make_gemv_v1_backend() { return std::make_unique<GemvV1Backend>(); }

}  // namespace gauntlet::kernels
