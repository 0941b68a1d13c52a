#include "daemon/scheduler.h"

#include <algorithm>
#include <random>
#include <unordered_set>

#include <spdlog/spdlog.h>

namespace gauntlet::daemon {
namespace {
std::string JoinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
// Ended leases remembered for idempotent reports (a retried report after a lost answer).
constexpr size_t kFinishedLeasesKept = 100000;
}  // namespace

Scheduler::Scheduler(Clock& clock, SchedulerStore& store, SchedulerOptions opts)
    : clock_(clock), store_(store), opts_(opts), rng_state_(std::random_device{}() | 1ull) {
  rng_state_ = (rng_state_ << 32) ^ std::random_device{}();
  // Sized for the most it ever holds, so it never rehashes 100,000 entries inside a report.
  finished_leases_.reserve(kFinishedLeasesKept + 1);
}

std::string Scheduler::NewLeaseId() {
  // xorshift64* seeded from random_device: lease ids must not be guessable across restarts only
  // loosely (tokens guard the API); uniqueness is what matters, and the epoch fences.
  auto next = [this] {
    rng_state_ ^= rng_state_ >> 12;
    rng_state_ ^= rng_state_ << 25;
    rng_state_ ^= rng_state_ >> 27;
    return rng_state_ * 2685821657736338717ull;
  };
  char buf[33];
  snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(next()),
           static_cast<unsigned long long>(next()));
  return buf;
}

void Scheduler::OrderForQueue(const SweepInfo& info, std::vector<QueuedTrial>& trials) {
  auto cheaper = [](const QueuedTrial& a, const QueuedTrial& b) { return a.cost_s < b.cost_s; };
  // Usually every trial of a sweep has the suite's one estimate: skip moving 100k trials for nothing.
  if (!std::is_sorted(trials.begin(), trials.end(), cheaper)) std::stable_sort(trials.begin(), trials.end(), cheaper);
  if (info.settle_first) OrderToSettle(info, trials);
}

void Scheduler::AddSweep(const SweepInfo& info, std::vector<QueuedTrial> trials) {
  OrderForQueue(info, trials);
  AddOrdered(info, std::move(trials));
}

void Scheduler::AddOrdered(const SweepInfo& info, std::vector<QueuedTrial> trials) {
  Sweep& sw = sweeps_[info.id];
  sw.info = info;
  const int64_t now = clock_.NowMs();
  for (auto& t : trials) {
    if (t.queued_at == 0) t.queued_at = now;
    if (t.reference) {  // first in line: the rest of its target is judged against it
      PushFront(sw, std::move(t));
      continue;
    }
    QueueOf(sw, t).push_back(std::move(t));
    ++queued_count_;
  }
}

void Scheduler::RestoreLease(const ActiveLease& l) {
  ActiveLease copy = l;
  copy.deadline = clock_.NowMs() + opts_.lease_ttl_ms;
  copy.heard = true;  // its worker had it before the restart
  next_epoch_ = std::max(next_epoch_, l.epoch + 1);
  lease_of_trial_[l.trial] = l.lease;
  auto nit = nodes_.find(l.node);
  if (nit != nodes_.end())
    for (int g : l.gpus) nit->second.busy_gpus.insert(g);
  Sweep& sw = sweeps_[l.sweep];
  if (sw.info.id == 0) sw.info.id = l.sweep;  // its AddSweep (with the info) may come later
  sw.target_cost.try_emplace(l.spec.target, TrialCost(l.spec));  // it may be queued again
  sw.running++;
  if (l.spec.reference) sw.reference_trials[l.spec.target].push_back(l.trial);
  leases_[l.lease] = std::move(copy);
}

void Scheduler::UpsertNode(TrackedNode node) {
  node.last_seen = clock_.NowMs();
  auto it = nodes_.find(node.id);
  if (it != nodes_.end()) {
    node.busy_gpus = it->second.busy_gpus;
    node.held_gpus = it->second.held_gpus;
    node.infra_streak = it->second.infra_streak;
    if (it->second.state == NodeState::kQuarantined && node.state != NodeState::kQuarantined) {
      node.state = NodeState::kQuarantined;
      node.reason = it->second.reason;
    }
  }
  // GPUs held by leases restored before the node re-registered stay busy.
  for (auto& [id, l] : leases_)
    if (l.node == node.id)
      for (int g : l.gpus) node.busy_gpus.insert(g);
  node_classes_.erase(node.id);  // its inventory may have changed: what it could serve is asked again
  FleetChanged();
  nodes_[node.id] = std::move(node);
}

