// Weight repack for the tiled `mma` kernels (see mma_repack.cuh).
#include "cuda_check.hpp"
#include "mma_repack.cuh"
#include "nvfp4_device.cuh"

namespace gauntlet::kernels {
namespace {
using namespace nvfp4;

// One thread per 32-bit word (8 elements, one scale block) of the output. A negative block scale
// is folded into the weights' signs (the repacked scale keeps its magnitude only), which is exact
// and what every kernel's scale decode (dev::scale_to_bf16x2_folded) assumes.
__global__ void repack_w_kernel(const uint8_t* w, const uint8_t* s, ScaleLayout layout, int N, int K, uint32_t* out,
                                int Npad, int Kpad, bool v2_bits) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t words_out = Kpad / 8;
  if (idx >= size_t(Npad) * words_out) return;
  const int n = int(idx / words_out), q = int(idx % words_out);
  uint32_t in = 0;
  if (n < N && q < K / 8) {
    in = fold_scale_sign(*reinterpret_cast<const uint32_t*>(w + size_t(n) * (K / 2) + q * 4),
                         scale_at(s, layout, n, q / 2, N, K));
  }
  if (v2_bits) {
    out[idx] = dev::pack8_v2(in);
    return;
  }
  uint32_t o = 0;
  constexpr int kFrom[8] = {0, 2, 4, 6, 1, 3, 5, 7};  // nibble i of the output holds element kFrom[i]
#pragma unroll
  for (int i = 0; i < 8; ++i) o |= ((in >> (4 * kFrom[i])) & 0xFu) << (4 * i);
  out[idx] = o;
}

__global__ void repack_s_kernel(const uint8_t* s, ScaleLayout layout, int N, int K, uint8_t* out, int Npad,
                                int Kpad) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const int cols = Kpad / kBlock;
  if (idx >= size_t(Npad) * cols) return;
  const int n = int(idx / cols), c = int(idx % cols);
  out[idx] = scale_at(s, layout, n, c, N, K) & 0x7F;  // the sign is in the weights
}
}  // namespace

RepackedWeights::~RepackedWeights() {
  if (w) cudaFree(w);
  if (s) cudaFree(s);
}

void repack_for_mma(const GemmArgs& a, int n_align, int k_align, RepackedWeights& out, bool v2_bits) {
  if (out.w) CUDA_CHECK(cudaFree(out.w));
  if (out.s) CUDA_CHECK(cudaFree(out.s));
  out.w = out.s = nullptr;
  out.Npad = (a.N + n_align - 1) / n_align * n_align;
  out.Kpad = (a.K + k_align - 1) / k_align * k_align;
  const size_t wb = size_t(out.Npad) * out.Kpad / 2, sb = size_t(out.Npad) * out.Kpad / kBlock;
  CUDA_CHECK(cudaMalloc(&out.w, wb));
  CUDA_CHECK(cudaMalloc(&out.s, sb));
  const size_t words = wb / 4;
  repack_w_kernel<<<unsigned((words + 255) / 256), 256, 0, a.stream>>>(a.Wq, a.Ws, a.layout, a.N, a.K,
                                                                       reinterpret_cast<uint32_t*>(out.w), out.Npad,
                                                                       out.Kpad, v2_bits);
  CUDA_CHECK_LAUNCH();
  repack_s_kernel<<<unsigned((sb + 255) / 256), 256, 0, a.stream>>>(a.Ws, a.layout, a.N, a.K, out.s, out.Npad,
                                                                    out.Kpad);
  CUDA_CHECK_LAUNCH();
}

cudaError_t repack_probe() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, repack_w_kernel);
}

}  // namespace gauntlet::kernels
