// Random inputs generated on the GPU (counter-based: value i depends only on seed and i), so
// large problems start in milliseconds and any run can be repeated exactly from its seed.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gauntlet::kernels {

void fill_normal_gpu(float* x, size_t n, uint64_t seed, cudaStream_t stream);
void fill_normal_gpu(__nv_bfloat16* x, size_t n, uint64_t seed, cudaStream_t stream);
cudaError_t gen_probe();

}  // namespace gauntlet::kernels
