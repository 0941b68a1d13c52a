#include "app/webhook_sender.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "net/http_client.h"
#include "store/deliveries.h"

namespace gauntlet::app {

std::string WebhookSignature(const std::string& secret, const std::string& body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(body.data()),
       body.size(), mac, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

Status SplitWebhookUrl(const std::string& url, std::string* base, std::string* target, const std::string& field) {
  // https:// receivers (Slack's, most hosted ones) are verified against the system's trust store by
  // net::Client, chain and host name, as the CLI and workers verify the daemon.
  std::string scheme;
  for (const char* s : {"http://", "https://"})
    if (url.rfind(s, 0) == 0) scheme = s;
  if (scheme.empty()) return Status::Invalid("a webhook URL starts with http:// or https://: '" + url + "'", field);
  const size_t slash = url.find('/', scheme.size());
  *base = url.substr(0, slash);
  *target = slash == std::string::npos ? "/" : url.substr(slash);
  if (base->size() == scheme.size()) return Status::Invalid("a webhook URL names a host: '" + url + "'", field);
  return Status::Ok();
}

WebhookSender::WebhookSender(store::Store& store, SenderOptions opts) : store_(store), opts_(std::move(opts)) {
  thread_ = std::thread([this] { Run(); });
}

WebhookSender::~WebhookSender() { Stop(); }

void WebhookSender::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void WebhookSender::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::Run() {
  while (true) {
    auto due = store::DueDeliveries(store_, store::NowMs(), 50);
    if (due.ok())
      for (auto& d : *due) {
        {
          std::lock_guard lock(mu_);
          if (stop_) return;
        }
        Attempt(d);
      }
    else
      spdlog::warn("webhooks: {}", due.status().message());
    // Sleep until the next pending delivery is due (a second at most: a row queued by another
    // writer without a Wake is still found), or a Wake.
    int64_t wait_ms = 1000;
    if (auto next = store::NextDeliveryDue(store_); next.ok() && *next)
      wait_ms = std::clamp<int64_t>(**next - store::NowMs(), 0, 1000);
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (due.ok() && due->size() == 50) continue;  // more are due now
    cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return stop_ || woken_; });
    woken_ = false;
    if (stop_) return;
  }
}

void WebhookSender::Attempt(const store::DeliveryRow& d) {
  const int64_t now = store::NowMs();
  auto t = std::find_if(opts_.targets.begin(), opts_.targets.end(),
                        [&](const WebhookTarget& x) { return x.hook.url == d.hook; });
  if (t == opts_.targets.end()) {
    // Queued for a receiver the daemon's config no longer names (edited across a restart).
    if (Status s = store::RecordAttempt(store_, d.id, now, 0, "the webhook is no longer configured", false, true, now);
        !s.ok())
      spdlog::error("webhooks: {}", s.message());
    return;
  }
  std::string base, target;
  int status = 0;
  std::string error;
  if (Status s = SplitWebhookUrl(d.hook, &base, &target, "url"); !s.ok()) {
    error = s.message();
  } else {
    net::Client client(base, "");
    std::vector<std::pair<std::string, std::string>> headers = {{"X-Gauntlet-Event", d.event},
                                                                {"X-Gauntlet-Delivery", std::to_string(d.id)}};
    if (!t->secret.empty()) headers.emplace_back("X-Gauntlet-Signature", WebhookSignature(t->secret, d.body));
    client.SetExtraHeaders(std::move(headers));
    auto r = client.Send("POST", target, d.body, "application/json", std::chrono::milliseconds(opts_.timeout_ms));
    if (!r.ok()) error = r.status().message();
    else {
      status = r->status;
      if (status < 200 || status >= 300) error = "answered " + std::to_string(status);
    }
  }
  const bool ok = error.empty();
  // Exponential backoff from the attempts made so far (this one included), capped.
  int64_t delay = opts_.backoff_ms;
  for (int i = 0; i < d.attempts && delay < opts_.max_backoff_ms; ++i) delay *= 2;
  delay = std::min(delay, opts_.max_backoff_ms);
  const bool give_up = !ok && store::NowMs() + delay - d.created_at > opts_.retry_for_ms;
  if (!ok)
    spdlog::warn("webhooks: delivery {} ({} to {}) attempt {}: {}{}", d.id, d.event, d.hook, d.attempts + 1, error,
                 give_up ? "; giving up" : "");
  if (Status s = store::RecordAttempt(store_, d.id, store::NowMs(), status, error, ok, give_up, store::NowMs() + delay); !s.ok())
    spdlog::error("webhooks: {}", s.message());
}

}  // namespace gauntlet::app
