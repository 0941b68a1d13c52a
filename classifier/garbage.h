// Garbage detection for generated text (smoke answers, bench samples) and NaN logprobs.
// Pure functions, thread-safe. Keys are stable: docs/CLASSIFIER.md "Garbage".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gauntlet::classifier {

struct GarbageFinding {
  std::string key;     // "empty", "whitespace", "replacement_char", "repeated_char", "repeated_token"
  std::string reason;  // short and human: "repeated character '!'"
};

// nullopt for text a model could plausibly have meant (prose in any script, code, numbers).
std::optional<GarbageFinding> FindGarbage(std::string_view text);

// The reason only ("repeated character '!'", "U+FFFD replacement characters", "empty output",
// "whitespace only", "single token repeated"), or nullopt.
std::optional<std::string> DetectGarbage(std::string_view text);

// "wrong_output:garbage:<key>"; with HasNanLogprobs use "wrong_output:garbage:nan_logprobs".
std::string GarbageSignature(const GarbageFinding& g);

// True if any logprob in an OpenAI "logprobs" object (completions: token_logprobs/top_logprobs;
// chat: content[].logprob/top_logprobs) is NaN, or a string "NaN"/"nan", or a chat logprob is null.
bool HasNanLogprobs(const nlohmann::json& logprobs);

// True if a JSON text holds a bare NaN token outside strings (Python's json.dumps writes NaN, which
// nlohmann::json refuses to parse): check the body before parsing it.
bool JsonTextHasNan(std::string_view body);

}  // namespace gauntlet::classifier
