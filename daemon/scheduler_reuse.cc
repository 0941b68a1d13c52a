// Settling a queued trial by an earlier verdict instead of running it (docs/SCHEDULING.md "Reuse"): the
// scheduler asks the store for a reusable result of the same config, hardware class and
// fingerprint, and a reused verdict prunes as a reported one would.
#include "daemon/scheduler.h"

namespace gauntlet::daemon {

bool Scheduler::SettleByReuse(Sweep& sw, const QueuedTrial& t, const std::string& hardware, int64_t node,
                              std::vector<int64_t>* reused, Status* err) {
  auto prior = store_.FindReusable(t.suite_id, t.config_key, hardware, node);
  if (!prior) return false;
  // A sweep that confirms failures reuses one only once it was confirmed as often as it asks.
  if (sw.info.confirm_failures > 0 && (prior->verdict == Verdict::kCrashed || prior->verdict == Verdict::kWrongOutput ||
                                   prior->verdict == Verdict::kFallback) &&
      prior->confirmed < sw.info.confirm_failures)
    return false;
  store::ResultRow r = *prior;
  r.trial_id = t.id;
  r.attempt = t.attempt + 1;
  r.finished_at = clock_.NowMs();
  r.node_id.reset();
  r.reused = true;  // a copy: the results index counts it as reused, never as a run
  const int64_t evidence = prior->trial_id;
  r.evidence = "reused the verdict of trial " + std::to_string(evidence) + (r.evidence.empty() ? "" : ": " + r.evidence);
  if (Status s = store_.Finish(r, evidence); !s.ok()) {
    *err = s;
    return false;
  }
  if (reused) reused->push_back(t.id);
  Settled(t.id, r.verdict);
  NoteRun(sw, t, r);
  // A reused verdict settles as much as the same verdict reported now would: without this, a
  // second identical sweep would run the configs the first one's pruning skipped.
  if (sw.info.prune) {
    ReportOutcome pruned;
    Prune(sw, t, t.id, hardware, r, &pruned);
    if (reused) reused->insert(reused->end(), pruned.skipped.begin(), pruned.skipped.end());
  }
  return true;
}

}  // namespace gauntlet::daemon
