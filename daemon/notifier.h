// The notifier: turns what happens into webhook deliveries (the sender in api/ posts them). It
// wakes on the event bus's events and scans the store (at least every scan_ms): a sweep whose every trial is done is announced
// once (sweep.finished, and regression.found for each config × hardware of it that got worse than
// the result before it), a node that is quarantined is announced (node.quarantined), a label added or
// withdrawn in the triage loop is announced with the trials it re-judged (verdicts.relabelled). Deliveries are
// queued in the store in the same write that marks the sweep announced (store/deliveries.h), so a
// restart loses none and repeats none. No HTTP here.
#pragma once
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/events.h"
#include "store/deliveries.h"
#include "store/labels.h"
#include "store/store.h"

namespace gauntlet::daemon {

// The events a webhook may subscribe to, in the order docs/API.md lists them.
const std::vector<std::string>& WebhookEvents();

// One receiver as the notifier needs it (its secret is the sender's business).
struct WebhookHook {
  std::string url;
  std::set<std::string> events;  // empty: all
  std::string format = "json";   // json | slack (Slack-compatible {"text": ...})
};

struct NotifierOptions {
  std::vector<WebhookHook> hooks;
  std::string public_url;    // base of the links in messages (no trailing '/')
  double threshold = 0.1;    // a key-metric fall that is a regression
  int64_t scan_ms = 1000;    // how often the store is scanned for finished sweeps besides events
  int max_regressions = 50;  // regression.found deliveries per sweep at most (the rest are counted)
};

// The bodies the notifier queues, built from what they announce (pure; exposed for tests).
// `hook.format` picks JSON or Slack text.
std::string SweepFinishedBody(const WebhookHook& hook, const store::SweepRow& s, int64_t regressions,
                              const std::string& public_url);
std::string RegressionBody(const WebhookHook& hook, const store::SweepRow& s, const nlohmann::json& item,
                           const std::string& public_url);
std::string RelabelledBody(const WebhookHook& hook, const store::LabelNews& n, const std::string& public_url);
std::string QuarantinedBody(const WebhookHook& hook, int64_t node, const std::string& name, const std::string& reason,
                            const std::string& public_url);

class Notifier {
 public:
  // Starts following `events` and scanning `store` (both must outlive it); `queued` is called (from
  // the notifier's thread) after deliveries are queued, so the sender looks at once.
  Notifier(store::Store& store, EventBus& events, NotifierOptions opts, std::function<void()> queued);
  ~Notifier();  // Stop()
  void Stop();  // idempotent; joins the thread

 private:
  void Run();
  void ScanSweeps();
  void Announce(int64_t sweep);
  void ScanNodes(bool first);  // first: only learns the states (a restart announces nothing again)
  void ScanLabels();           // labels added or withdrawn and not announced yet (verdicts.relabelled)
  void Follow();

  store::Store& store_;
  EventBus& events_;
  NotifierOptions opts_;
  std::function<void()> queued_;
  std::shared_ptr<EventBus::Subscription> sub_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> inbox_;        // events only wake the scans; what they say is read from the store
  std::map<int64_t, std::optional<NodeState>> node_states_;  // the notifier thread's own; nullopt: not seen yet
  bool stop_ = false;
  bool resubscribe_ = false;
  std::thread thread_;
};

}  // namespace gauntlet::daemon
