#include "workers/log_sink.h"

namespace gauntlet::worker {

void LogSink::Append(std::string_view data) {
  std::lock_guard lock(mu_);
  unshipped_.append(data);
  if (unshipped_.size() > cap_) {
    // Keep the first and last quarters of the buffer; offsets stay true because the daemon's copy
    // is addressed by offset and the note says what was cut.
    const size_t keep = cap_ / 4;
    const size_t cut = unshipped_.size() - 2 * keep;
    std::string note = "\n[gauntlet worker: " + std::to_string(cut) + " log bytes dropped while the daemon was unreachable]\n";
    unshipped_ = unshipped_.substr(0, keep) + note + unshipped_.substr(unshipped_.size() - keep);
  }
}

std::pair<int64_t, std::string> LogSink::Peek(size_t max) const {
  std::lock_guard lock(mu_);
  return {shipped_, unshipped_.substr(0, max)};
}

void LogSink::Ack(int64_t offset) {
  std::lock_guard lock(mu_);
  if (offset <= shipped_) return;
  size_t n = static_cast<size_t>(offset - shipped_);
  if (n > unshipped_.size()) n = unshipped_.size();
  unshipped_.erase(0, n);
  shipped_ += static_cast<int64_t>(n);
}

int64_t LogSink::written() const {
  std::lock_guard lock(mu_);
  return shipped_ + static_cast<int64_t>(unshipped_.size());
}

bool LogSink::pending() const {
  std::lock_guard lock(mu_);
  return !unshipped_.empty();
}

}  // namespace gauntlet::worker
