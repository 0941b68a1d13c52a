// What the scheduler says of a sweep's targets against the fleet: which no node could ever run
// (the sweep page's "unmatched" warning) and what each target needs.
#include "core/hardware.h"
#include "daemon/scheduler.h"

#include <set>

namespace gauntlet::daemon {

std::vector<int> Scheduler::UnmatchableTargets(int64_t sweep) const {
  std::vector<int> out;
  auto it = sweeps_.find(sweep);
  if (it == sweeps_.end()) return out;
  for (auto& [key, dq] : it->second.by_target) {
    if (dq.empty()) continue;
    const auto& queue = dq;  // a lambda may not capture a structured binding (clang before 16)
    // Cached per requirement class until the fleet changes (scheduler_classes.cc).
    auto c = it->second.target_class.find(key.target);
    const bool any = c != it->second.target_class.end() ? AnyNodeCouldServe(c->second) : [&] {
      for (auto& [id, n] : nodes_)
        if (n.state != NodeState::kOffline && CouldEverFit(n.inv, queue.front().need)) return true;
      return false;
    }();
    if (!any) out.push_back(key.target);
  }
  return out;
}

std::vector<int64_t> Scheduler::HeldOutNodes(int64_t sweep) const {
  std::set<int64_t> out;
  auto it = sweeps_.find(sweep);
  if (it == sweeps_.end()) return {};
  for (auto& [key, dq] : it->second.by_target) {
    if (dq.empty()) continue;
    const Need& need = dq.front().need;
    bool in_service = false;
    for (auto& [id, n] : nodes_) in_service = in_service || (n.state == NodeState::kOnline && CouldEverFit(n.inv, need));
    if (in_service) continue;
    for (auto& [id, n] : nodes_)
      if ((n.state == NodeState::kQuarantined || n.state == NodeState::kDraining) && CouldEverFit(n.inv, need)) out.insert(id);
  }
  return {out.begin(), out.end()};
}

std::optional<Need> Scheduler::TargetNeed(int64_t sweep, int target) const {
  auto it = sweeps_.find(sweep);
  if (it == sweeps_.end()) return std::nullopt;
  auto dq = FindQueue(it->second, target);
  if (dq == it->second.by_target.end() || dq->second.empty()) return std::nullopt;
  return dq->second.front().need;
}

}  // namespace gauntlet::daemon
