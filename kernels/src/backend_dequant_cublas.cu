// `dequant_cublas` backend: dequantize W to bf16 (e2m1 * scale, exact), then one cuBLAS bf16 GEMM
// with alpha = global scale. Both steps are timed: that is what this path costs per call.
#include "backend.hpp"
#include "cublas_dl.hpp"
#include "cuda_check.hpp"
#include "quantize.cuh"

namespace gauntlet::kernels {
namespace {

class DequantCublasBackend final : public Backend {
 public:
  ~DequantCublasBackend() override {
    if (handle_) cublas::api().destroy(handle_);
    if (wbf16_) cudaFree(wbf16_);
  }
  cudaError_t probe() const override {
    if (!cublas::api().error.empty()) return cudaErrorSharedObjectInitFailed;
    return quantize_probe();
  }
  void prepare(const GemmArgs& a) override {
    if (!cublas::api().error.empty()) throw std::runtime_error(cublas::api().error);
    if (!handle_) cublas::check(cublas::api().create(&handle_), "cublasCreate");
    if (wbf16_) CUDA_CHECK(cudaFree(wbf16_));
    wbf16_ = nullptr;
    CUDA_CHECK(cudaMalloc(&wbf16_, size_t(a.N) * a.K * sizeof(__nv_bfloat16)));
  }
  void run(const GemmArgs& a) override {
    cublas::check(cublas::api().set_stream(handle_, a.stream), "cublasSetStream");
    dequantize_gpu(a.Wq, a.Ws, a.layout, a.N, a.K, wbf16_, a.stream);
    cublas::gemm_bf16_nt(handle_, a.M, a.N, a.K, a.global_scale, a.A, wbf16_, a.C);
  }

 private:
  cublasHandle_t handle_ = nullptr;
  __nv_bfloat16* wbf16_ = nullptr;
};
}  // namespace

std::unique_ptr<Backend> make_dequant_cublas_backend() { return std::make_unique<DequantCublasBackend>(); }
}  // namespace gauntlet::kernels
