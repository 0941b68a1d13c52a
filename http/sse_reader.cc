#include "http/sse_reader.h"

namespace gauntlet::http {

bool SseReader::Feed(std::string_view bytes, const OnEvent& on_event) {
  size_t i = 0;
  if (after_cr_ && !bytes.empty()) {
    after_cr_ = false;
    if (bytes[0] == '\n') i = 1;  // the LF of a CRLF cut between two chunks
  }
  while (i < bytes.size()) {
    const size_t eol = bytes.find_first_of("\r\n", i);
    if (eol == std::string_view::npos) {
      // An unfinished line: keep it, unless it is already over the limit.
      const std::string_view rest = bytes.substr(i);
      if (!line_too_long_ && line_.size() + rest.size() > limits_.max_line) {
        line_too_long_ = true;
        line_.clear();
      }
      if (!line_too_long_) line_.append(rest);
      return true;
    }
    std::string_view line = bytes.substr(i, eol - i);
    if (bytes[eol] == '\r') {
      if (eol + 1 < bytes.size()) i = eol + (bytes[eol + 1] == '\n' ? 2 : 1);
      else {
        i = eol + 1;
        after_cr_ = true;
      }
    } else {
      i = eol + 1;
    }
    bool ok;
    if (line_too_long_ || line_.size() + line.size() > limits_.max_line) {
      // The line ends here but broke the limit: its event is spoiled, and the line is not read.
      line_too_long_ = false;
      line_.clear();
      spoiled_ = true;
      continue;
    }
    if (line_.empty()) {
      ok = Line(line, on_event);  // the common case: the whole line is in this chunk, not copied
    } else {
      line_.append(line);
      std::string whole;
      whole.swap(line_);
      ok = Line(whole, on_event);
      whole.clear();
      if (line_.empty()) line_.swap(whole);  // keep the buffer's capacity for the next long line
    }
    if (!ok) return false;
  }
  return true;
}

bool SseReader::Line(std::string_view line, const OnEvent& on_event) {
  if (line.empty()) return Dispatch(on_event);
  if (line[0] == ':') return true;  // a comment (the daemon's keep-alive)
  const size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon), value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (spoiled_) return true;
    if (data_.size() + value.size() + 1 > limits_.max_event) {
      spoiled_ = true;
      data_.clear();
      return true;
    }
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_.assign(value);
  } else if (field == "retry") {
    if (!value.empty() && value.size() <= 18 && value.find_first_not_of("0123456789") == std::string_view::npos)
      retry_ms_ = std::stoll(std::string(value));
  }
  return true;  // any other field is ignored, as the standard says
}

bool SseReader::Dispatch(const OnEvent& on_event) {
  const bool spoiled = spoiled_, has_data = has_data_;
  spoiled_ = has_data_ = false;
  if (spoiled) {
    ++dropped_;
    data_.clear();
    event_.clear();
    return true;
  }
  if (!has_data) {  // an event with no data is not dispatched; its type is forgotten
    event_.clear();
    return true;
  }
  SseEvent ev{event_, data_, id_};
  const bool go_on = on_event(ev);
  data_.clear();
  event_.clear();
  return go_on;
}

void SseReader::Reset() {
  line_.clear();
  line_too_long_ = after_cr_ = has_data_ = spoiled_ = false;
  data_.clear();
  event_.clear();
  id_.clear();
}

}  // namespace gauntlet::http
