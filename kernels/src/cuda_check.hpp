// CUDA/cuBLAS error checking: every call's status is checked and turned into an exception that
// carries the call text and the runtime's own error string (the classifier keys on that text).
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gauntlet::kernels {

struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

inline void cuda_check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess)
    throw CudaError(e, std::string(expr) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace gauntlet::kernels

#define CUDA_CHECK(expr) ::gauntlet::kernels::cuda_check((expr), #expr, __FILE__, __LINE__)
// After a launch: the launch error now, not at the next synchronising call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
