// The Coordinator's search sweeps (see coordinator.h, core/bisect.h, docs/API.md "Bisection"): a
// bisection is a sweep whose trials are added one at a time, each probe's value chosen from the
// verdicts so far. Probes run through the scheduler like any trial (so a verdict already known for
// that config, hardware class and fingerprint is reused instead of run).
#include <spdlog/spdlog.h>

#include <set>

#include "daemon/coordinator.h"

namespace gauntlet::daemon {
using nlohmann::json;

namespace {
// The sweep request's field names back into the bisection's: parameters.x is config.x, targets[0]
// is target.
Status Rename(Status s) {
  std::string f = s.field();
  if (f.rfind("parameters.", 0) == 0) f = "config." + f.substr(11);
  else if (f.rfind("targets[0]", 0) == 0) f = "target" + f.substr(10);
  return Status(s.code(), s.message(), f);
}
}  // namespace

Result<SubmitResult> Coordinator::Bisect(const BisectRequest& body) {
  const json& config = body.config;
  const std::string& param = body.parameter;
  const std::string& good = body.good;
  const std::string& bad = body.bad;
  auto found = LatestSuite(body.suite);
  if (!found.ok()) return found.status();
  const Suite* suite = *found;
  const ParamSpec* p = suite->Param(param);
  if (!p) return Status::Invalid("'" + param + "' is not a parameter of " + suite->name, "parameter");
  auto search = StartBisection(*p, IsOrdered(*suite, param), good, bad);
  if (!search.ok()) return search.status();
  // The request every probe shares: one config, one target, the probe's value of the parameter.
  json params = json::object();
  for (auto& [k, v] : config.items()) params[k] = json::array({v});
  params[param] = json::array({good});
  json req = {{"suite", suite->name}, {"parameters", params}, {"prune", false},
              {"name", body.name.value_or("bisect " + param + " " + good + ".." + bad)}};
  if (body.target) req["targets"] = json::array({*body.target});
  using Field = std::pair<const char*, const std::optional<json>*>;
  for (auto [k, v] : {Field{"priority", &body.priority}, Field{"confirm_failures", &body.confirm_failures},
                      Field{"max_attempts", &body.max_attempts}})
    if (*v) req[k] = **v;
  auto parsed = ParseSweepRequest(req);
  if (!parsed.ok()) return Rename(parsed.status());
  auto configs = ExpandSweep(*suite, *parsed);
  if (!configs.ok()) return Rename(configs.status());
  if (configs->size() != 1) {
    std::string open;
    for (auto& sp : suite->params)
      if (sp.name != param && !config.contains(sp.name) && sp.values.size() > 1) open += (open.empty() ? "" : ", ") + sp.name;
    return Status::Invalid("config names one value of every other parameter that has several (" + open + ")", "config");
  }
  Bisection b = *search;
  auto first = NextProbe(b);  // never empty: good < bad
  Config c = (*configs)[0];
  c[param] = b.values[*first];
  store::NewTrial nt{ConfigJson(c).dump(), ConfigKey(c), 0, 0};
  // Committed before the answer, as a sweep's submission is (no Group).
  int64_t first_id = 0;
  auto sweep = store_.CreateSweep(suite->id, parsed->name, req, parsed->priority, parsed->max_attempts, {nt}, &first_id);
  if (!sweep.ok()) return sweep.status();
  b.pending_trial = first_id;
  if (Status s = store_.SetSweepSearch(*sweep, SweepKind::kBisect, BisectionJson(b)); !s.ok()) return s;
  events_.Publish(SweepCreated{*sweep, 1, suite->name, std::nullopt, true});
  MutexLock lock(mu_);
  requests_[*sweep] = std::make_shared<SweepRequest>(*parsed);
  auto queued = MakeQueued(*suite, *parsed, first_id, {c});
  for (auto& q : queued) q.sweep = *sweep;
  searches_[*sweep] = b;
  probes_[first_id] = *sweep;
  sched_->Watch(first_id);
  sched_->AddSweep(MakeSweepInfo(*sweep, *parsed, *suite), std::move(queued));
  ServeWaitersLocked();
  return SubmitResult{*sweep, 1};
}

bool Coordinator::QueueProbeLocked(int64_t sweep, Bisection& b, int index) {
  auto rit = requests_.find(sweep);
  auto row = store_.GetSweep(sweep);
  if (rit == requests_.end() || !row.ok()) return false;
  auto su = SuiteById(row->suite_id);
  if (!su.ok()) return false;
  auto configs = ExpandSweep(**su, *rit->second);
  if (!configs.ok() || configs->empty()) return false;
  Config c = (*configs)[0];
  c[b.parameter] = b.values[index];
  auto id = store_.AddTrial(sweep, rit->second->max_attempts, store::NewTrial{ConfigJson(c).dump(), ConfigKey(c), 0, 0});
  if (!id.ok()) {
    spdlog::error("bisection {}: could not add its next probe: {}", sweep, id.status().message());
    return false;
  }
  b.pending_trial = *id;
  probes_[*id] = sweep;
  sched_->Watch(*id);
  auto queued = MakeQueued(**su, *rit->second, *id, {c});
  for (auto& q : queued) q.sweep = sweep;
  sched_->AddSweep(MakeSweepInfo(sweep, *rit->second, **su), std::move(queued));
  return true;
}

bool Coordinator::AdvanceSearchesLocked() {
  bool queued = false;
  for (auto& [trial, verdict] : sched_->TakeSettled()) {
    auto pit = probes_.find(trial);
    if (pit == probes_.end()) continue;
    const int64_t sweep = pit->second;
    probes_.erase(pit);
    auto sit = searches_.find(sweep);
    if (sit == searches_.end()) continue;
    Bisection& b = sit->second;
    Observe(b, verdict, trial);
    if (auto next = NextProbe(b)) {
      if (QueueProbeLocked(sweep, b, *next)) queued = true;
      else {
        b.pending.reset();
        b.state = BisectState::kUndecided;
        b.detail = "the next probe could not be stored";
      }
    }
    const json j = BisectionJson(b);
    if (Status s = store_.SetSweepSearch(sweep, SweepKind::kBisect, j); !s.ok())
      spdlog::error("bisection {}: could not store its state: {}", sweep, s.message());
    PublishAfterCommit(SweepSearch{sweep, b});
    if (b.state != BisectState::kRunning) searches_.erase(sit);
  }
  return queued;
}

}  // namespace gauntlet::daemon
