#include "daemon/events.h"

namespace gauntlet {

namespace {
constexpr size_t kRetain = 4096;     // events kept for Last-Event-ID resumption
constexpr size_t kSubQueue = 8192;   // a subscriber further behind than this is cut off
}  // namespace

class EventBus::Sub : public http::Stream, public std::enable_shared_from_this<Sub> {
 public:
  Sub(EventBus* bus, int64_t sweep) : bus_(bus), sweep_(sweep) {}
  void Pull(std::function<void(std::optional<std::string>)> cb) override {
    std::optional<std::string> now;
    bool end = false;
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        // Batch what is waiting into one write: a burst of trial changes costs one syscall.
        std::string batch;
        while (!queue_.empty() && batch.size() < 64 * 1024) {
          batch += queue_.front();
          queue_.pop_front();
        }
        now = std::move(batch);
      } else if (closed_) {
        end = true;
      } else {
        cb_ = std::move(cb);
        return;
      }
    }
    if (end) cb(std::nullopt);
    else cb(std::move(now));
  }
  void Close() override {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    std::lock_guard lock(bus_->mu_);
    bus_->subs_.erase(shared_from_this());
  }
  // Queues a frame (or ends the stream when `frame` is nullopt). Called with the bus lock held.
  void Push(std::optional<std::string> frame) {
    std::function<void(std::optional<std::string>)> cb;
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      if (!frame || queue_.size() >= kSubQueue) {
        closed_ = true;
        if (frame) queue_.push_back("event: overflow\ndata: {\"reconnect\": true}\n\n");
      } else {
        queue_.push_back(std::move(*frame));
      }
      if (!cb_) return;
      cb = std::move(cb_);
      cb_ = nullptr;
    }
    Pull(std::move(cb));
  }
  int64_t sweep() const { return sweep_; }

 private:
  EventBus* bus_;
  int64_t sweep_;
  std::mutex mu_;
  std::deque<std::string> queue_;
  std::function<void(std::optional<std::string>)> cb_;
  bool closed_ = false;
};

void EventBus::Publish(const std::string& type, nlohmann::json data) {
  std::lock_guard lock(mu_);
  const int64_t id = next_id_++;
  data["type"] = type;
  data["id"] = id;
  const int64_t sweep = data.value("sweep", int64_t{0});
  std::string frame = "id: " + std::to_string(id) + "\nevent: " + type + "\ndata: " + data.dump() + "\n\n";
  for (auto& s : subs_)
    if (s->sweep() == 0 || s->sweep() == sweep) s->Push(frame);
  retained_.emplace_back(id, std::move(frame));
  retained_sweep_.push_back(sweep);
  if (retained_.size() > kRetain) {
    retained_.pop_front();
    retained_sweep_.pop_front();
  }
}

std::shared_ptr<http::Stream> EventBus::Subscribe(int64_t last_id, int64_t sweep) {
  auto s = std::make_shared<Sub>(this, sweep);
  std::lock_guard lock(mu_);
  s->Push(std::string("retry: 1000\n: connected\n\n"));
  if (last_id > 0)
    for (size_t i = 0; i < retained_.size(); ++i)
      if (retained_[i].first > last_id && (sweep == 0 || retained_sweep_[i] == sweep)) s->Push(retained_[i].second);
  subs_.insert(s);
  return s;
}

void EventBus::KeepAlive() {
  std::lock_guard lock(mu_);
  for (auto& s : subs_) s->Push(std::string(": keep-alive\n\n"));
}

void EventBus::CloseAll() {
  std::set<std::shared_ptr<Sub>> subs;
  {
    std::lock_guard lock(mu_);
    subs.swap(subs_);
    for (auto& s : subs) s->Push(std::nullopt);
  }
}

int64_t EventBus::last_id() const {
  std::lock_guard lock(mu_);
  return next_id_ - 1;
}

}  // namespace gauntlet
