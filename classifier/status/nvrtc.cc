// NVRTC (nvrtcResult): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: nvrtcResult in /usr/local/cuda/include/nvrtc.h, CUDA 13.0. Messages: what
// nvrtcGetErrorString of libnvrtc 13.0 returns, which is the value's own name.
// Made by scripts/gen-status-messages.cc nvrtc (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kNvrtcValues[] = {
    {"NVRTC_SUCCESS", 0, "NVRTC_SUCCESS", kPassed, "no error"},
    {"NVRTC_ERROR_OUT_OF_MEMORY", 1, "NVRTC_ERROR_OUT_OF_MEMORY",
     kOom, "NVRTC ran out of host memory while compiling", "oom:host"},
    {"NVRTC_ERROR_PROGRAM_CREATION_FAILURE", 2, "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
     kCrashed, "NVRTC could not create the program"},
    {"NVRTC_ERROR_INVALID_INPUT", 3, "NVRTC_ERROR_INVALID_INPUT", kCrashed, "an invalid argument to NVRTC"},
    {"NVRTC_ERROR_INVALID_PROGRAM", 4, "NVRTC_ERROR_INVALID_PROGRAM", kCrashed, "an invalid program handle"},
    {"NVRTC_ERROR_INVALID_OPTION", 5, "NVRTC_ERROR_INVALID_OPTION",
     kUnsupported, "NVRTC rejected an option (most often an -arch this NVRTC does not know)"},
    {"NVRTC_ERROR_COMPILATION", 6, "NVRTC_ERROR_COMPILATION",
     kCrashed, "the runtime-compiled source failed to compile"},
    {"NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", 7, "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
     kCrashed, "an NVRTC built-in operation failed"},
    {"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 8, "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
     kCrashed, "name expressions added after compilation"},
    {"NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION", 9, "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
     kCrashed, "a lowered name asked for before compilation"},
    {"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 10, "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
     kCrashed, "an invalid name expression"},
    {"NVRTC_ERROR_INTERNAL_ERROR", 11, "NVRTC_ERROR_INTERNAL_ERROR", kCrashed, "an internal NVRTC error"},
    {"NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 12, "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
     kCrashed, "NVRTC could not write its timing file"},
    {"NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED", 13, "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
     kCrashed, "a precompiled-header query with no header created"},
    {"NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 14, "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
     kCrashed, "the precompiled-header heap (a fixed size) ran out"},
    {"NVRTC_ERROR_PCH_CREATE", 15, "NVRTC_ERROR_PCH_CREATE", kCrashed, "a precompiled header could not be created"},
    {"NVRTC_ERROR_CANCELLED", 16, "NVRTC_ERROR_CANCELLED", kCrashed, "the compilation was cancelled by its callback"},
    {"NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED", 17, "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
     kCrashed, "NVRTC could not write its time-trace file"},
};

}  // namespace

const StatusVocabulary& NvrtcVocabulary() {
  static const StatusVocabulary k{
      "nvrtc", "NVRTC (nvrtcResult)",
      "nvrtc.h, CUDA 13.0",
      {"nvrtc"}, kNvrtcValues};
  return k;
}

}  // namespace gauntlet::classifier
