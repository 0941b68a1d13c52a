// A vector add checked against a CPU reference with a tolerance, on an awkward size, from a fixed
// seed: the shape of a kernel project's test. `bug` adds 1 to one element to make the check fail.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void VecAdd(const float* a, const float* b, float* c, int n, int bug) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + (bug && i == n / 3 ? 1.0f : 0.0f);
}

inline int RunVecAdd(int bug) {
  const int n = 100003;  // not a multiple of the block
  std::vector<float> a(n), b(n), c(n);
  std::srand(42);
  for (int i = 0; i < n; ++i) a[i] = std::rand() / float(RAND_MAX), b[i] = std::rand() / float(RAND_MAX);
  float *da, *db, *dc;
  if (cudaMalloc(&da, n * 4) != cudaSuccess || cudaMalloc(&db, n * 4) != cudaSuccess || cudaMalloc(&dc, n * 4) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 2;
  }
  cudaMemcpy(da, a.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), n * 4, cudaMemcpyHostToDevice);
  VecAdd<<<(n + 255) / 256, 256>>>(da, db, dc, n, bug);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(e));
    return 3;
  }
  cudaMemcpy(c.data(), dc, n * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    const float want = a[i] + b[i];
    if (std::fabs(c[i] - want) > 1e-6f * std::fabs(want) + 1e-6f) {
      std::printf("mismatch at index %d: expected %f, got %f\n", i, want, c[i]);
      std::printf("Result = FAIL\n");
      return 1;
    }
  }
  std::printf("Result = PASS\n");
  return 0;
}
