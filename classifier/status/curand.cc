// cuRAND (curandStatus_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: enum curandStatus in /usr/local/cuda/include/curand.h, cuRAND 10.4.0.35 (CUDA 13.0).
// Messages: none; cuRAND has no function that turns a status into text (the header's ///< comments
// are documentation, not something a program prints).
// Made by scripts/gen-status-messages.cc curand (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCurandValues[] = {
    {"CURAND_STATUS_SUCCESS", 0, "", kPassed, "no error"},
    {"CURAND_STATUS_VERSION_MISMATCH", 100, "",
     kCrashed, "the cuRAND header and library versions differ: a broken build"},
    {"CURAND_STATUS_NOT_INITIALIZED", 101, "", kCrashed, "a generator used before it was created"},
    {"CURAND_STATUS_ALLOCATION_FAILED", 102, "", kOom, "cuRAND could not allocate memory", "oom:cuda"},
    {"CURAND_STATUS_TYPE_ERROR", 103, "", kCrashed, "a generator of the wrong type"},
    {"CURAND_STATUS_OUT_OF_RANGE", 104, "", kCrashed, "an argument out of range"},
    {"CURAND_STATUS_LENGTH_NOT_MULTIPLE", 105, "", kCrashed, "a length that is not a multiple of the dimension"},
    {"CURAND_STATUS_DOUBLE_PRECISION_REQUIRED", 106, "",
     kUnsupported, "the generator needs double precision this GPU lacks"},
    {"CURAND_STATUS_LAUNCH_FAILURE", 201, "", kCrashed, "a cuRAND kernel failed to launch"},
    {"CURAND_STATUS_PREEXISTING_FAILURE", 202, "", kCrashed, "an earlier CUDA failure reported on entry to cuRAND"},
    {"CURAND_STATUS_INITIALIZATION_FAILED", 203, "",
     kInfraError, "CUDA could not be initialised for cuRAND (driver or GPU)"},
    {"CURAND_STATUS_ARCH_MISMATCH", 204, "", kUnsupported, "the GPU lacks a feature the generator needs"},
    {"CURAND_STATUS_INTERNAL_ERROR", 999, "", kCrashed, "an internal cuRAND error"},
};

}  // namespace

const StatusVocabulary& CurandVocabulary() {
  static const StatusVocabulary k{
      "curand", "cuRAND (curandStatus_t)",
      "curand.h, cuRAND 10.4.0 (CUDA 13.0)",
      {"curand"}, kCurandValues};
  return k;
}

}  // namespace gauntlet::classifier
