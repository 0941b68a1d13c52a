// Backend registry: names, the architectures each was compiled for (from the build), and the
// `mma` dispatch between its wgmma (sm_90a) and mma.sync (sm_80+) paths.
#include <cuda_runtime.h>

#include <stdexcept>

#include "backend.hpp"

#ifndef GK_ARCHS_REFERENCE
#error "the build defines GK_ARCHS_* from each backend target's CUDA_ARCHITECTURES"
#endif

namespace gauntlet::kernels {

std::vector<BackendInfo> list_backends() {
  return {
      {"reference", GK_ARCHS_REFERENCE, "one thread per output, fp32 accumulate; obviously right, slow"},
      {"dequant_cublas", GK_ARCHS_DEQUANT, "dequantize W to bf16, then cuBLAS bf16 GEMM (alpha = global scale)"},
      {"mma", "wgmma:" GK_ARCHS_MMA_WGMMA " mma.sync:" GK_ARCHS_MMA_SYNC,
       "dequantize into shared memory, tensor-core MMA: wgmma on sm_90a, mma.sync elsewhere"},
      {"gemv", GK_ARCHS_GEMV, "M <= 16: weights streamed once (bulk-copy ring on Hopper), dequantized in registers, mma.sync"},
      {"sm120_native", GK_ARCHS_SM120, "block-scaled FP4 mma (kind::mxf4nvf4), W4A4; sm_120a only"},
  };
}

std::unique_ptr<Backend> make_backend(const std::string& name, const std::string& mma_path) {
  if (name == "reference") return make_reference_backend();
  if (name == "dequant_cublas") return make_dequant_cublas_backend();
  if (name == "gemv") return make_gemv_backend();
  if (name == "sm120_native") return make_sm120_native_backend();
  if (name == "mma") {
    if (mma_path == "wgmma") return make_mma_wgmma_backend();
    if (mma_path == "sync") return make_mma_sync_backend();
    if (mma_path != "auto") throw std::invalid_argument("unknown --mma-path " + mma_path);
    // The wgmma image exists only for sm_90a: anywhere else its probe fails and mma.sync runs.
    auto wg = make_mma_wgmma_backend();
    if (wg->probe() == cudaSuccess) return wg;
    cudaGetLastError();  // the failed probe is expected; do not leave it as the sticky last error
    return make_mma_sync_backend();
  }
  return nullptr;
}

}  // namespace gauntlet::kernels
