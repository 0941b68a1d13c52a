// The status vocabularies GPU programs report failures through (CUDA runtime and driver, the CUDA
// libraries, NCCL, XLA/absl status codes, Python's exceptions, errno, signals), each mapped value
// by value to a verdict with its reason, one table per vocabulary in classifier/status/ naming its
// source (docs/CLASSIFIER.md "Status vocabularies"). A log line that names a value (its enum name,
// its number in the vocabulary's context, or its message text) is judged by it. Static data;
// every function here is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/verdict.h"

namespace gauntlet::classifier {

struct StatusValue {
  std::string_view name;     // the enumerator as the header spells it: "cudaErrorSystemNotReady"
  int64_t code = 0;          // its value: 802
  std::string_view message;  // what the library's own *GetErrorString returns for it, "" if none
  Verdict verdict = Verdict::kCrashed;
  std::string_view reason;   // why that verdict, in a few words ("the fabric manager has not initialised the node")
  std::string_view key = {}; // the signature's key when it must stay as before ("oom:cuda"); default below
};

struct StatusVocabulary {
  std::string_view id;       // "cuda_runtime": the signature's middle part
  std::string_view title;    // "CUDA runtime (cudaError_t)"
  std::string_view source;   // where the values come from: "driver_types.h, CUDA 13.0"
  // Lowercase words one of which must be on a line for a bare number or a short, generic message
  // to name this vocabulary's value ("cuda" for "CUDA error 802"; "nccl" for "unhandled system error").
  std::vector<std::string_view> context;
  std::span<const StatusValue> values;
};

// Every vocabulary, in the order a line naming values of two is resolved (the first wins on a tie).
// Never empty; static storage.
const std::vector<const StatusVocabulary*>& StatusVocabularies();

// How a line named the value.
enum class StatusHow : uint8_t { kName, kNumber, kMessage };

struct StatusHit {
  const StatusVocabulary* vocabulary = nullptr;
  const StatusValue* value = nullptr;
  StatusHow how = StatusHow::kName;
  // The signature: value->key when set, else "<verdict>:<vocabulary id>:<name>".
  std::string Signature() const;
};

// The substrings (ASCII lowercase) that make a line a candidate for FindStatus: every name,
// every message, and the context words that introduce a number. Static storage.
const std::vector<std::string>& StatusNeedles();

// The value called `name` (exactly as the header spells it) in the vocabulary `id` ("python",
// "errno", ...), or nullptr. Static storage.
const StatusValue* FindValue(std::string_view id, std::string_view name);

// A short list that every line naming a value of the libraries' vocabularies (CUDA, its libraries,
// NCCL, errno, absl) holds: the vocabularies' context words, which their enum names start with,
// and absl's names followed by ':' as absl prints them. The classifier's prefilter uses these, not
// the hundreds of StatusNeedles, and FindStatus reads the candidate line whole. Static storage.
const std::vector<std::string>& StatusTriggerNeedles();

// The value the line names, if any: an enumerator name as a whole word (case as in the header,
// or all upper/lower case), a message (case-insensitive; a generic one only with its
// vocabulary's context word on the line), or a number in a vocabulary's context ("CUDA error
// 802", "cudaError 802", "[802] Call to cuInit results in ..."). Among several, a name beats a
// message beats a number; then the longer match; then the earlier vocabulary. `line` is the raw
// line, `lower` the same bytes ASCII-lowercased. Pure.
std::optional<StatusHit> FindStatus(std::string_view line, std::string_view lower);

}  // namespace gauntlet::classifier
