// The one reader of server-sent events (text/event-stream, the WHATWG framing): bytes in, in chunks
// cut anywhere, events out. Serves the CLI (the daemon's event stream, cli/) and the load client
// (an OpenAI-compatible streamed completion). Lines end in LF, CRLF or CR; ":" lines are comments;
// "data" lines join with LF; a blank line ends an event; "id" persists across events, as in a
// browser's EventSource. Line and event sizes are bounded, so no stream grows it without limit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gauntlet::http {

// One event. The views are valid only during the callback that receives it.
struct SseEvent {
  std::string_view event;  // the "event" field; "" when none was sent (EventSource's "message")
  std::string_view data;   // the "data" lines, joined with LF
  std::string_view id;     // the last "id" seen on this stream, in this event or before ("" if none)
};

struct SseLimits {
  size_t max_line = size_t{1} << 20;   // bytes of one line; a longer one is skipped to its end
  size_t max_event = size_t{4} << 20;  // bytes of one event's data; a larger event is dropped whole
};

// Not thread-safe: one stream's reader, fed from one thread at a time.
class SseReader {
 public:
  // Called once per complete event, in stream order; return false to stop (Feed returns at once).
  using OnEvent = std::function<bool(const SseEvent&)>;
  explicit SseReader(SseLimits limits = {}) : limits_(limits) {}

  // Reads `bytes`, the stream's next chunk, calling `on_event` for each event it completes; returns
  // false when on_event asked to stop. Bytes of an unfinished line or event are kept for the next
  // Feed (at most the limits).
  bool Feed(std::string_view bytes, const OnEvent& on_event);
  // Forgets a half-read line and event and the last id: a new connection starts afresh.
  void Reset();
  // Events dropped so far for breaking a limit (a line over max_line spoils its event).
  uint64_t dropped() const { return dropped_; }
  // The last "retry" field's milliseconds; -1 when none was sent.
  int64_t retry_ms() const { return retry_ms_; }

 private:
  bool Line(std::string_view line, const OnEvent& on_event);  // one complete line, without its ending
  bool Dispatch(const OnEvent& on_event);

  SseLimits limits_;
  std::string line_;            // an unfinished line carried between Feeds
  bool line_too_long_ = false;  // the unfinished line broke max_line: skip it to its end
  bool after_cr_ = false;       // the last byte was CR: an LF first in the next chunk ends nothing
  std::string data_, event_, id_;
  bool has_data_ = false;
  bool spoiled_ = false;        // the event being read broke a limit: drop it at its blank line
  uint64_t dropped_ = 0;
  int64_t retry_ms_ = -1;
};

}  // namespace gauntlet::http
