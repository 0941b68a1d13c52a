// The Coordinator's read side (see coordinator.h): the fleet, batch launchers' reports, a sweep's
// live extras (running, unmatched targets, pruning and reuse) and the /metrics numbers. Every call
// takes the coordinator's mutex: the scheduler's state is read consistently. Each answers a struct;
// api/views.h turns it into JSON and prose, outside the lock.
#include <algorithm>

#include "core/field_limits.h"
#include "core/hardware.h"
#include "daemon/coordinator.h"

namespace gauntlet::daemon {

namespace {
constexpr int64_t kLauncherLiveMs = 10 * 60 * 1000;  // a report older than this is gone
}  // namespace

std::vector<NodeView> Coordinator::Nodes() {
  auto rows = store_.ListNodes();
  std::vector<NodeView> out;
  if (!rows.ok()) return out;
  out.reserve(rows->size());
  MutexLock lock(mu_);
  const int64_t now = clock_->NowMs();
  for (auto& n : *rows) {
    NodeView v;
    v.row = std::move(n);
    if (const TrackedNode* st = sched_->Node(v.row.id)) {
      v.live = true;
      v.row.state = st->state;
      v.row.reason = st->reason;
      v.row.last_heartbeat = st->last_seen;
      v.busy_gpus = st->busy_gpus;
      v.held_back = st->held_gpus;
      auto w = waiters_.find(v.row.id);
      v.waiting = w != waiters_.end();
      // Its long-poll is open this moment: the worker is there now, whatever the clock thread's
      // last touch of it says.
      if (v.waiting && w->second.w.open()) v.row.last_heartbeat = now;
    }
    v.heartbeat_age_s = (now - v.row.last_heartbeat) / 1000.0;
    for (auto& [lid, l] : sched_->leases())
      if (l.node == v.row.id) v.running.push_back({l.trial, l.sweep, l.gpus});
    out.push_back(std::move(v));
  }
  return out;
}

Result<NodeView> Coordinator::Node(int64_t node) {
  for (auto& n : Nodes())
    if (n.row.id == node) return std::move(n);
  return Status(Code::kNotFound, "no node " + std::to_string(node), "id");
}

Status Coordinator::SetLauncher(const std::string& name, LauncherReport report) {
  MutexLock lock(mu_);
  const int64_t now = store::NowMs();
  auto it = launchers_.find(name);
  const bool live = it != launchers_.end() && now - it->second.second <= kLauncherLiveMs;
  // A launcher's name belongs to the credential that reports for it (issue 31: any worker
  // credential could overwrite the Slurm launcher's report), until its report goes stale.
  if (live && it->second.first.owner != report.owner)
    return Status(Code::kForbidden, "launcher '" + name + "' reports with another credential", "name");
  if (it == launchers_.end() && launchers_.size() >= limits::kLaunchers) {
    for (auto jt = launchers_.begin(); jt != launchers_.end();)
      jt = now - jt->second.second > kLauncherLiveMs ? launchers_.erase(jt) : std::next(jt);
    if (launchers_.size() >= limits::kLaunchers)
      return Status::Invalid("at most " + std::to_string(limits::kLaunchers) + " launchers report at once", "name");
  }
  launchers_[name] = {std::move(report), now};
  return Status::Ok();
}

std::vector<LauncherView> Coordinator::Launchers() {
  MutexLock lock(mu_);
  std::vector<LauncherView> out;
  const int64_t now = store::NowMs();
  for (auto it = launchers_.begin(); it != launchers_.end();) {
    // A launcher that stopped reporting is gone; its jobs (if any) show up as workers or not at all.
    if (now - it->second.second > kLauncherLiveMs) {
      it = launchers_.erase(it);
      continue;
    }
    out.push_back({it->first, it->second.first, (now - it->second.second) / 1000.0});
    ++it;
  }
  return out;
}

SweepLive Coordinator::SweepExtras(int64_t sweep) {
  MutexLock lock(mu_);
  SweepLive j;
  j.running = sched_->RunningIn(sweep);
  auto rit = requests_.find(sweep);
  for (int t : sched_->UnmatchableTargets(sweep)) {
    nlohmann::json target = rit != requests_.end() && t < static_cast<int>(rit->second->targets.size())
                                ? rit->second->targets[t].raw
                                : nlohmann::json(t);
    j.unmatched.push_back({std::move(target), t, sched_->TargetNeed(sweep, t)});
  }
  // What the nodes are, so a person sees what to change (api/views.cc words it).
  if (!j.unmatched.empty())
    for (auto& [id, n] : sched_->nodes())
      if (n.state != NodeState::kOffline) j.nodes.emplace_back(n.name, NodeHardware(n.inv));
  for (int64_t id : sched_->HeldOutNodes(sweep)) {
    auto n = sched_->nodes().find(id);
    if (n != sched_->nodes().end()) j.held_out.push_back({id, n->second.name, n->second.state, n->second.reason});
  }
  auto [skipped, saved] = sched_->Saved(sweep);
  j.pruned_trials = skipped;
  j.saved_gpu_s = saved;
  // Priced only where the request priced a target: otherwise it would only repeat gpu_hours_saved.
  if (rit != requests_.end() && std::any_of(rit->second->targets.begin(), rit->second->targets.end(),
                                            [](const Target& t) { return t.cost_per_gpu_hour.has_value(); }))
    j.cost_saved = sched_->SavedCost(sweep);
  // What reuse matched on, so a reader knows how much "the same" means for this suite.
  if (rit != requests_.end() && rit->second->reuse) {
    const Suite* su = nullptr;
    for (auto& [id, s] : suites_)
      if (s->name == rit->second->suite) su = s.get();
    j.reuse_keyed_on_fingerprint = !su || su->definition.contains("fingerprint");
    j.repeats = rit->second->repeats;
  }
  return j;
}

CoordinatorStats Coordinator::Stats() {
  MutexLock lock(mu_);
  CoordinatorStats st;
  for (auto& [id, n] : sched_->nodes()) ++st.nodes[n.state];
  std::tie(st.lease_wait_sum_ms, st.lease_wait_count) = sched_->LeaseWait();
  st.queued = static_cast<int64_t>(sched_->queued());
  st.leased = static_cast<int64_t>(sched_->leased());
  st.waiting_workers = static_cast<int64_t>(waiters_.size());
  return st;
}

}  // namespace gauntlet::daemon
