// The Coordinator's read side (see coordinator.h): the fleet, batch launchers' reports, a sweep's
// live extras (running, unmatched targets, pruning and reuse) and the /metrics numbers. Every call
// takes the coordinator's mutex: the scheduler's state is read consistently.
#include <algorithm>

#include "core/hardware.h"
#include "daemon/coordinator.h"

namespace gauntlet {
using nlohmann::json;

json Coordinator::NodesJson() {
  auto rows = store_.ListNodes();
  json out = json::array();
  if (!rows.ok()) return out;
  MutexLock lock(mu_);
  const int64_t now = NowMs();
  for (auto& n : *rows) {
    json j = {{"id", n.id}, {"name", n.name}, {"inventory", n.inventory}, {"labels", n.labels},
              {"fingerprint", n.fingerprint}, {"hardware", n.hardware}, {"state", n.state}, {"reason", n.reason},
              {"registered_at", n.registered_at}, {"last_heartbeat", n.last_heartbeat}};
    if (const NodeState* st = sched_->Node(n.id)) {
      j["state"] = st->state;
      j["reason"] = st->reason;
      j["last_heartbeat"] = st->last_seen;
      j["busy_gpus"] = st->busy_gpus;
      json held = json::array();
      for (auto& [g, h] : st->held_gpus)
        held.push_back({{"gpu", g}, {"reason", h.reason}, {"pids", h.pids}, {"since", h.since}});
      j["held_back"] = std::move(held);
      j["waiting"] = waiters_.count(n.id) > 0;
    }
    if (!j.contains("held_back")) j["held_back"] = json::array();
    j["heartbeat_age_s"] = (now - j["last_heartbeat"].get<int64_t>()) / 1000.0;
    json running = json::array();
    for (auto& [lid, l] : sched_->leases())
      if (l.node == n.id) running.push_back({{"trial", l.trial}, {"sweep", l.sweep}, {"gpus", l.gpus}});
    j["running"] = running;
    out.push_back(j);
  }
  return out;
}

Result<json> Coordinator::NodeJson(int64_t node) {
  for (auto& n : NodesJson())
    if (n.value("id", int64_t{0}) == node) return n;
  return Status(Code::kNotFound, "no node " + std::to_string(node), "id");
}

void Coordinator::SetLauncher(const std::string& name, const json& report) {
  MutexLock lock(mu_);
  launchers_[name] = {report, NowMs()};
}

json Coordinator::LaunchersJson() {
  MutexLock lock(mu_);
  json out = json::array();
  const int64_t now = NowMs();
  for (auto it = launchers_.begin(); it != launchers_.end();) {
    // A launcher that stopped reporting is gone; its jobs (if any) show up as workers or not at all.
    if (now - it->second.second > 10 * 60 * 1000) {
      it = launchers_.erase(it);
      continue;
    }
    const json& r = it->second.first;
    out.push_back({{"name", it->first},
                   {"kind", r.value("kind", "slurm")},
                   {"age_s", (now - it->second.second) / 1000.0},
                   {"jobs", r.value("jobs", json::array())},
                   {"queued", r.value("queued", json())},
                   {"unplaceable", r.value("unplaceable", json())}});
    ++it;
  }
  return out;
}

json Coordinator::SweepExtras(int64_t sweep) {
  MutexLock lock(mu_);
  json j;
  j["running"] = sched_->RunningIn(sweep);
  json unmatched = json::array();
  auto rit = requests_.find(sweep);
  for (int t : sched_->UnmatchableTargets(sweep)) {
    json target = rit != requests_.end() && t < static_cast<int>(rit->second->targets.size())
                      ? rit->second->targets[t].raw
                      : json(t);
    // Name the requirement no node meets and what the nodes are, so a person sees what to change.
    std::string nodes;
    for (auto& [id, n] : sched_->nodes())
      if (n.state != "offline") nodes += (nodes.empty() ? "" : ", ") + n.name + " (" + NodeHardware(n.inv) + ")";
    auto need = sched_->TargetNeed(sweep, t);
    const std::string wants = need ? DescribeNeed(*need) : "its requirements";
    unmatched.push_back({{"target", target}, {"index", t}, {"requires", wants},
                         {"nodes", nodes.empty() ? "none registered" : nodes},
                         {"detail", wants + "; nodes: " + (nodes.empty() ? "none registered" : nodes) +
                                        ": no registered node can ever run this target; its trials wait for one"}});
  }
  j["unmatched_targets"] = unmatched;
  auto [skipped, saved] = sched_->Saved(sweep);
  j["pruned"] = {{"trials", skipped}, {"gpu_hours_saved", saved / 3600.0}};
  // Priced only where the request priced a target: otherwise it would only repeat gpu_hours_saved.
  if (rit != requests_.end() && std::any_of(rit->second->targets.begin(), rit->second->targets.end(),
                                            [](const Target& t) { return t.cost_per_gpu_hour.has_value(); }))
    j["pruned"]["cost_saved"] = sched_->SavedCost(sweep);
  // What reuse matched on, so a reader knows how much "the same" means for this suite.
  if (rit != requests_.end() && rit->second->reuse) {
    const Suite* su = nullptr;
    for (auto& [id, s] : suites_)
      if (s->name == rit->second->suite) su = s.get();
    const bool fp = !su || su->definition.contains("fingerprint");
    j["reuse"] = {{"keyed_on", fp ? "suite version, hardware class and fingerprint"
                                  : "suite version and hardware class (the suite has no fingerprint command)"}};
  }
  return j;
}

json Coordinator::Stats() {
  MutexLock lock(mu_);
  json nodes = json::object();
  for (auto& [id, n] : sched_->nodes()) nodes[n.state] = nodes.value(n.state, 0) + 1;
  auto [wait_ms, waits] = sched_->LeaseWait();
  return {{"queued", sched_->queued()}, {"leased", sched_->leased()}, {"nodes", nodes},
          {"waiting_workers", waiters_.size()}, {"lease_wait_sum_s", wait_ms / 1000.0}, {"lease_wait_count", waits}};
}

}  // namespace gauntlet
