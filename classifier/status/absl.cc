// absl / XLA status codes (absl::StatusCode): every value, its verdict and why (classifier/status_vocabulary.h).
// Source: enum class absl::StatusCode in abseil-cpp's absl/status/status.h
// (github.com/abseil/abseil-cpp, commit 06510e9f3d22f855d36258da342b2262344bd412), the canonical
// gRPC codes XLA, JAX and TensorFlow report;
// kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_ (20) is not a code and is left out.
// Names as StatusCodeToString and Status::ToString print them ("INTERNAL: message"), which also
// spells the gRPC codes (StatusCode.UNAVAILABLE). No messages: the text of a code is its name.
// These names are common English words, so one matches only followed by ':' or after a status-code
// word (status_vocabulary.cc). Written by hand: abseil is not installed here, so there is no
// generator row for it.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kAbslValues[] = {
    {"OK", 0, "", kPassed, "no error"},
    {"CANCELLED", 1, "", kCrashed, "the operation was cancelled, usually because another one failed first"},
    {"UNKNOWN", 2, "", kCrashed, "an unknown error"},
    {"INVALID_ARGUMENT", 3, "", kCrashed, "an invalid argument: a bug in the caller"},
    {"DEADLINE_EXCEEDED", 4, "", kTimeout, "a deadline expired before the operation finished"},
    {"NOT_FOUND", 5, "", kCrashed, "something asked for was not found"},
    {"ALREADY_EXISTS", 6, "", kCrashed, "something to create already exists"},
    {"PERMISSION_DENIED", 7, "", kCrashed, "permission denied"},
    {"RESOURCE_EXHAUSTED", 8, "", kOom, "a resource ran out (in XLA and JAX: device memory)", "oom:cuda"},
    {"FAILED_PRECONDITION", 9, "", kCrashed, "the system is not in the state the operation needs"},
    {"ABORTED", 10, "", kCrashed, "the operation was aborted (a concurrency conflict)"},
    {"OUT_OF_RANGE", 11, "", kCrashed, "an operation past the valid range"},
    {"UNIMPLEMENTED", 12, "", kUnsupported, "the operation is not implemented or supported here"},
    {"INTERNAL", 13, "", kCrashed, "an internal error: an invariant broke"},
    {"UNAVAILABLE", 14, "", kInfraError, "a service is unavailable (a transient condition of the node or network)"},
    {"DATA_LOSS", 15, "", kCrashed, "unrecoverable data loss or corruption"},
    {"UNAUTHENTICATED", 16, "", kCrashed, "no valid credentials for the operation"},
};

}  // namespace

const StatusVocabulary& AbslVocabulary() {
  static const StatusVocabulary k{
      "absl", "absl / XLA status codes (absl::StatusCode)",
      "absl/status/status.h (abseil-cpp 06510e9f)",
      {"statuscode", "status code", "absl::status", "grpc"}, kAbslValues};
  return k;
}

}  // namespace gauntlet::classifier