const TrackedNode* Scheduler::Node(int64_t id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

Status Scheduler::SetNodeState(int64_t id, NodeState state, const std::string& reason) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return Status::NotFound("no node " + std::to_string(id));
  if (Status s = store_.SetNodeState(id, state, reason); !s.ok()) return s;
  it->second.state = state;
  it->second.reason = reason;
  if (state == NodeState::kOnline) it->second.infra_streak = 0;
  FleetChanged();
  return Status::Ok();
}

void Scheduler::Touch(int64_t id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  it->second.last_seen = clock_.NowMs();
  if (it->second.state == NodeState::kOffline) {
    FleetChanged();
    it->second.state = NodeState::kOnline;
    it->second.reason.clear();
    if (Status s = store_.SetNodeState(id, NodeState::kOnline, ""); !s.ok())
      spdlog::warn("node {}: back online, but the store still says offline: {}", id, s.message());
  }
}

int64_t Scheduler::RunningIn(int64_t sweep) const {
  auto it = sweeps_.find(sweep);
  return it == sweeps_.end() ? 0 : it->second.running;
}

bool Scheduler::Pending(int64_t sweep) const {
  auto it = sweeps_.find(sweep);
  if (it == sweeps_.end()) return false;
  if (it->second.running > 0) return true;
  for (auto& [target, dq] : it->second.by_target)
    for (auto& t : dq)
      if (!tombstones_.count(t.id)) return true;
  return false;
}

std::pair<int64_t, double> Scheduler::Saved(int64_t sweep) const {
  auto it = sweeps_.find(sweep);
  if (it == sweeps_.end()) return {0, 0};
  return {it->second.skipped, it->second.saved_gpu_s};
}

double Scheduler::SavedCost(int64_t sweep) const {
  auto it = sweeps_.find(sweep);
  return it == sweeps_.end() ? 0 : it->second.saved_cost;
}

Result<std::optional<Grant>> Scheduler::TryLease(int64_t node_id, const std::vector<int>& free_gpus,
                                                 std::vector<int64_t>* reused) {
  auto nit = nodes_.find(node_id);
  if (nit == nodes_.end()) return Status::NotFound("no node " + std::to_string(node_id) + "; register first");
  TrackedNode& node = nit->second;
  node.last_seen = clock_.NowMs();
  if (node.state != NodeState::kOnline) return std::optional<Grant>();
  // The daemon's view wins where it knows better: GPUs under a live lease are not free, whatever
  // the worker says (its report may predate the grant), nor are those its worker holds back.
  std::vector<int> free;
  for (int g : free_gpus)
    if (!node.busy_gpus.count(g) && !node.held_gpus.count(g)) free.push_back(g);
  // Only sweeps with queued work of a class this node could ever serve (scheduler_classes.cc):
  // work no node can run, however much, is never looked at. Priority first, then fair share
  // (fewest running), then the older sweep.
  std::vector<Sweep*> order;
  CandidateSweeps(node, &order);
  lease_steps_ += order.size();
  std::sort(order.begin(), order.end(), [](const Sweep* a, const Sweep* b) {
    if (a->info.priority != b->info.priority) return a->info.priority > b->info.priority;
    if (a->running != b->running) return a->running < b->running;
    if (a->last_served != b->last_served) return a->last_served < b->last_served;
    return a->info.id < b->info.id;
  });
  for (Sweep* sw : order) {
    Status err;
    auto g = LeaseOne(*sw, node, free, reused, &err);
    if (!err.ok()) return err;
    if (g) return g;
  }
  return std::optional<Grant>();
}

