// The event bus: trial, sweep and node changes, in the order they were published, for whoever
// follows them (GET /api/v1/events turns a subscription into Server-Sent Events; api/sse.cc).
// Publish is cheap and never blocks on slow readers: each subscriber has a bounded queue, and one
// that falls too far behind is ended with an overflow event (resuming after its last id loses nothing
// still retained).
#pragma once
#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/event_payloads.h"

namespace gauntlet::daemon {

// One published change. `id` counts from 1; `data` is the JSON text of the change, holding its
// "type" and "id" too. Two kinds carry no change and have id 0: type "keep-alive" (nothing happened,
// the follower is still served) and type "overflow" (the follower fell behind and was cut off).
struct Event {
  int64_t id = 0;
  std::string type;
  std::string data;
};

// Every method is thread-safe.
class EventBus {
 public:
  // The bounds (docs/API.md "Events"): what is retained for resumption is at most
  // kRetainEvents events and `retain_bytes` bytes of data; a follower whose unsent events pass
  // `follower_bytes` (or kFollowerEvents) is cut off with an overflow event saying so.
  static constexpr size_t kRetainEvents = 4096;
  static constexpr size_t kFollowerEvents = 8192;
  explicit EventBus(size_t retain_bytes = 16u << 20, size_t follower_bytes = 1u << 20)
      : retain_bytes_(retain_bytes), follower_bytes_(follower_bytes) {}
  // A follower's queue. Thread-safe; must not outlive its bus (it points back to it).
  class Subscription {
   public:
    virtual ~Subscription() = default;
    // Calls `cb` once, from any thread: with the events waiting (at once if there are some, else when
    // the next arrives), or with nullopt when the subscription has ended. Call again after each batch.
    // `cb` may run on a publishing thread with the bus's lock held: keep it short (hand the batch on)
    // and never call the bus or this subscription from it.
    virtual void Next(std::function<void(std::optional<std::vector<Event>>)> cb) = 0;
    // Ends the subscription (the follower went away); the bus forgets it. Needed after an overflow
    // too: only Close or CloseAll drops the bus's reference.
    virtual void Close() = 0;
  };

  // Publishes {"type": type, "id": next id, ...data} (`data` an object) to every follower (one that
  // follows a sweep only if data's "sweep" names it), and retains it for resumption.
  void Publish(const std::string& type, nlohmann::json data);
  // Publishes the coordinator's typed change `e`: its type name and EventData, as above.
  void Publish(const DaemonEvent& e);
  // A new subscription; events retained after `last_id` come first (0: none). `sweep` filters to one
  // sweep's changes (0: all); older ones than the retained window are gone. The bus keeps a reference
  // until Close or CloseAll.
  std::shared_ptr<Subscription> Subscribe(int64_t last_id, int64_t sweep);
  // Queues a keep-alive event for every subscriber (keeps proxies from closing idle streams).
  void KeepAlive();
  // Ends every subscription (shutdown): each follower gets what it has queued, then nullopt.
  void CloseAll();
  int64_t last_id() const;  // the latest published event's id; 0 if none
  // Bytes of event data retained for resumption now (at most the retain bound).
  size_t retained_bytes() const;

 private:
  class Sub;
  // Queues `e` (of sweep `sweep`, 0: none) for every follower of it and retains it. Needs mu_.
  void PublishLocked(Event e, int64_t sweep);
  mutable std::mutex mu_;
  int64_t next_id_ = 1;
  const size_t retain_bytes_, follower_bytes_;
  std::deque<std::pair<Event, int64_t>> retained_;  // (event, its sweep), newest last
  size_t retained_bytes_ = 0;                      // the data bytes in retained_
  std::set<std::shared_ptr<Sub>> subs_;
};

}  // namespace gauntlet::daemon
