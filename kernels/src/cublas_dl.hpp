// cuBLAS loaded at run time (dlopen libcublas.so.13/12): the tool starts, lists and reports
// `unsupported` even on a node without cuBLAS, and nothing links against it.
#pragma once
#include <cublas_v2.h>

#include <string>

namespace gauntlet::kernels::cublas {

struct Api {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  int (*get_version)(void) = nullptr;  // cublasGetCudartVersion is not it; we read cublasGetVersion_v2
  std::string error;                   // why loading failed ("" when loaded)
  std::string library;                 // which file was loaded
};

// Loads once; thread-safe. api().error is non-empty when cuBLAS is unavailable.
const Api& api();
int version();  // e.g. 130100, or 0 when unknown

// Throws with the status name when st != CUBLAS_STATUS_SUCCESS.
void check(cublasStatus_t st, const char* what);

// Row-major C[M,N] = alpha * A[M,K] x B[N,K]^T, bf16 in, bf16 out, fp32 accumulate.
void gemm_bf16_nt(cublasHandle_t h, int M, int N, int K, float alpha, const void* A, const void* B, void* C);

}  // namespace gauntlet::kernels::cublas
