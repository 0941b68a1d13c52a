// cuDNN (cudnnStatus_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: cudnnStatus_t in /usr/local/cuda/include/cudnn_graph.h, cuDNN 9.19.0, every value
// including the fine-grained _BAD_PARAM_*, _NOT_SUPPORTED_*, _INTERNAL_ERROR_* and
// _EXECUTION_FAILED_* ones and the deprecated v8 names (aliases of v9 values; listed last so a
// number or message resolves to the v9 name). Messages: what cudnnGetErrorString of libcudnn 9.19
// returns, which is the value's own name (for an alias, the name of the value it aliases). The
// _NOT_SUPPORTED_* family keeps the classifier's existing key unsupported:cudnn_not_supported (and
// _ARCH_MISMATCH unsupported:cudnn_arch_mismatch), so signatures stay as before.
// Made by scripts/gen-status-messages.cc cudnn (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kCudnnValues[] = {
    {"CUDNN_STATUS_SUCCESS", 0, "CUDNN_STATUS_SUCCESS", kPassed, "no error"},
    {"CUDNN_STATUS_NOT_INITIALIZED", 1001, "CUDNN_STATUS_NOT_INITIALIZED",
     kCrashed, "a cuDNN call without a valid handle (cudnnCreate failed or was skipped)"},
    {"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
     kCrashed, "cuDNN sub-libraries of different versions are installed together: a broken install"},
    {"CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", 1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH",
     kCrashed, "a serialised plan from another cuDNN version"},
    {"CUDNN_STATUS_DEPRECATED", 1004, "CUDNN_STATUS_DEPRECATED",
     kUnsupported, "the call uses an API this cuDNN build no longer provides"},
    {"CUDNN_STATUS_LICENSE_ERROR", 1005, "CUDNN_STATUS_LICENSE_ERROR",
     kInfraError, "the node's licence check for cuDNN failed"},
    {"CUDNN_STATUS_RUNTIME_IN_PROGRESS", 1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS",
     kPassed, "an asynchronous query's answer: the kernels have not finished yet, not an error"},
    {"CUDNN_STATUS_RUNTIME_FP_OVERFLOW", 1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW",
     kWrongOutput, "the computation overflowed: its output is not valid"},
    {"CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", 1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED",
     kCrashed, "a cuDNN sub-library could not be loaded: a missing or broken install"},
    {"CUDNN_STATUS_BAD_PARAM", 2000, "CUDNN_STATUS_BAD_PARAM",
     kCrashed, "an invalid argument to cuDNN: a bug in the caller"},
    {"CUDNN_STATUS_BAD_PARAM_NULL_POINTER", 2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER",
     kCrashed, "a null pointer passed to cuDNN"},
    {"CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER", 2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER",
     kCrashed, "a misaligned pointer passed to cuDNN"},
    {"CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED", 2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED",
     kCrashed, "a descriptor used before it was finalised"},
    {"CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND", 2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND",
     kCrashed, "an argument out of bounds"},
    {"CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT", 2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT",
     kCrashed, "a buffer (workspace, array) smaller than cuDNN needs"},
    {"CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH", 2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH",
     kCrashed, "objects from different streams mixed"},
    {"CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", 2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH",
     kCrashed, "tensor shapes that do not fit together"},
    {"CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES", 2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES",
     kCrashed, "duplicated entries where unique ones are required"},
    {"CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE", 2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE",
     kCrashed, "a backend attribute of the wrong type"},
    {"CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH", 2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH",
     kCrashed, "a CUDA graph that does not match the cuDNN one"},
    {"CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE", 2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE",
     kCrashed, "a descriptor of the wrong type"},
    {"CUDNN_STATUS_NOT_SUPPORTED", 3000, "CUDNN_STATUS_NOT_SUPPORTED",
     kUnsupported, "cuDNN has no engine for this problem here", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN", 3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN",
     kUnsupported, "cuDNN does not support this operation graph", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_SHAPE", 3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE",
     kUnsupported, "cuDNN does not support these shapes", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE", 3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE",
     kUnsupported, "cuDNN does not support these data types", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_LAYOUT", 3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT",
     kUnsupported, "cuDNN does not support this memory layout", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER", 3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER",
     kInfraError, "the node's driver is too old for this cuDNN", "infra_error:driver_mismatch"},
    {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART", 3006,
     "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART",
     kUnsupported, "this cuDNN build does not work with the CUDA runtime in the process",
     "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", 3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
     kUnsupported, "this cuDNN has no code for this GPU's architecture", "unsupported:cudnn_arch_mismatch"},
    {"CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING", 3008,
     "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING",
     kUnsupported, "a library cuDNN needs for this (NVRTC, cuBLASLt) is missing", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", 3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE",
     kUnsupported, "the cuDNN sub-library for this operation is not installed", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT", 3010,
     "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT",
     kUnsupported, "the engine needs more shared memory than this GPU has", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_PADDING", 3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING",
     kUnsupported, "cuDNN does not support this padding", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM", 3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM",
     kUnsupported, "the launch parameters are not supported for this problem", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API", 3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API",
     kUnsupported, "this operation has no native CUDA graph support", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE", 3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE",
     kUnsupported, "cuDNN does not support this dynamic shape", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_INTERNAL_ERROR", 4000, "CUDNN_STATUS_INTERNAL_ERROR", kCrashed, "an internal cuDNN error"},
    {"CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED", 4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED",
     kCrashed, "a runtime-compiled cuDNN kernel failed to compile"},
    {"CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE", 4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE",
     kCrashed, "cuDNN met an unexpected internal value"},
    {"CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", 4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
     kOom, "cuDNN could not allocate host memory", "oom:host"},
    {"CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", 4004,
     "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
     kOom, "cuDNN could not allocate device memory", "oom:cuda"},
    {"CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM", 4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM",
     kCrashed, "cuDNN computed invalid launch parameters"},
    {"CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED", 4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED",
     kCrashed, "cuDNN could not create a texture"},
    {"CUDNN_STATUS_EXECUTION_FAILED", 5000, "CUDNN_STATUS_EXECUTION_FAILED", kCrashed, "a cuDNN kernel failed to run"},
    {"CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", 5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER",
     kCrashed, "a CUDA driver call inside cuDNN failed"},
    {"CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", 5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS",
     kCrashed, "a cuBLAS call inside cuDNN failed"},
    {"CUDNN_STATUS_EXECUTION_FAILED_CUDART", 5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART",
     kCrashed, "a CUDA runtime call inside cuDNN failed"},
    {"CUDNN_STATUS_EXECUTION_FAILED_CURAND", 5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND",
     kCrashed, "a cuRAND call inside cuDNN failed"},
    // Deprecated v8 names (CUDNN_DEPRECATED_ENUM): logs from cuDNN 8 print them.
    {"CUDNN_STATUS_ALLOC_FAILED", 4003,
     "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
     kOom, "cuDNN could not allocate memory (v8 used this mostly for device memory; v9 aliases it to host allocation)",
     "oom:cuda"},
    {"CUDNN_STATUS_INVALID_VALUE", 2001, "CUDNN_STATUS_INVALID_VALUE",
     kCrashed, "an invalid argument to cuDNN (v8 name of BAD_PARAM)"},
    {"CUDNN_STATUS_ARCH_MISMATCH", 3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
     kUnsupported, "this cuDNN has no code for this GPU's architecture", "unsupported:cudnn_arch_mismatch"},
    {"CUDNN_STATUS_MAPPING_ERROR", 4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED",
     kCrashed, "cuDNN could not map or bind a texture"},
    {"CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", 3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING",
     kUnsupported, "a library cuDNN needs for this (NVRTC, cuBLASLt) is missing", "unsupported:cudnn_not_supported"},
    {"CUDNN_STATUS_VERSION_MISMATCH", 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
     kCrashed, "cuDNN libraries of different versions loaded together: a broken install"},
};

}  // namespace

const StatusVocabulary& CudnnVocabulary() {
  static const StatusVocabulary k{
      "cudnn", "cuDNN (cudnnStatus_t)",
      "cudnn_graph.h, cuDNN 9.19.0",
      {"cudnn"}, kCudnnValues};
  return k;
}

}  // namespace gauntlet::classifier
