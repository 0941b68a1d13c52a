// Scheduler::ConfirmAgain (see scheduler.h and docs/SCHEDULING.md "Confirmation"): a failure run
// again before it stands. The attempt's result is kept (SchedulerStore::RecordAttempt), the trial goes
// back to the front of its queue, away from the node that failed it, and Report decides at the last
// attempt whether the failure was confirmed (every attempt alike) or the config is flaky.
#include "daemon/scheduler.h"

namespace gauntlet::daemon {

bool Scheduler::ConfirmAgain(const ActiveLease& l, const store::ResultRow& r, Status* err) {
  auto sit = sweeps_.find(l.sweep);
  if (sit == sweeps_.end() || l.cancel) return false;
  const int k = sit->second.info.confirm_failures;
  const bool failure =
      r.verdict == Verdict::kCrashed || r.verdict == Verdict::kWrongOutput || r.verdict == Verdict::kTimeout ||
      r.verdict == Verdict::kFallback;  // a fallback is confirmed like any failure (issue 30)
  if (!failure || static_cast<int>(l.spec.tried.size()) >= k) return false;
  if (Status s = store_.RecordAttempt(r); !s.ok()) {
    *err = s;
    return false;
  }
  QueuedTrial t = l.spec;
  t.tried.emplace_back(r.verdict, r.signature);
  // Being measured: pruning by another trial leaves this config's repeats alone until it stands.
  sit->second.measuring.insert({t.target, t.config_key});
  // On another node when one could run it; with none, here, now: a confirmation that waited for
  // the rest of the grid would hold back the pruning that waits for it. Only the node of this
  // attempt is avoided: a trial that avoided every node it failed on would, after as many attempts
  // as there are nodes, fit none.
  t.avoid_nodes.clear();
  for (auto& [id, n] : nodes_)
    if (id != l.node && n.state == NodeState::kOnline && CouldEverFit(n.inv, t.need)) {
      t.avoid_nodes.insert(l.node);
      break;
    }
  ++t.max_attempts;              // a confirming attempt spends none of the infra-error budget
  t.queued_at = clock_.NowMs();
  // First in its target: a verdict that pruning and reuse wait for should not wait behind the grid.
  QueueOf(sit->second, t).push_front(std::move(t));
  ++queued_count_;
  return true;
}

}  // namespace gauntlet::daemon
