// See l2_flush.cuh.
#include "cuda_check.hpp"
#include "l2_flush.cuh"

#include <cstdint>

namespace gauntlet::kernels {
namespace {
__global__ void read_kernel(const uint4* p, size_t n, int* sink) {
  uint32_t x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);  // through L2, not L1
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9E3779B9u) *sink = int(x);  // the buffer holds zeros: never true, but the compiler cannot know
}
}  // namespace

void l2_read_flush(const void* buf, size_t bytes, int* sink, cudaStream_t s) {
  read_kernel<<<1024, 256, 0, s>>>(static_cast<const uint4*>(buf), bytes / 16, sink);
  CUDA_CHECK_LAUNCH();
}

}  // namespace gauntlet::kernels