std::optional<Grant> Scheduler::LeaseOne(Sweep& sw, TrackedNode& node, const std::vector<int>& free,
                                         std::vector<int64_t>* reused, Status* err) {
  // A loop, not recursion: a sweep whose every trial is reusable settles them all here, and
  // tens of thousands of nested calls would overflow the stack. Two passes when the sweep settles
  // first: a node that several targets fit takes a probe (a trial that settles the most) of any
  // of them before the rest of one. The queues are keyed cheapest first (TargetKey), so each pass
  // tries the cheaper hardware's queue first.
  for (int pass = sw.info.settle_first && sw.by_target.size() > 1 ? 0 : 1; pass < 2; ++pass)
  for (auto it = sw.by_target.begin(); it != sw.by_target.end();) {
    auto& dq = it->second;
    ++lease_steps_;
    // A queue of a class this node could never serve is passed over before its tombstones are
    // dropped: the node that can serve it drops them (or the cancelled sweep's end does).
    if (auto c = sw.target_class.find(it->first.target);
        c != sw.target_class.end() && !ClassesOf(node).fit[c->second]) {
      ++it;
      continue;
    }
    while (!dq.empty() && tombstones_.count(dq.front().id)) {
      tombstones_.erase(dq.front().id);
      queued_references_.erase(dq.front().id);
      dq.pop_front();
    }
    if (dq.empty()) {
      it = sw.by_target.erase(it);
      continue;
    }
    if (pass == 0 && !dq.front().probe) {
      ++it;
      continue;
    }
    // All trials of one target share a Need, so the front decides for the whole deque, except
    // for a trial avoiding this node after an infra error: look a little further for another.
    // Cheap reject first: on a busy fleet most calls come from nodes with too few free GPUs.
    const Need& need = dq.front().need;
    auto pick = need.gpus > static_cast<int>(free.size()) ? std::nullopt : PickGpus(node.inv, free, need);
    if (!pick) {
      ++it;
      continue;
    }
    size_t k = 0;
    while (k < dq.size() && k < 64 && (dq[k].avoid_nodes.count(node.id) || tombstones_.count(dq[k].id))) ++k;
    if (k == dq.size() || k == 64) {
      // Every candidate avoids this node: take the front anyway when no other online node fits.
      bool other = false;
      for (auto& [nid, n] : nodes_)
        if (nid != node.id && n.state == NodeState::kOnline && CouldEverFit(n.inv, dq.front().need)) {
          other = true;
          break;
        }
      if (other || tombstones_.count(dq.front().id)) {
        ++it;
        continue;
      }
      k = 0;
    }
    if (!dq[k].reference && !sw.reference_trials.empty()) {
      // A reference trial of this target still to run or running: it goes first, or nothing does.
      auto [open, at] = OpenReference(sw, it->first.target, dq);
      if (open && at == std::string::npos) {
        ++it;
        continue;
      }
      if (open) k = at;
    }
    QueuedTrial t = std::move(dq[k]);
    dq.erase(dq.begin() + static_cast<long>(k));
    --queued_count_;
    queued_references_.erase(t.id);
    const std::string hardware = HardwareClass(node.inv, *pick);
    // Reuse stands in for a config's first run only: repeats 2..N are runs (docs/SCHEDULING.md "Reuse").
    const bool settled =
        sw.info.reuse && t.reuse && t.repeat == 0 && SettleByReuse(sw, t, hardware, node.id, reused, err);
    std::optional<Grant> g;
    if (!settled && err->ok()) g = GrantLease(sw, t, node, *pick, hardware, err);
    if (err->code() == Code::kConflict) {
      // The store no longer holds the trial as queued: a cancel committed it as done before telling
      // the scheduler. It is gone, not failed: look for the next one.
      *err = Status::Ok();
      if (dq.empty()) it = sw.by_target.erase(it);
      continue;
    }
    if (!err->ok()) {  // the store failed: the trial stays queued, at the front
      PushFront(sw, std::move(t));
      return std::nullopt;
    }
    if (settled) {
      it = sw.by_target.begin();  // this one is settled (the deque may be gone); look again
      continue;
    }
    if (dq.empty()) sw.by_target.erase(it);
    return g;
  }
  return std::nullopt;
}

