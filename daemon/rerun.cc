// Coordinator::Rerun: a new sweep of exactly the trials of an earlier one that a selection picks
// (POST /api/v1/sweeps/{id}/rerun). Unlike RetrySweep, which re-queues infra_error and timeout trials
// in place, a rerun keeps the original's record as it is and answers "does it still fail?" with new
// trials, linked by rerun_of, so the two sweeps can be compared.
#include <set>

#include "core/verdict.h"
#include "daemon/coordinator.h"

namespace gauntlet::daemon {
using nlohmann::json;

namespace {

bool Picks(const RerunSelection& sel, const store::TrialRow& t) {
  if (t.state != TrialState::kDone || !t.verdict) return false;
  const Verdict v = *t.verdict;
  if (sel.verdicts.empty() ? (v == Verdict::kPassed || v == Verdict::kSkipped) : !sel.verdicts.count(v)) return false;
  if (!sel.config_keys.empty() || !sel.config_matches.empty()) {
    bool hit = sel.config_keys.count(t.config_key) > 0;
    for (auto& m : sel.config_matches) {
      bool all = true;
      for (auto& [p, want] : m)
        if (!t.config.contains(p) || t.config[p] != json(want)) all = false;
      hit = hit || all;
    }
    if (!hit) return false;
  }
  if (!sel.target_indexes.empty() || !sel.hardware.empty()) {
    const bool hit = sel.target_indexes.count(t.target_index) > 0 || (t.hardware && sel.hardware.count(*t.hardware));
    if (!hit) return false;
  }
  return true;
}

}  // namespace

Result<SubmitResult> Coordinator::Rerun(int64_t sweep, const RerunSelection& sel, store::SweepOrigin origin) {
  auto sw = store_.GetSweep(sweep);
  if (!sw.ok()) return sw.status();
  auto req = ParseSweepRequest(sw->request);
  if (!req.ok()) return Status::Internal("sweep " + std::to_string(sweep) + "'s request no longer parses");
  std::vector<store::TrialRow> picked;
  store::TrialFilter f;
  f.sweep = sweep;
  f.limit = 5000;
  while (true) {
    auto page = store_.ListTrials(f);
    if (!page.ok()) return page.status();
    for (auto& t : *page)
      if (Picks(sel, t)) picked.push_back(t);
    if (static_cast<int>(page->size()) < f.limit) break;
    f.after = page->back().id;
  }
  if (picked.empty())
    return Status::Invalid("no trial of sweep " + std::to_string(sweep) + " matches the selection",
                           sel.names_verdicts ? "verdicts" : "body");
  if (sel.dry_run) return SubmitResult{0, static_cast<int64_t>(picked.size())};
  // The stored request is the original's with reuse and pruning off (a rerun asks for fresh runs of
  // each picked trial; a gate must not skip one because a sibling failed again), so a restart
  // rebuilds the same targets, priority and attempts. The trials themselves are the picked ones.
  json request = sw->request;
  request["reuse"] = false;
  request["prune"] = false;
  std::string name = "rerun of " + std::to_string(sweep);
  // The original's name is kept where it fits the request's limit (a restart parses the request again).
  if (!sw->name.empty() && name.size() + sw->name.size() + 3 <= 200) name += " (" + sw->name + ")";
  request["name"] = name;
  if (auto check = ParseSweepRequest(request); !check.ok())
    return Status::Internal("the rerun's request does not parse: " + check.status().message());
  std::vector<store::NewTrial> trials;
  for (auto& t : picked) trials.push_back({t.config.dump(), t.config_key, t.target_index, t.repeat_index});
  origin.rerun_of = sweep;
  int64_t first = 0;
  auto id = store_.CreateSweep(sw->suite_id, request["name"], request, req->priority, req->max_attempts, trials,
                               &first, origin);
  if (!id.ok()) return id.status();
  events_.Publish(SweepCreated{*id, static_cast<int64_t>(trials.size()), sw->suite, sweep});
  MutexLock lock(mu_);
  auto su = SuiteById(sw->suite_id);
  if (!su.ok()) return su.status();
  SweepRequest stored = *req;
  stored.reuse = false;
  stored.prune = false;
  requests_[*id] = std::make_shared<SweepRequest>(stored);
  std::vector<QueuedTrial> queued;
  for (size_t i = 0; i < picked.size(); ++i) {
    store::TrialRow row = picked[i];
    row.id = first + static_cast<int64_t>(i);
    row.sweep_id = *id;
    QueuedTrial q = QueuedFromRow(**su, stored, row);
    q.reuse = false;
    queued.push_back(std::move(q));
  }
  SweepInfo info{*id, stored.priority, false, false, {}};
  for (auto& st : (*su)->stages) info.gate_on[st.name] = st.gate_on;
  sched_->AddSweep(info, std::move(queued));
  ServeWaitersLocked();
  return SubmitResult{*id, static_cast<int64_t>(picked.size())};
}

}  // namespace gauntlet::daemon
