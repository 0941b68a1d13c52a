// A trial's log on the worker: appended by stage runners, shipped to the daemon in chunks with
// offsets (idempotent on retry), buffered while the daemon is unreachable. Thread-safe.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace gauntlet::worker {

// Owned by the trial's runner (RunTrial); stages append to it and the LeaseKeeper ships it from
// another thread, so every method locks.
class LogSink {
 public:
  // `buffer_cap`: bytes kept unshipped at most; beyond it the oldest unshipped middle is dropped
  // (with a note in the log) so a long daemon outage cannot exhaust the worker's memory.
  explicit LogSink(size_t buffer_cap = 64u << 20) : cap_(buffer_cap) {}
  void Append(std::string_view data);  // copies `data` to the end of the log
  // The next unshipped bytes (at most `max`) and their offset; empty when all is shipped.
  std::pair<int64_t, std::string> Peek(size_t max) const;
  // Marks bytes up to `offset` as shipped.
  void Ack(int64_t offset);
  int64_t written() const;  // bytes appended so far (the log's size as the daemon will have it)
  bool pending() const;      // whether some bytes are not shipped yet

 private:
  mutable std::mutex mu_;
  std::string unshipped_;  // bytes from shipped_ on
  int64_t shipped_ = 0;    // offset of unshipped_[0]
  size_t cap_;
};

}  // namespace gauntlet::worker
