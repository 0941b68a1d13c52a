#include "daemon/notifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/verdict.h"
#include "store/compare.h"
#include "store/labels.h"
#include "store/ordered_regressions.h"

namespace gauntlet::daemon {
using nlohmann::json;

const std::vector<std::string>& WebhookEvents() {
  static const std::vector<std::string> k = {"sweep.finished", "regression.found", "node.quarantined",
                                             "verdicts.relabelled"};
  return k;
}

namespace {

bool Wants(const WebhookHook& h, const std::string& event) { return h.events.empty() || h.events.count(event) > 0; }

std::string SweepLink(const std::string& base, int64_t id) { return base + "/#/sweeps/" + std::to_string(id); }

json SweepSummary(const store::SweepRow& s, const std::string& base) {
  int64_t done = s.by_state.value(std::string(Name(TrialState::kDone)), int64_t{0}),
          passed = s.by_verdict.value(std::string(Name(Verdict::kPassed)), int64_t{0}),
          skipped = s.by_verdict.value(std::string(Name(Verdict::kSkipped)), int64_t{0});
  return {{"id", s.id}, {"name", s.name}, {"suite", s.suite}, {"suite_version", s.suite_version},
          {"trials", s.trial_count}, {"materialized", s.Stored()}, {"by_verdict", s.by_verdict}, {"passed", passed},
          {"failed", done - passed - skipped}, {"rerun_of", s.rerun_of ? json(*s.rerun_of) : json()},
          {"submitted_by", s.submitted_by}, {"source", s.source},
          {"url", base + "/api/v1/sweeps/" + std::to_string(s.id)}, {"dashboard_url", SweepLink(base, s.id)}};
}

std::string Slack(const std::string& text) { return json{{"text", text}}.dump(); }

std::string SideText(const std::optional<store::CompareEnd>& side) {
  if (!side) return "nothing";
  std::string t(Name(side->verdict));
  if (!side->signature.empty() && side->verdict != Verdict::kPassed) t += " (" + side->signature + ")";
  return t + " in trial " + std::to_string(side->trial);
}

}  // namespace

std::string SweepFinishedBody(const WebhookHook& hook, const store::SweepRow& s, int64_t regressions, const std::string& base) {
  json sum = SweepSummary(s, base);
  if (hook.format == "slack") {
    std::string counts;
    for (auto& [v, n] : s.by_verdict.items()) counts += (counts.empty() ? "" : ", ") + n.dump() + " " + v;
    return Slack("Sweep <" + SweepLink(base, s.id) + "|#" + std::to_string(s.id) + (s.name.empty() ? "" : " " + s.name) +
                 "> of " + s.suite + " finished: " + (counts.empty() ? "no trials" : counts) +
                 (regressions > 0 ? "; " + std::to_string(regressions) + " regression(s)" : ""));
  }
  return json{{"event", "sweep.finished"}, {"sweep", sum}, {"counts", s.by_verdict}, {"regressions", regressions},
              {"dashboard_url", sum["dashboard_url"]}, {"at", store::NowMs()}}
      .dump();
}

std::string RegressionBody(const WebhookHook& hook, const store::SweepRow& s, const store::CompareItem& item,
                           const std::string& base) {
  if (hook.format == "slack") {
    std::string why = item.why == store::ChangeWhy::kMetric ? "its key metric fell" : "its verdict got worse";
    char pct[32] = "";
    if (item.metric_change) snprintf(pct, sizeof pct, " (%+.1f%%)", *item.metric_change * 100);
    return Slack("Regression in " + s.suite + " on " + item.hardware + ": `" + item.config_key + "` " + why + pct +
                 ": " + SideText(item.a) + " → " + SideText(item.b) + " (sweep <" + SweepLink(base, s.id) + "|#" +
                 std::to_string(s.id) + ">)");
  }
  return json{{"event", "regression.found"}, {"suite", s.suite}, {"config_key", item.config_key},
              {"config", item.config}, {"hardware", item.hardware}, {"why", Name(item.why)},
              {"before", store::CompareEndJson(item.a)}, {"after", store::CompareEndJson(item.b)},
              {"metric_change", item.metric_change ? json(*item.metric_change) : json()},
              {"sweep", s.id}, {"dashboard_url", SweepLink(base, s.id)}, {"at", store::NowMs()}}
      .dump();
}

std::string QuarantinedBody(const WebhookHook& hook, int64_t node, const std::string& name, const std::string& reason,
                            const std::string& base) {
  if (hook.format == "slack")
    return Slack("Node " + name + " (#" + std::to_string(node) + ") was quarantined: " + reason + " (<" + base +
                 "/#/nodes|fleet>)");
  return json{{"event", "node.quarantined"}, {"node", {{"id", node}, {"name", name}}}, {"reason", reason},
              {"dashboard_url", base + "/#/nodes"}, {"at", store::NowMs()}}
      .dump();
}

std::string RelabelledBody(const WebhookHook& hook, const store::LabelNews& n, const std::string& base) {
  const store::Label& l = n.label;
  const std::string scope = l.suite ? "suite " + *l.suite : "every suite";
  const std::string who = n.withdrawn ? l.withdrawn_by : l.created_by;
  if (hook.format == "slack")
    return Slack((n.withdrawn ? "Label #" + std::to_string(l.id) + " was withdrawn" : "Label #" + std::to_string(l.id) + " was added") +
                 (who.empty() ? "" : " by " + who) + ": `" + l.signature + "` in " + scope +
                 (n.withdrawn ? " is judged as before again" : " is now " + std::string(Name(l.verdict))) + "; " +
                 std::to_string(l.rejudged) + " trial(s) re-judged (<" + base + "/#/triage|triage>)");
  return json{{"event", "verdicts.relabelled"}, {"action", n.withdrawn ? "withdrawn" : "labelled"},
              {"label", {{"id", l.id}, {"signature", l.signature}, {"match", l.match},
                         {"suite", l.suite ? json(*l.suite) : json()}, {"verdict", Name(l.verdict)},
                         {"new_signature", store::LabelSignature(l)}, {"note", l.note}}},
              {"by", who}, {"rejudged", l.rejudged}, {"trials", n.trials},
              {"dashboard_url", base + "/#/triage"},
              {"at", n.withdrawn ? *l.withdrawn_at : l.created_at}}
      .dump();
}

// An ordered-parameter regression (store/ordered_regressions.h) that `s` found: passed at one value,
// failed at a later one, with the bisection that searches the gap or the command that starts one.
std::string OrderedRegressionBody(const WebhookHook& hook, const store::SweepRow& s, const store::OrderedRegression& r,
                                  const std::string& base) {
  if (hook.format == "slack") {
    std::string next;
    if (r.first_bad) next = "first bad: " + *r.first_bad;
    else if (r.bisection) next = "bisection <" + SweepLink(base, r.bisection->id) + "|#" + std::to_string(r.bisection->id) + ">";
    else if (r.start) next = "start a bisection: `" + r.start->command + "`";
    return Slack("Regression in " + s.suite + " on " + r.hardware + " along " + r.parameter + ": `" + r.config_key +
                 "` passed at " + r.parameter + "=" + r.before.value + ", failed at " + r.after.value + " (" +
                 std::string(Name(r.after.verdict)) + "); " + std::to_string(r.untested) + " value(s) between untested" +
                 (next.empty() ? "" : "; " + next) + " (sweep <" + SweepLink(base, s.id) + "|#" + std::to_string(s.id) + ">)");
  }
  const json item = store::OrderedRegressionJson(r);
  return json{{"event", "regression.found"}, {"suite", s.suite}, {"config_key", r.config_key},
              {"config", r.config}, {"hardware", r.hardware}, {"why", "ordered"},
              {"parameter", r.parameter}, {"before", item["before"]}, {"after", item["after"]}, {"untested", r.untested},
              {"first_bad", item["first_bad"]}, {"bisection", item["bisection"]}, {"start", item["start"]},
              {"sweep", s.id}, {"dashboard_url", SweepLink(base, s.id)}, {"at", store::NowMs()}}
      .dump();
}

Notifier::Notifier(store::Store& store, EventBus& events, NotifierOptions opts, std::function<void()> queued)
    : store_(store), events_(events), opts_(std::move(opts)), queued_(std::move(queued)) {
  ScanNodes(true);
  sub_ = events_.Subscribe(events_.last_id(), 0);
  Follow();
  thread_ = std::thread([this] { Run(); });
}

Notifier::~Notifier() { Stop(); }

void Notifier::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (sub_) sub_->Close();
}

