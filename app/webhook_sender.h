// The webhook sender: posts the deliveries the notifier queued (store/deliveries.h) to their
// receivers, each body signed with the receiver's secret (X-Gauntlet-Signature: sha256=HMAC), and
// retries a failed one with exponential backoff until it has been pending for `retry_for_ms`; every
// attempt is recorded on the delivery's row (GET /api/v1/webhooks/deliveries). One thread; a slow
// receiver delays the other deliveries, never the API (every attempt has a timeout).
#pragma once
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/notifier.h"
#include "store/store.h"

namespace gauntlet::app {

// A receiver: where and what (the notifier's WebhookHook) and the secret its bodies are signed with.
struct WebhookTarget {
  daemon::WebhookHook hook;
  std::string secret;  // empty: deliveries are sent unsigned
};

struct SenderOptions {
  std::vector<WebhookTarget> targets;
  int64_t backoff_ms = 1000;         // the first retry's delay; doubles each attempt
  int64_t max_backoff_ms = 60000;    // a delay is never longer
  int64_t retry_for_ms = 3600000;    // a delivery still failing this long after it was queued fails for good
  int64_t timeout_ms = 10000;        // per attempt
};

// "sha256=" and the lower-case hex HMAC-SHA256 of `body` under `secret`. Pure; thread-safe.
std::string WebhookSignature(const std::string& secret, const std::string& body);

// Splits "http://host:port/path?q" into base ("http://host:port") and target ("/path?q", "/" when
// none); Invalid for anything but an http:// URL with a host (field `field`). Pure.
Status SplitWebhookUrl(const std::string& url, std::string* base, std::string* target, const std::string& field);

class WebhookSender {
 public:
  // Starts the sending thread; `store` must outlive it. Pending deliveries left by an earlier run
  // (a restart) are sent too.
  WebhookSender(store::Store& store, SenderOptions opts);
  ~WebhookSender();  // Stop()
  void Wake();       // something was queued: look now. Thread-safe.
  void Stop();       // idempotent; an attempt in progress finishes (bounded by timeout_ms)

 private:
  void Run();
  void Attempt(const store::DeliveryRow& d);

  store::Store& store_;
  SenderOptions opts_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, woken_ = false;
  std::thread thread_;
};

}  // namespace gauntlet::app
