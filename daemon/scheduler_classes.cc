// Requirement classes (see scheduler.h): which queued work a node could ever run, kept so that a
// lease call never visits work that no node, or not this node, can run. A class is a distinct
// Need; a sweep is listed under the class of each target it queues; a node keeps, per class,
// whether its inventory could ever serve it. What must stay true: a sweep with a non-empty queue
// of class C is in class_sweeps_[C] (QueueOf lists it whenever a queue goes from empty to not), and
// a node's cached fits are dropped whenever its inventory may have changed (UpsertNode).
#include "core/hardware.h"
#include "daemon/scheduler.h"

namespace gauntlet::daemon {

namespace {
// Two needs are one class exactly when every field is equal.
std::string ClassKey(const Need& n) {
  std::string k = std::to_string(n.gpus) + '\x1f' + std::to_string(n.min_memory_gb) + '\x1f' + n.gpu_name;
  for (auto& a : n.arch) k += '\x1f' + a;
  k += '\x1e';
  for (auto& [key, v] : n.labels) k += key + '=' + v + '\x1f';
  return k;
}
}  // namespace

int Scheduler::ClassOf(const Need& need) {
  auto [it, fresh] = class_ids_.try_emplace(ClassKey(need), static_cast<int>(class_needs_.size()));
  if (fresh) {
    class_needs_.push_back(need);
    class_sweeps_.emplace_back();
  }
  return it->second;
}

std::deque<QueuedTrial>& Scheduler::QueueOf(Sweep& sw, const QueuedTrial& t) {
  const double cost = sw.target_cost.try_emplace(t.target, TrialCost(t)).first->second;
  auto& dq = sw.by_target[TargetKey{cost, t.target}];
  if (dq.empty()) {
    auto [c, fresh] = sw.target_class.try_emplace(t.target, 0);
    if (fresh) c->second = ClassOf(t.need);
    class_sweeps_[c->second].insert(sw.info.id);
  }
  return dq;
}

Scheduler::NodeClasses& Scheduler::ClassesOf(const TrackedNode& node) {
  NodeClasses& nc = node_classes_[node.id];
  // Only the classes made since the last call are new to this node: each is checked once.
  for (size_t c = nc.fit.size(); c < class_needs_.size(); ++c) {
    ++lease_steps_;
    const bool fits = CouldEverFit(node.inv, class_needs_[c]);
    nc.fit.push_back(fits ? 1 : 0);
    if (fits) nc.fits.push_back(static_cast<int>(c));
  }
  return nc;
}

bool Scheduler::HasQueueOf(const Sweep& sw, int cls) const {
  for (auto& [target, c] : sw.target_class) {
    if (c != cls) continue;
    auto q = FindQueue(sw, target);
    if (q != sw.by_target.end() && !q->second.empty()) return true;
  }
  return false;
}

void Scheduler::CandidateSweeps(const TrackedNode& node, std::vector<Sweep*>* out) {
  std::vector<int64_t> ids;
  for (int c : ClassesOf(node).fits) {
    auto& list = class_sweeps_[c];
    for (auto it = list.begin(); it != list.end();) {
      ++lease_steps_;
      auto sit = sweeps_.find(*it);
      if (sit == sweeps_.end() || !HasQueueOf(sit->second, c)) {
        it = list.erase(it);  // drained: QueueOf lists it again when it queues this class once more
        continue;
      }
      ids.push_back(*it);
      ++it;
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  out->reserve(ids.size());
  for (int64_t id : ids) out->push_back(&sweeps_.find(id)->second);
}

bool Scheduler::AnyNodeCouldServe(int cls) const {
  if (class_served_.size() < class_needs_.size()) class_served_.resize(class_needs_.size(), {0, false});
  auto& [version, any] = class_served_[cls];
  if (version == fleet_version_) return any;
  any = false;
  for (auto& [id, n] : nodes_)
    if (n.state != NodeState::kOffline && CouldEverFit(n.inv, class_needs_[cls])) {
      any = true;
      break;
    }
  version = fleet_version_;
  return any;
}

}  // namespace gauntlet::daemon