void Notifier::Follow() {
  // Runs on a publishing thread with the bus's lock held: hand the batch over, nothing more.
  sub_->Next([this](std::optional<std::vector<Event>> batch) {
    std::lock_guard lock(mu_);
    if (batch) inbox_.insert(inbox_.end(), batch->begin(), batch->end());
    else resubscribe_ = true;  // overflow or shutdown: the store scan still finds every finished sweep
    cv_.notify_all();
  });
}

void Notifier::Run() {
  constexpr auto kMinScanGap = std::chrono::milliseconds(50);
  auto last_scan = std::chrono::steady_clock::now() - kMinScanGap;
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(opts_.scan_ms), [&] { return stop_ || !inbox_.empty() || resubscribe_; });
    if (stop_) break;
    std::vector<Event> batch;
    batch.swap(inbox_);
    const bool ended = resubscribe_;
    const bool had_batch = !batch.empty();
    resubscribe_ = false;
    lock.unlock();
    if (had_batch) Follow();
    if (ended && !had_batch) {
      sub_->Close();
      sub_ = events_.Subscribe(events_.last_id(), 0);
      Follow();
    }
    // Events wake the scan so a finished sweep is announced at once, but a busy fleet publishes
    // thousands of events a second: at most one scan per kMinScanGap, so the store is asked tens
    // of times a second, not once per event batch.
    lock.lock();
    cv_.wait_until(lock, last_scan + kMinScanGap, [&] { return stop_; });
    if (stop_) break;
    lock.unlock();
    last_scan = std::chrono::steady_clock::now();
    ScanSweeps();
    ScanNodes(false);
    ScanLabels();
    lock.lock();
  }
}

