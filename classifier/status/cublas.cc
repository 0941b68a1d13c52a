// cuBLAS (cublasStatus_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: cublasStatus_t in /usr/local/cuda/include/cublas_api.h, cuBLAS 13.1.0.3 (CUDA 13.0).
// Messages: what cublasGetStatusString of libcublas 13 returns (no GPU needed).
// Made by scripts/gen-status-messages.cc cublas (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCublasValues[] = {
    {"CUBLAS_STATUS_SUCCESS", 0, "success", kPassed, "no error"},
    {"CUBLAS_STATUS_NOT_INITIALIZED", 1, "the library was not initialized",
     kCrashed, "cublasCreate failed or was skipped (in PyTorch often because device memory ran out: the log says)"},
    {"CUBLAS_STATUS_ALLOC_FAILED", 3, "the resource allocation failed",
     kOom, "cuBLAS could not allocate device memory", "oom:cuda"},
    {"CUBLAS_STATUS_INVALID_VALUE", 7, "an unsupported value or parameter was passed to the function",
     kCrashed, "an invalid argument to cuBLAS: a bug in the caller"},
    {"CUBLAS_STATUS_ARCH_MISMATCH", 8, "the function requires an architectural feature absent from the device",
     kUnsupported, "the routine needs a GPU feature this GPU lacks", "unsupported:cublas_not_supported"},
    {"CUBLAS_STATUS_MAPPING_ERROR", 11, "an access to GPU memory space failed",
     kCrashed, "an access to GPU memory failed (texture binding)"},
    {"CUBLAS_STATUS_EXECUTION_FAILED", 13, "the function failed to launch on the GPU",
     kCrashed, "a cuBLAS kernel failed to launch or run", "crashed:cublas_execution_failed"},
    {"CUBLAS_STATUS_INTERNAL_ERROR", 14, "an internal operation failed",
     kCrashed, "an internal cuBLAS operation failed", "crashed:cublas_internal_error"},
    {"CUBLAS_STATUS_NOT_SUPPORTED", 15,
     "the requested functionality is not supported",
     kUnsupported, "cuBLAS does not support this problem (types, layout, sizes) here",
     "unsupported:cublas_not_supported"},
    {"CUBLAS_STATUS_LICENSE_ERROR", 16, "the license check failed",
     kInfraError, "the node's licence check for cuBLAS failed"},
};

}  // namespace

const StatusVocabulary& CublasVocabulary() {
  static const StatusVocabulary k{
      "cublas", "cuBLAS (cublasStatus_t)",
      "cublas_api.h, cuBLAS 13.1.0 (CUDA 13.0)",
      {"cublas"}, kCublasValues};
  return k;
}

}  // namespace gauntlet::classifier
