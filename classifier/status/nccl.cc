// NCCL (ncclResult_t): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: ncclResult_t in /usr/local/cuda/include/nccl.h, NCCL 2.28.9 (this NCCL has no
// ncclTimeout). ncclNumResults is the count of codes, listed because the header lists it. Messages:
// what ncclGetErrorString of libnccl 2.28.9 (installed here) returns.
// Made by scripts/gen-status-messages.cc nccl (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kNcclValues[] = {
    {"ncclSuccess", 0, "no error", kPassed, "no error"},
    {"ncclUnhandledCudaError", 1, "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
     kCrashed, "a CUDA call inside NCCL failed (the CUDA error says more)"},
    {"ncclSystemError", 2, "unhandled system error (run with NCCL_DEBUG=INFO for details)",
     kInfraError, "a system call inside NCCL failed (sockets, shared memory, InfiniBand): the node"},
    {"ncclInternalError", 3, "internal error - please report this issue to the NCCL developers",
     kCrashed, "an internal NCCL error"},
    {"ncclInvalidArgument", 4, "invalid argument (run with NCCL_DEBUG=WARN for details)",
     kCrashed, "an invalid argument to NCCL: a bug in the caller"},
    {"ncclInvalidUsage", 5, "invalid usage (run with NCCL_DEBUG=WARN for details)",
     kCrashed, "NCCL used wrongly (mismatched calls or ranks): a bug in the caller"},
    {"ncclRemoteError", 6, "remote process exited or there was a network error",
     kInfraError, "a remote peer exited or the network failed"},
    {"ncclInProgress", 7, "NCCL operation in progress",
     kPassed, "a non-blocking call's answer: the operation is still in progress, not an error"},
    {"ncclNumResults", 8, "unknown result code",
     kCrashed, "the count of result codes, never a result: naming it is a bug"},
};

}  // namespace

const StatusVocabulary& NcclVocabulary() {
  static const StatusVocabulary k{
      "nccl", "NCCL (ncclResult_t)",
      "nccl.h, NCCL 2.28.9",
      {"nccl"}, kNcclValues};
  return k;
}

}  // namespace gauntlet::classifier
