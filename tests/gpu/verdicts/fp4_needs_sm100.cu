// Needs compute capability 10.0 (the NVFP4 tensor-core path); on anything older it says so and
// exits 77, CTest's SKIP_RETURN_CODE here, as kernel projects skip a test the hardware cannot run.
#include <cstdio>
int main() {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 2;
  if (p.major < 10) {
    std::printf("NVFP4 GEMM requires compute capability 10.0, this GPU is %d.%d: skipping\n", p.major, p.minor);
    return 77;
  }
  std::printf("Result = PASS\n");
  return 0;
}
