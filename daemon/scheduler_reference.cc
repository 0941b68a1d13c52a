// The scheduler's bookkeeping of smoke reference trials (SUITE_FORMAT.md "Differential validation"):
// a reference config's trial is leased before the other trials of its target, which wait while it
// is queued or running, so that they are judged against its answers. What must stay true: every
// queued reference trial is in queued_references_ and in its sweep's reference_trials, whichever
// way it was queued (PushFront is the one way back to the front).
#include <algorithm>

#include "daemon/scheduler.h"

namespace gauntlet::daemon {

void Scheduler::PushFront(Sweep& sw, QueuedTrial t) {
  if (t.reference) {
    queued_references_.insert(t.id);
    auto& refs = sw.reference_trials[t.target];
    if (std::find(refs.begin(), refs.end(), t.id) == refs.end()) refs.push_back(t.id);
  }
  QueueOf(sw, t).push_front(std::move(t));
  ++queued_count_;
}

std::pair<bool, size_t> Scheduler::OpenReference(Sweep& sw, int target, const std::deque<QueuedTrial>& dq) {
  auto it = sw.reference_trials.find(target);
  if (it == sw.reference_trials.end()) return {false, std::string::npos};
  auto& refs = it->second;
  bool queued = false;
  std::erase_if(refs, [&](int64_t id) {
    const bool q = queued_references_.count(id) && !tombstones_.count(id);
    queued = queued || q;
    return !q && !lease_of_trial_.count(id);
  });
  if (refs.empty()) {
    sw.reference_trials.erase(it);
    return {false, std::string::npos};
  }
  if (!queued) return {true, std::string::npos};
  // Usually at the front (references are queued there); a retried trial may stand before it.
  for (size_t i = 0; i < dq.size(); ++i)
    if (dq[i].reference && !tombstones_.count(dq[i].id)) return {true, i};
  return {true, std::string::npos};
}

}  // namespace gauntlet::daemon
