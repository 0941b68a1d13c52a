// cuFFT (cufftResult): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: cufftResult in /usr/local/cuda/include/cufft.h, cuFFT 12.0.0.61 (CUDA 13.0). Messages:
// none; cuFFT has no function that turns a result into text, so only names and numbers match.
// Made by scripts/gen-status-messages.cc cufft (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCufftValues[] = {
    {"CUFFT_SUCCESS", 0, "", kPassed, "no error"},
    {"CUFFT_INVALID_PLAN", 1, "", kCrashed, "an invalid plan handle"},
    {"CUFFT_ALLOC_FAILED", 2, "", kOom, "cuFFT could not allocate GPU memory", "oom:cuda"},
    {"CUFFT_INVALID_TYPE", 3, "", kCrashed, "an invalid transform type (deprecated)"},
    {"CUFFT_INVALID_VALUE", 4, "", kCrashed, "an invalid argument to cuFFT"},
    {"CUFFT_INTERNAL_ERROR", 5, "", kCrashed, "an internal cuFFT error (often a driver or runtime failure underneath)"},
    {"CUFFT_EXEC_FAILED", 6, "", kCrashed, "a cuFFT kernel failed to run"},
    {"CUFFT_SETUP_FAILED", 7, "", kCrashed, "the cuFFT library failed to initialise"},
    {"CUFFT_INVALID_SIZE", 8, "", kCrashed, "an invalid transform size"},
    {"CUFFT_UNALIGNED_DATA", 9, "", kCrashed, "unaligned data (deprecated)"},
    {"CUFFT_INVALID_DEVICE", 11, "", kCrashed, "a plan executed on another GPU than the one it was made on"},
    {"CUFFT_NO_WORKSPACE", 13, "", kCrashed, "a plan executed without its work area"},
    {"CUFFT_NOT_IMPLEMENTED", 14, "", kUnsupported, "cuFFT does not implement this"},
    {"CUFFT_NOT_SUPPORTED", 16, "", kUnsupported, "cuFFT does not support this here"},
    {"CUFFT_MISSING_DEPENDENCY", 17, "", kUnsupported, "a library cuFFT needs for this (NVRTC, nvJitLink) is missing"},
    {"CUFFT_NVRTC_FAILURE", 18, "", kCrashed, "NVRTC failed inside cuFFT"},
    {"CUFFT_NVJITLINK_FAILURE", 19, "", kCrashed, "nvJitLink failed inside cuFFT"},
    {"CUFFT_NVSHMEM_FAILURE", 20, "", kCrashed, "NVSHMEM failed inside cuFFT"},
};

}  // namespace

const StatusVocabulary& CufftVocabulary() {
  static const StatusVocabulary k{
      "cufft", "cuFFT (cufftResult)",
      "cufft.h, cuFFT 12.0.0 (CUDA 13.0)",
      {"cufft"}, kCufftValues};
  return k;
}

}  // namespace gauntlet::classifier
