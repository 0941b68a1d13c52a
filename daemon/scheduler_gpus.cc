// What the scheduler keeps of a node's GPUs beyond its leases: those its worker holds back (a
// process outlived its trial on them; workers/gpu_handback.h), which no lease may take, and grants
// that never reached their worker, given back without spending an attempt.
#include "daemon/scheduler.h"

namespace gauntlet::daemon {

bool Scheduler::SetHeldBack(int64_t node_id, std::map<int, HeldGpu> held) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return false;
  auto& old = it->second.held_gpus;
  bool changed = old.size() != held.size();
  for (auto& [g, h] : held) {
    auto o = old.find(g);
    if (o == old.end()) changed = true;
    h.since = o != old.end() ? o->second.since : clock_.NowMs();
  }
  old = std::move(held);
  return changed;
}

Result<int64_t> Scheduler::ReturnLease(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return Status::Conflict("lease " + lease_id + " is not current");
  // A lease its worker has spoken for runs there; one whose trial was cancelled ends at expiry.
  if (it->second.heard) return Status::Conflict("lease " + lease_id + " was taken up by its worker");
  if (it->second.cancel) return Status::Conflict("lease " + lease_id + "'s trial is cancelled");
  ActiveLease l = it->second;
  const int before = l.spec.attempt - 1;
  if (Status s = store_.Requeue(l.trial, before); !s.ok()) return s;
  EndLease(lease_id, false);
  QueuedTrial t = std::move(l.spec);
  t.attempt = before;
  PushFront(sweeps_[l.sweep], std::move(t));
  return l.trial;
}

}  // namespace gauntlet::daemon