std::optional<Grant> Scheduler::GrantLease(Sweep& sw, QueuedTrial& t, TrackedNode& node, std::vector<int> gpus,
                                           const std::string& hardware, Status* err) {
  Grant g;
  g.trial = t.id;
  g.lease = NewLeaseId();
  g.epoch = next_epoch_++;
  g.gpus = std::move(gpus);
  g.hardware = hardware;
  g.attempt = t.attempt + 1;
  const int64_t deadline = clock_.NowMs() + opts_.lease_ttl_ms;
  if (Status s = store_.Lease(t.id, node.id, g.lease, g.epoch, deadline, JoinInts(g.gpus), hardware); !s.ok()) {
    *err = s;
    return std::nullopt;
  }
  for (int x : g.gpus) node.busy_gpus.insert(x);
  lease_wait_sum_ms_ += clock_.NowMs() - t.queued_at;
  ++lease_wait_count_;
  ActiveLease l;
  l.trial = t.id;
  l.node = node.id;
  l.sweep = sw.info.id;
  l.epoch = g.epoch;
  l.deadline = deadline;
  l.lease = g.lease;
  l.gpus = g.gpus;
  l.hardware = hardware;
  t.attempt = g.attempt;
  l.spec = std::move(t);
  lease_of_trial_[l.trial] = l.lease;
  leases_[l.lease] = std::move(l);
  sw.running++;
  sw.last_served = ++serve_seq_;
  return g;
}

Result<const ActiveLease*> Scheduler::Heartbeat(const std::string& lease) {
  auto it = leases_.find(lease);
  if (it == leases_.end()) {
    if (finished_leases_.count(lease)) return Status::Conflict("lease " + lease + " has ended");
    return Status::Conflict("lease " + lease + " is not current (expired or unknown)");
  }
  it->second.deadline = clock_.NowMs() + opts_.lease_ttl_ms;
  it->second.heard = true;
  Touch(it->second.node);
  return &it->second;
}

Result<int64_t> Scheduler::CheckLease(const std::string& lease) {
  auto it = leases_.find(lease);
  if (it == leases_.end()) return Status::Conflict("lease " + lease + " is not current");
  it->second.heard = true;
  return it->second.trial;
}

void Scheduler::EndLease(const std::string& lease_id, bool reported) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  auto nit = nodes_.find(it->second.node);
  if (nit != nodes_.end())
    for (int g : it->second.gpus) nit->second.busy_gpus.erase(g);
  auto sit = sweeps_.find(it->second.sweep);
  if (sit != sweeps_.end()) sit->second.running--;
  lease_of_trial_.erase(it->second.trial);
  if (reported) {
    finished_leases_[lease_id] = it->second.trial;
    finished_order_.push_back(lease_id);
    while (finished_order_.size() > kFinishedLeasesKept) {
      finished_leases_.erase(finished_order_.front());
      finished_order_.pop_front();
    }
  }
  leases_.erase(it);
}

Result<ReportOutcome> Scheduler::Report(const std::string& lease_id, store::ResultRow r) {
  ReportOutcome out;
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) {
    if (finished_leases_.count(lease_id)) {
      out.duplicate = true;
      return out;
    }
    return Status::Conflict("lease " + lease_id + " is not current (expired, or a newer attempt holds the trial)");
  }
  ActiveLease l = it->second;
  r.trial_id = l.trial;
  r.attempt = l.spec.attempt;
  r.node_id = l.node;
  r.hardware = l.hardware;
  if (r.finished_at == 0) r.finished_at = clock_.NowMs();
  auto nit = nodes_.find(l.node);
  auto sit0 = sweeps_.find(l.sweep);
  const int confirm = sit0 == sweeps_.end() ? 0 : sit0->second.info.confirm_failures;
  {
    Status err;
    if (ConfirmAgain(l, r, &err)) {
      EndLease(lease_id, true);
      out.requeued = out.confirming = true;
      return out;
    }
    if (!err.ok()) return err;
  }
  if (!l.spec.tried.empty()) {
    // The last of a confirmation: it stands as confirmed only if every attempt said the same.
    bool same = true;
    for (auto& [v, sig] : l.spec.tried) {
      const std::string name(Name(v));
      r.attempt_counts[name] = r.attempt_counts.value(name, 0) + 1;
      same = same && v == r.verdict && sig == r.signature;
      r.flaky = r.flaky || v != r.verdict;
    }
    if (same) r.confirmed = static_cast<int>(l.spec.tried.size());
  }
  const bool infra = r.verdict == Verdict::kInfraError && !l.cancel;
  // A timeout may be a slow node or a busy moment rather than the config: it gets one more try
  // (under confirmation, the confirming attempts are those tries).
  const bool first_timeout = r.verdict == Verdict::kTimeout && !l.cancel && l.spec.timeouts == 0 && confirm == 0;
  if (infra || first_timeout) {
    if (infra && nit != nodes_.end() && ++nit->second.infra_streak >= opts_.quarantine_after &&
        nit->second.state == NodeState::kOnline) {
      // Not quarantined when the store refuses (SetNodeState changes nothing then): the next infra
      // error tries again, so the result is still filed.
      if (Status s = SetNodeState(l.node, NodeState::kQuarantined,
                                  std::to_string(nit->second.infra_streak) + " infra errors in a row; last: " + r.signature);
          !s.ok())
        spdlog::error("node {}: could not quarantine it: {}", l.node, s.message());
    }
    if (l.spec.attempt < l.spec.max_attempts) {
      // Keep the attempt's result as history, then queue it again, away from this node.
      if (Status s = store_.Requeue(l.trial, l.spec.attempt); !s.ok()) return s;
      EndLease(lease_id, true);
      QueuedTrial t = l.spec;
      if (infra) t.avoid_nodes.insert(l.node);
      if (first_timeout) ++t.timeouts;
      t.queued_at = clock_.NowMs();
      PushFront(sweeps_[l.sweep], std::move(t));
      out.requeued = true;
      return out;
    }
  } else if (nit != nodes_.end()) {
    nit->second.infra_streak = 0;
  }
  if (Status s = store_.Finish(r, std::nullopt); !s.ok()) return s;
  EndLease(lease_id, true);
  Settled(l.trial, r.verdict);
  auto sit = sweeps_.find(l.sweep);
  if (sit != sweeps_.end()) NoteRun(sit->second, l.spec, r);
  if (sit != sweeps_.end() && sit->second.info.prune) Prune(sit->second, l.spec, l.trial, l.hardware, r, &out);
  return out;
}

