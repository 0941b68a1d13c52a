// Fuzzes the server-sent-events reader (http/sse_reader.h), what reads the daemon's event stream
// in the CLI and an OpenAI-compatible server's streamed answers in the load client: bytes from the
// network, cut into chunks anywhere.
//
// What must hold: no crash; the same events (type, data, id, in order) and the same drop count
// however the bytes are chunked (whole, byte by byte, or cut where the input's first byte says);
// no event's data over max_event and no event built from a line over max_line (small limits here,
// so the fuzzer reaches them).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "http/sse_reader.h"

namespace {
using gauntlet::http::SseEvent;
using gauntlet::http::SseLimits;
using gauntlet::http::SseReader;

using Seen = std::vector<std::tuple<std::string, std::string, std::string>>;

[[noreturn]] void Fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n  input (%zu bytes): %.2000s\n", what, text.size(),
               std::string(text).c_str());
  std::abort();
}

constexpr SseLimits kLimits{64, 256};

// Feeds `text` in chunks of `step` bytes (0: whole); returns the events and the drop count.
std::pair<Seen, uint64_t> Read(std::string_view text, size_t step) {
  SseReader r(kLimits);
  Seen seen;
  const SseReader::OnEvent on = [&](const SseEvent& e) {
    if (e.data.size() > kLimits.max_event) Fail("an event's data is over max_event", text);
    seen.emplace_back(std::string(e.event), std::string(e.data), std::string(e.id));
    return true;
  };
  if (step == 0) step = text.size() + 1;
  for (size_t i = 0; i < text.size(); i += step) r.Feed(text.substr(i, step), on);
  return {seen, r.dropped()};
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t cut = data[0] % 17 + 1;  // the input's first byte picks a third chunking
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto whole = Read(text, 0);
  if (Read(text, 1) != whole) Fail("byte-by-byte chunks read differently from the whole", text);
  if (Read(text, cut) != whole) Fail("chunks read differently from the whole", text);
  // Stopping at the first event stops: Feed returns false and delivers nothing more.
  SseReader r(kLimits);
  int calls = 0;
  const bool went_on = r.Feed(text, [&](const SseEvent&) { return ++calls, false; });
  if (calls > 1 || (calls == 1 && went_on) || (calls == 0 && !went_on)) Fail("a stop was not honoured", text);
  return 0;
}
