// `reference` backend: one thread per output element, every weight decoded with the same
// nvfp4.hpp functions the CPU uses, fp32 accumulation. Slow on purpose: obviously right.
#include "backend.hpp"
#include "cuda_check.hpp"

namespace gauntlet::kernels {
namespace {
using namespace nvfp4;

__global__ void reference_kernel(GemmArgs a) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y;
  if (n >= a.N || m >= a.M) return;
  float acc = 0.0f;
  for (int k = 0; k < a.K; ++k) {
    const uint8_t byte = a.Wq[size_t(n) * (a.K / 2) + k / 2];
    const uint8_t code = (k & 1) ? byte >> 4 : byte & 0xF;
    const float s = e4m3_decode(a.Ws[scale_index(a.layout, n, k / kBlock, a.N, a.K)]);
    acc += __bfloat162float(a.A[size_t(m) * a.K + k]) * (e2m1_decode(code) * s);
  }
  a.C[size_t(m) * a.N + n] = __float2bfloat16_rn(acc * a.global_scale);
}

class ReferenceBackend final : public Backend {
 public:
  cudaError_t probe() const override {
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, reference_kernel);
  }
  std::string check_shape(int M, int N, int K) const override {
    return M > 65535 ? "reference: M must be at most 65535 (grid y)" : "";
  }
  void run(const GemmArgs& a) override {
    dim3 grid((a.N + 127) / 128, a.M);
    reference_kernel<<<grid, 128, 0, a.stream>>>(a);
    CUDA_CHECK_LAUNCH();
  }
};
}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }
}  // namespace gauntlet::kernels