void Scheduler::Cancel(const std::vector<int64_t>& queued, const std::vector<int64_t>& running) {
  for (int64_t id : queued) {
    if (tombstones_.insert(id).second && queued_count_ > 0) --queued_count_;
    Settled(id, Verdict::kCancelled);
  }
  for (int64_t id : running) {
    auto it = lease_of_trial_.find(id);
    if (it != lease_of_trial_.end()) leases_[it->second].cancel = true;
  }
}

std::vector<int64_t> Scheduler::Tick() {
  const int64_t now = clock_.NowMs();
  std::vector<int64_t> changed;
  std::vector<std::string> expired;
  for (auto& [id, l] : leases_)
    if (l.deadline < now) expired.push_back(id);
  for (auto& id : expired) {
    ActiveLease l = leases_[id];
    if (l.spec.attempt < l.spec.max_attempts && !l.cancel) {
      if (!store_.Requeue(l.trial, l.spec.attempt).ok()) continue;
      EndLease(id, false);
      QueuedTrial t = l.spec;
      t.avoid_nodes.insert(l.node);
      t.queued_at = now;
      PushFront(sweeps_[l.sweep], std::move(t));
    } else {
      store::ResultRow r;
      r.trial_id = l.trial;
      r.attempt = l.spec.attempt;
      r.verdict = l.cancel ? Verdict::kCancelled : Verdict::kInfraError;
      r.signature = l.cancel ? "cancelled:by_user" : "infra_error:lease_expired";
      r.evidence = "the lease expired after " + std::to_string(l.spec.attempt) + " attempt(s)";
      r.node_id = l.node;
      r.hardware = l.hardware;
      r.finished_at = now;
      if (!store_.Finish(r, std::nullopt).ok()) continue;
      EndLease(id, false);
      Settled(l.trial, r.verdict);
    }
    changed.push_back(l.trial);
  }
  for (auto& [id, n] : nodes_) {
    if ((n.state == NodeState::kOnline || n.state == NodeState::kDraining) && now - n.last_seen > opts_.offline_after_ms) {
      bool has_lease = false;
      for (auto& [lid, l] : leases_) has_lease = has_lease || l.node == id;
      if (!has_lease && n.state == NodeState::kOnline) {
        n.state = NodeState::kOffline;
        FleetChanged();
        n.reason = "no heartbeat for " + std::to_string((now - n.last_seen) / 1000) + " s";
        if (Status s = store_.SetNodeState(id, NodeState::kOffline, n.reason); !s.ok())
          spdlog::warn("node {}: offline, but the store still says online: {}", id, s.message());
      }
    }
  }
  return changed;
}

}  // namespace gauntlet::daemon
