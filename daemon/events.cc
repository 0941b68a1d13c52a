#include "daemon/events.h"

#include "core/utf8.h"

namespace gauntlet::daemon {

namespace {
constexpr size_t kBatchBytes = 64 * 1024; // one batch: a burst of trial changes costs one write
constexpr size_t kFrameBytes = 32;        // what a frame adds to its data ("id: ", "event: "...)
}  // namespace

class EventBus::Sub : public EventBus::Subscription, public std::enable_shared_from_this<Sub> {
 public:
  Sub(EventBus* bus, int64_t sweep) : bus_(bus), sweep_(sweep) {}
  void Next(std::function<void(std::optional<std::vector<Event>>)> cb) override {
    std::optional<std::vector<Event>> now;
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        std::vector<Event> batch;
        size_t bytes = 0;
        while (!queue_.empty() && bytes < kBatchBytes) {
          bytes += queue_.front().data.size() + kFrameBytes;
          queued_bytes_ -= std::min(queued_bytes_, queue_.front().data.size() + kFrameBytes);
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        now = std::move(batch);
      } else if (!closed_) {
        cb_ = std::move(cb);
        return;
      }
    }
    cb(std::move(now));
  }
  void Close() override {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    std::lock_guard lock(bus_->mu_);
    bus_->subs_.erase(shared_from_this());
  }
  // Queues an event (or ends the subscription when `e` is nullopt). Called with the bus lock held.
  void Push(std::optional<Event> e) {
    std::function<void(std::optional<std::vector<Event>>)> cb;
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      const size_t bytes = e ? e->data.size() + kFrameBytes : 0;
      if (!e || queue_.size() >= kFollowerEvents || queued_bytes_ + bytes > bus_->follower_bytes_) {
        closed_ = true;
        // The last event says why, so a follower that reads it knows to reconnect (resuming after
        // its last id) rather than take the end for the daemon's.
        if (e)
          queue_.push_back(Event{0, "overflow",
                                 nlohmann::json{{"reconnect", true},
                                                {"reason", "this follower fell behind: " + std::to_string(queue_.size()) +
                                                               " events (" + std::to_string(queued_bytes_) +
                                                               " bytes) were waiting, over the stream's budget of " +
                                                               std::to_string(kFollowerEvents) + " events or " +
                                                               std::to_string(bus_->follower_bytes_) + " bytes"}}
                                     .dump()});
      } else {
        queued_bytes_ += bytes;
        queue_.push_back(std::move(*e));
      }
      if (!cb_) return;
      cb = std::move(cb_);
      cb_ = nullptr;
    }
    Next(std::move(cb));
  }
  int64_t sweep() const { return sweep_; }

 private:
  EventBus* bus_;
  int64_t sweep_;
  std::mutex mu_;
  std::deque<Event> queue_;
  size_t queued_bytes_ = 0;  // data and framing of queue_
  std::function<void(std::optional<std::vector<Event>>)> cb_;
  bool closed_ = false;
};

void EventBus::Publish(const std::string& type, nlohmann::json data) {
  std::lock_guard lock(mu_);
  const int64_t id = next_id_++;
  data["type"] = type;
  data["id"] = id;
  const int64_t sweep = data.value("sweep", int64_t{0});
  PublishLocked(Event{id, type, SafeDump(data)}, sweep);  // data may hold a worker's evidence text
}

void EventBus::Publish(const DaemonEvent& e) {
  const auto* changed = std::get_if<TrialChanged>(&e);
  if (!changed) {
    Publish(std::string(EventTypeName(KindOf(e))), EventData(e));
    return;
  }
  // The common event (two per lease cycle) is written as text outside the lock, without a JSON object.
  std::string after_id = TrialChangedTextAfterId(*changed);
  std::lock_guard lock(mu_);
  const int64_t id = next_id_++;
  std::string text = "{\"id\":" + std::to_string(id);
  text += after_id;
  PublishLocked(Event{id, std::string(EventTypeName(EventKind::kTrialChanged)), std::move(text)},
                changed->sweep.value_or(0));
}

void EventBus::PublishLocked(Event e, int64_t sweep) {
  for (auto& s : subs_)
    if (s->sweep() == 0 || s->sweep() == sweep) s->Push(e);
  retained_bytes_ += e.data.size();
  retained_.emplace_back(std::move(e), sweep);
  // Bounded in count and in bytes: a burst of large events (each up to the fields' maxima) must
  // not hold the daemon's memory (issue 31: 4,096 events of 1 MB each).
  while (!retained_.empty() && (retained_.size() > kRetainEvents || retained_bytes_ > retain_bytes_)) {
    retained_bytes_ -= retained_.front().first.data.size();
    retained_.pop_front();
  }
}

size_t EventBus::retained_bytes() const {
  std::lock_guard lock(mu_);
  return retained_bytes_;
}

std::shared_ptr<EventBus::Subscription> EventBus::Subscribe(int64_t last_id, int64_t sweep) {
  auto s = std::make_shared<Sub>(this, sweep);
  std::lock_guard lock(mu_);
  if (last_id > 0)
    for (const auto& [e, e_sweep] : retained_)
      if (e.id > last_id && (sweep == 0 || e_sweep == sweep)) s->Push(e);
  subs_.insert(s);
  return s;
}

void EventBus::KeepAlive() {
  std::lock_guard lock(mu_);
  for (auto& s : subs_) s->Push(Event{0, "keep-alive", ""});
}

void EventBus::CloseAll() {
  std::set<std::shared_ptr<Sub>> subs;
  std::lock_guard lock(mu_);
  subs.swap(subs_);
  for (auto& s : subs) s->Push(std::nullopt);
}

int64_t EventBus::last_id() const {
  std::lock_guard lock(mu_);
  return next_id_ - 1;
}

}  // namespace gauntlet::daemon