void Notifier::ScanLabels() {
  // A label re-judges stored trials (store/labels.h): whoever follows the verdicts hears of it.
  if (std::none_of(opts_.hooks.begin(), opts_.hooks.end(),
                   [](const WebhookHook& h) { return Wants(h, "verdicts.relabelled"); }))
    return;
  auto news = store::UnannouncedLabelNews(store_);
  if (!news.ok()) {
    spdlog::warn("webhooks: {}", news.status().message());
    return;
  }
  for (const store::LabelNews& n : *news) {
    std::vector<store::NewDelivery> out;
    for (auto& h : opts_.hooks)
      if (Wants(h, "verdicts.relabelled"))
        out.push_back({h.url, "verdicts.relabelled", RelabelledBody(h, n, opts_.public_url)});
    auto done = store::AnnounceLabel(store_, n.label.id, n.withdrawn, out);
    if (!done.ok()) spdlog::error("webhooks: label {}: {}", n.label.id, done.status().message());
    else if (*done && queued_) queued_();
  }
}

void Notifier::ScanNodes(bool first) {
  // The scheduler quarantines a node on its own (infra errors in a row) without an event, and an
  // admin does through the API: the stored state is what both leave, so that is what is watched.
  // Only for a hook that asks for it (the hooks are fixed for the notifier's life): reading and
  // decoding every node's row tens of times a second cost a busy daemon without hooks about 1% of
  // its CPU for nothing.
  if (std::none_of(opts_.hooks.begin(), opts_.hooks.end(),
                   [](const WebhookHook& h) { return Wants(h, "node.quarantined"); }))
    return;
  auto nodes = store_.ListNodes();
  if (!nodes.ok()) return;
  std::vector<store::NewDelivery> out;
  for (auto& n : *nodes) {
    std::optional<NodeState>& seen = node_states_[n.id];
    if (!first && n.state == NodeState::kQuarantined && seen != NodeState::kQuarantined)
      for (auto& h : opts_.hooks)
        if (Wants(h, "node.quarantined"))
          out.push_back({h.url, "node.quarantined", QuarantinedBody(h, n.id, n.name, n.reason, opts_.public_url)});
    seen = n.state;
  }
  if (out.empty()) return;
  if (Status s = store::QueueDeliveries(store_, out); !s.ok()) spdlog::error("webhooks: {}", s.message());
  else if (queued_) queued_();
}

void Notifier::ScanSweeps() {
  auto ids = store::FinishedUnannounced(store_);
  if (!ids.ok()) {
    spdlog::warn("webhooks: {}", ids.status().message());
    return;
  }
  for (int64_t id : *ids) Announce(id);
}

void Notifier::Announce(int64_t id) {
  auto s = store_.GetSweep(id);
  if (!s.ok()) return;
  std::vector<store::CompareItem> regressions;    // what Compare found broken in this sweep
  std::vector<store::OrderedRegression> ordered;  // and along ordered parameters, after them
  const bool want_reg = std::any_of(opts_.hooks.begin(), opts_.hooks.end(),
                                    [](const WebhookHook& h) { return Wants(h, "regression.found"); });
  if (want_reg) {
    store::CompareSide before, now;
    before.before_sweep = id;
    now.sweep = id;
    auto cmp = store::Compare(store_, before, now, opts_.threshold);
    if (cmp.ok())
      for (store::CompareItem& it : cmp->items)
        if (it.change == store::Change::kBroke && it.a) regressions.push_back(std::move(it));
    // Along ordered parameters, across sweeps: the ones this sweep judged an end of.
    if (auto ord = store::OrderedRegressions(store_, s->suite); ord.ok())
      for (store::OrderedRegression& r : *ord)
        if (r.before.sweep == id || r.after.sweep == id) ordered.push_back(std::move(r));
  }
  const size_t found = regressions.size() + ordered.size();
  std::vector<store::NewDelivery> out;
  for (auto& h : opts_.hooks) {
    if (Wants(h, "sweep.finished"))
      out.push_back({h.url, "sweep.finished",
                     SweepFinishedBody(h, *s, static_cast<int64_t>(found), opts_.public_url)});
    if (Wants(h, "regression.found"))
      for (size_t i = 0; i < found && static_cast<int>(i) < opts_.max_regressions; ++i)
        out.push_back({h.url, "regression.found",
                       i < regressions.size() ? RegressionBody(h, *s, regressions[i], opts_.public_url)
                                              : OrderedRegressionBody(h, *s, ordered[i - regressions.size()], opts_.public_url)});
  }
  auto done = store::AnnounceSweep(store_, id, out);
  if (!done.ok()) spdlog::error("webhooks: sweep {}: {}", id, done.status().message());
  else if (*done && !out.empty() && queued_) queued_();
}

}  // namespace gauntlet::daemon
