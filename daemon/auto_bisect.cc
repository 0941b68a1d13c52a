// Automatic bisection (sweep field auto_bisect): when a sweep's finish makes a regression along an
// ordered parameter appear in the stored results (store/ordered_regressions.h: a config that passed
// at one value and failed at the next value tested on one hardware class, whether the passing value
// was tested by this sweep or an earlier one), a bisection of that gap starts by itself, unless one
// already covers it (running or finished). The search runs from the clock thread, outside the
// Coordinator's lock (Bisect takes it); one thread starts them all, so two finishing sweeps never
// start the same bisection twice.
#include <spdlog/spdlog.h>

#include "core/bisect_request.h"
#include "core/verdict.h"
#include "daemon/coordinator.h"
#include "store/ordered_regressions.h"

namespace gauntlet::daemon {
using nlohmann::json;

namespace {
constexpr size_t kMaxAutoBisections = 16;  // per sweep: a broken grid must not start hundreds
}  // namespace

std::vector<BisectRequest> AutoBisections(const std::vector<store::OrderedRegression>& regressions,
                                          const std::set<std::pair<std::string, std::string>>& touched,
                                          const SweepRequest& req) {
  std::vector<BisectRequest> out;
  for (const store::OrderedRegression& r : regressions) {
    if (r.bisection || !r.start) continue;
    const bool ours =
        touched.count({r.before.config_key, r.hardware}) || touched.count({r.after.config_key, r.hardware});
    if (!ours) continue;
    BisectRequest b = r.start->request;
    b.priority = req.priority;
    if (req.confirm_failures) b.confirm_failures = req.confirm_failures;
    b.name = "auto bisect " + b.parameter + " " + b.good + ".." + b.bad;
    out.push_back(std::move(b));
    if (out.size() >= kMaxAutoBisections) break;
  }
  return out;
}

void Coordinator::AutoBisectLocked(int64_t sweep) {
  auto rit = requests_.find(sweep);
  if (rit == requests_.end() || !rit->second->auto_bisect || searches_.count(sweep)) return;
  // An expanding sweep has trials to come however many of those queued are done (its last chunk
  // looks again, daemon/submit.cc).
  if (sched_->Pending(sweep) || auto_bisected_.count(sweep) || expanding_.count(sweep)) return;
  auto_bisected_.insert(sweep);
  auto_bisect_due_.push_back(sweep);
  tick_cv_.notify_all();
}

void Coordinator::RunAutoBisections() {
  std::vector<int64_t> due;
  {
    MutexLock lock(mu_);
    due.swap(auto_bisect_due_);
  }
  for (int64_t sweep : due) {
    // The sweep's last verdicts may still be staged: read them committed.
    if (Status s = store_.Flush(); !s.ok()) continue;
    auto sw = store_.GetSweep(sweep);
    if (!sw.ok()) continue;
    auto req = ParseSweepRequest(sw->request);
    if (!req.ok()) continue;
    store::TrialFilter f;
    f.sweep = sweep;
    f.limit = 100000;
    auto trials = store_.ListTrials(f);
    if (!trials.ok()) continue;
    std::set<std::pair<std::string, std::string>> touched;  // (config key, hardware) this sweep judged
    for (const store::TrialRow& t : *trials)
      if (t.state == TrialState::kDone && t.hardware) touched.insert({t.config_key, *t.hardware});
    auto regressions = store::OrderedRegressions(store_, sw->suite);
    if (!regressions.ok()) {
      spdlog::warn("sweep {}: could not read its regressions: {}", sweep, regressions.status().message());
      continue;
    }
    for (const BisectRequest& body : AutoBisections(*regressions, touched, *req)) {
      auto b = Bisect(body);
      if (b.ok())
        spdlog::info("sweep {}: {} got worse from {} to {}: started bisection {}", sweep, body.parameter, body.good,
                     body.bad, b->sweep);
      else spdlog::warn("sweep {}: could not start an automatic bisection: {}", sweep, b.status().message());
    }
  }
}

}  // namespace gauntlet::daemon
