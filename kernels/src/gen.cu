// Counter-based normal random numbers on the GPU (splitmix64 hash + Box-Muller).
#include "cuda_check.hpp"
#include "gen.cuh"

namespace gauntlet::kernels {
namespace {

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float normal_at(uint64_t seed, size_t i) {
  const uint64_t h = mix(seed * 0x2545F4914F6CDD1Dull ^ mix(i));
  const float u1 = (float((h >> 40) & 0xFFFFFF) + 1.0f) * 0x1.0p-24f;  // (0, 1]
  const float u2 = float((h >> 16) & 0xFFFFFF) * 0x1.0p-24f;
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__device__ __forceinline__ void store(float* x, size_t i, float v) { x[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* x, size_t i, float v) { x[i] = __float2bfloat16_rn(v); }

template <typename T>
__global__ void fill_kernel(T* x, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    store(x, i, normal_at(seed, i));
}

template <typename T>
void fill(T* x, size_t n, uint64_t seed, cudaStream_t s) {
  if (!n) return;
  const size_t blocks = (n + 255) / 256;
  fill_kernel<<<unsigned(blocks < 8192 ? blocks : 8192), 256, 0, s>>>(x, n, seed);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void fill_normal_gpu(float* x, size_t n, uint64_t seed, cudaStream_t s) { fill(x, n, seed, s); }
void fill_normal_gpu(__nv_bfloat16* x, size_t n, uint64_t seed, cudaStream_t s) { fill(x, n, seed, s); }
cudaError_t gen_probe() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, fill_kernel<float>);
}

}  // namespace gauntlet::kernels
