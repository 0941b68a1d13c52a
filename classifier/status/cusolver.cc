// cuSOLVER (cusolverStatus_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: cusolverStatus_t in /usr/local/cuda/include/cusolver_common.h, cuSOLVER 12.0.4.66 (CUDA
// 13.0). Messages: none; cuSOLVER has no function that turns a status into text.
// Made by scripts/gen-status-messages.cc cusolver (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCusolverValues[] = {
    {"CUSOLVER_STATUS_SUCCESS", 0, "", kPassed, "no error"},
    {"CUSOLVER_STATUS_NOT_INITIALIZED", 1, "", kCrashed, "a cuSOLVER call without a valid handle"},
    {"CUSOLVER_STATUS_ALLOC_FAILED", 2, "", kOom, "cuSOLVER could not allocate memory", "oom:cuda"},
    {"CUSOLVER_STATUS_INVALID_VALUE", 3, "", kCrashed, "an invalid argument to cuSOLVER"},
    {"CUSOLVER_STATUS_ARCH_MISMATCH", 4, "", kUnsupported, "the routine needs a GPU feature this GPU lacks"},
    {"CUSOLVER_STATUS_MAPPING_ERROR", 5, "", kCrashed, "an access to GPU memory failed"},
    {"CUSOLVER_STATUS_EXECUTION_FAILED", 6, "", kCrashed, "a cuSOLVER kernel failed to launch or run"},
    {"CUSOLVER_STATUS_INTERNAL_ERROR", 7, "", kCrashed, "an internal cuSOLVER error"},
    {"CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 8, "", kUnsupported, "cuSOLVER does not support this matrix type"},
    {"CUSOLVER_STATUS_NOT_SUPPORTED", 9, "", kUnsupported, "cuSOLVER does not support this operation here"},
    {"CUSOLVER_STATUS_ZERO_PIVOT", 10, "",
     kWrongOutput, "a zero pivot: the factorisation met a singular matrix (numerics, not a fault)"},
    {"CUSOLVER_STATUS_INVALID_LICENSE", 11, "", kInfraError, "the node's licence check for cuSOLVER failed"},
    {"CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED", 12, "",
     kCrashed, "iterative-refinement parameters used before they were created"},
    {"CUSOLVER_STATUS_IRS_PARAMS_INVALID", 13, "", kCrashed, "invalid iterative-refinement parameters"},
    {"CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC", 14, "", kCrashed, "an invalid precision for iterative refinement"},
    {"CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE", 15, "", kCrashed, "an invalid refinement solver"},
    {"CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER", 16, "", kCrashed, "an invalid iteration limit"},
    {"CUSOLVER_STATUS_IRS_INTERNAL_ERROR", 20, "", kCrashed, "an internal iterative-refinement error"},
    {"CUSOLVER_STATUS_IRS_NOT_SUPPORTED", 21, "", kUnsupported, "iterative refinement does not support this"},
    {"CUSOLVER_STATUS_IRS_OUT_OF_RANGE", 22, "", kCrashed, "an iterative-refinement argument out of range"},
    {"CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES", 23, "",
     kUnsupported, "GMRES refinement does not support several right-hand sides"},
    {"CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED", 25, "",
     kCrashed, "iterative-refinement info used before it was created"},
    {"CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED", 26, "", kCrashed, "iterative-refinement info not destroyed"},
    {"CUSOLVER_STATUS_IRS_MATRIX_SINGULAR", 30, "", kWrongOutput, "the matrix is singular (numerics, not a fault)"},
    {"CUSOLVER_STATUS_INVALID_WORKSPACE", 31, "", kCrashed, "an invalid workspace"},
};

}  // namespace

const StatusVocabulary& CusolverVocabulary() {
  static const StatusVocabulary k{
      "cusolver", "cuSOLVER (cusolverStatus_t)",
      "cusolver_common.h, cuSOLVER 12.0.4 (CUDA 13.0)",
      {"cusolver"}, kCusolverValues};
  return k;
}

}  // namespace gauntlet::classifier
