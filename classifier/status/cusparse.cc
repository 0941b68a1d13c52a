// cuSPARSE (cusparseStatus_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: cusparseStatus_t in /usr/local/cuda/include/cusparse.h, cuSPARSE 12.6.3.3 (CUDA 13.0).
// Messages: what cusparseGetErrorString of libcusparse 12 returns (no GPU needed); all are generic,
// so they match only with "cusparse" on the line.
// Made by scripts/gen-status-messages.cc cusparse (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCusparseValues[] = {
    {"CUSPARSE_STATUS_SUCCESS", 0, "success", kPassed, "no error"},
    {"CUSPARSE_STATUS_NOT_INITIALIZED", 1, "initialization error", kCrashed, "a cuSPARSE call without a valid handle"},
    {"CUSPARSE_STATUS_ALLOC_FAILED", 2, "out of memory", kOom, "cuSPARSE could not allocate memory", "oom:cuda"},
    {"CUSPARSE_STATUS_INVALID_VALUE", 3, "invalid value", kCrashed, "an invalid argument to cuSPARSE"},
    {"CUSPARSE_STATUS_ARCH_MISMATCH", 4, "architecture mismatch",
     kUnsupported, "the routine needs a GPU feature this GPU lacks"},
    {"CUSPARSE_STATUS_MAPPING_ERROR", 5, "texture memory mapping error",
     kCrashed, "an access to GPU memory failed (texture binding)"},
    {"CUSPARSE_STATUS_EXECUTION_FAILED", 6, "kernel launch failure",
     kCrashed, "a cuSPARSE kernel failed to launch or run"},
    {"CUSPARSE_STATUS_INTERNAL_ERROR", 7, "internal error", kCrashed, "an internal cuSPARSE error"},
    {"CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 8, "matrix type not supported",
     kUnsupported, "cuSPARSE does not support this matrix type here"},
    {"CUSPARSE_STATUS_ZERO_PIVOT", 9, "zero pivot",
     kWrongOutput, "a zero pivot: the factorisation met a singular matrix (numerics, not a fault)"},
    {"CUSPARSE_STATUS_NOT_SUPPORTED", 10, "operation not supported",
     kUnsupported, "cuSPARSE does not support this operation here"},
    {"CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", 11, "insufficient resources",
     kUnsupported, "the operation needs more resources (shared memory, 32-bit indices) than it can have here"},
};

}  // namespace

const StatusVocabulary& CusparseVocabulary() {
  static const StatusVocabulary k{
      "cusparse", "cuSPARSE (cusparseStatus_t)",
      "cusparse.h, cuSPARSE 12.6.3 (CUDA 13.0)",
      {"cusparse"}, kCusparseValues};
  return k;
}

}  // namespace gauntlet::classifier
