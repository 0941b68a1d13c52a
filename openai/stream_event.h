// One event of an OpenAI-compatible streamed completion (the JSON after "data: "), read for the
// client benchmark: the text piece and the usage count. Contract: pure functions, thread-safe.
#pragma once
#include <string>
#include <string_view>

namespace gauntlet::openai {

struct StreamEvent {
  std::string piece;         // choices[0].text or choices[0].delta.content
  double usage_tokens = -1;  // usage.completion_tokens
};

// The fast path: fills *ev and returns true when the event has the shape it knows (no JSON tree
// built); false otherwise, and then ParseStreamEvent decides.
bool ScanStreamEvent(std::string_view data, StreamEvent* ev);
// The slow path: a full JSON parse; false when `data` is not a JSON object.
bool ParseStreamEvent(std::string_view data, StreamEvent* ev);
// Appends `s` to *out as the inside of a JSON string literal (quotes, backslashes, control bytes).
void JsonEscape(std::string_view s, std::string* out);

}  // namespace gauntlet::openai
