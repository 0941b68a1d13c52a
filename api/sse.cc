#include "api/sse.h"

#include <atomic>

namespace gauntlet::api {
namespace {

std::string Frame(const daemon::Event& e) {
  if (e.type == "keep-alive") return ": keep-alive\n\n";
  if (e.id == 0) return "event: " + e.type + "\ndata: " + e.data + "\n\n";
  return "id: " + std::to_string(e.id) + "\nevent: " + e.type + "\ndata: " + e.data + "\n\n";
}

class Sse : public http::Stream {
 public:
  explicit Sse(std::shared_ptr<daemon::EventBus::Subscription> sub) : sub_(std::move(sub)) {}
  void Pull(std::function<void(std::optional<std::string>)> cb) override {
    // The first chunk tells the browser how soon to reconnect; the client knows it is subscribed.
    if (!greeted_.exchange(true)) {
      cb(std::string("retry: 1000\n: connected\n\n"));
      return;
    }
    sub_->Next([cb = std::move(cb)](std::optional<std::vector<daemon::Event>> batch) {
      if (!batch) return cb(std::nullopt);
      std::string text;
      for (const auto& e : *batch) text += Frame(e);
      cb(std::move(text));
    });
  }
  void Close() override { sub_->Close(); }

 private:
  std::shared_ptr<daemon::EventBus::Subscription> sub_;
  std::atomic<bool> greeted_{false};
};

}  // namespace

std::shared_ptr<http::Stream> SseStream(std::shared_ptr<daemon::EventBus::Subscription> sub) {
  return std::make_shared<Sse>(std::move(sub));
}

}  // namespace gauntlet::api
