// The event bus behind GET /api/v1/events: trial and sweep changes as Server-Sent Events.
// Publish is cheap and never blocks on slow readers: each subscriber has a bounded queue, and a
// reader that falls too far behind is told to reconnect (with Last-Event-ID it resumes).
#pragma once
#include <nlohmann/json.hpp>

#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "api/http.h"

namespace gauntlet {

class EventBus {
 public:
  // Publishes {"type": type, ...data} with the next id. Thread-safe.
  void Publish(const std::string& type, nlohmann::json data);
  // A new SSE stream; replays retained events after `last_id` first. `sweep` filters to one sweep
  // (0: all). Thread-safe.
  std::shared_ptr<http::Stream> Subscribe(int64_t last_id, int64_t sweep);
  // Sends an SSE comment to every subscriber (keeps proxies from closing idle streams).
  void KeepAlive();
  // Ends every stream (shutdown).
  void CloseAll();
  int64_t last_id() const;

 private:
  class Sub;
  mutable std::mutex mu_;
  int64_t next_id_ = 1;
  std::deque<std::pair<int64_t, std::string>> retained_;  // id -> formatted frame, newest last
  std::deque<int64_t> retained_sweep_;
  std::set<std::shared_ptr<Sub>> subs_;
};

}  // namespace gauntlet
