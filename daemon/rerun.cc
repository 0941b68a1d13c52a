// Coordinator::Rerun: a new sweep of exactly the trials of an earlier one that a selection picks
// (POST /api/v1/sweeps/{id}/rerun). Unlike RetrySweep, which re-queues infra_error and timeout trials
// in place, a rerun keeps the original's record as it is and answers "does it still fail?" with new
// trials, linked by rerun_of, so the two sweeps can be compared.
#include <set>

#include "core/verdict.h"
#include "daemon/coordinator.h"

namespace gauntlet {
using nlohmann::json;

namespace {

// A parsed selection. Empty lists filter nothing (verdicts: the default below).
struct Selection {
  std::set<std::string> verdicts;
  std::vector<json> config_matches;  // objects: parameter -> value the trial's config must hold
  std::set<std::string> config_keys;
  std::set<int64_t> target_indexes;
  std::set<std::string> hardware;
};

Result<Selection> ParseSelection(const json& body) {
  Selection sel;
  if (body.is_null()) return sel;
  if (!body.is_object()) return Status::Invalid("a rerun's body is an object (or empty)", "body");
  for (auto& [k, v] : body.items())
    if (k != "verdicts" && k != "configs" && k != "targets")
      return Status::Invalid("unknown field (allowed: verdicts, configs, targets)", k);
  auto list = [&](const char* name) -> Result<json> {
    if (!body.contains(name)) return json::array();
    if (!body[name].is_array()) return Status::Invalid("must be a list", name);
    return body[name];
  };
  auto verdicts = list("verdicts");
  if (!verdicts.ok()) return verdicts.status();
  for (size_t i = 0; i < verdicts->size(); ++i) {
    const json& v = (*verdicts)[i];
    const std::string field = "verdicts[" + std::to_string(i) + "]";
    if (!v.is_string() || !IsVerdict(v.get<std::string>()))
      return Status::Invalid("not a verdict (one of " + JoinNames(VerdictNames()) + ")", field);
    sel.verdicts.insert(v.get<std::string>());
  }
  auto configs = list("configs");
  if (!configs.ok()) return configs.status();
  for (size_t i = 0; i < configs->size(); ++i) {
    const json& c = (*configs)[i];
    const std::string field = "configs[" + std::to_string(i) + "]";
    if (c.is_string()) {
      sel.config_keys.insert(c.get<std::string>());
    } else if (c.is_object()) {
      for (auto& [p, v] : c.items())
        if (!v.is_string()) return Status::Invalid("a parameter value is a string", field + "." + p);
      sel.config_matches.push_back(c);
    } else {
      return Status::Invalid("a config is a config key (\"a=x&b=y\") or an object of parameter values", field);
    }
  }
  auto targets = list("targets");
  if (!targets.ok()) return targets.status();
  for (size_t i = 0; i < targets->size(); ++i) {
    const json& t = (*targets)[i];
    if (t.is_number_integer() && t.get<int64_t>() >= 0) sel.target_indexes.insert(t.get<int64_t>());
    else if (t.is_string()) sel.hardware.insert(t.get<std::string>());
    else
      return Status::Invalid("a target is the sweep's target index (0, 1, ...) or a hardware class",
                             "targets[" + std::to_string(i) + "]");
  }
  return sel;
}

bool Picks(const Selection& sel, const TrialRow& t) {
  if (t.state != "done" || !t.verdict) return false;
  const std::string& v = *t.verdict;
  if (sel.verdicts.empty() ? (v == "passed" || v == "skipped") : !sel.verdicts.count(v)) return false;
  if (!sel.config_keys.empty() || !sel.config_matches.empty()) {
    bool hit = sel.config_keys.count(t.config_key) > 0;
    for (auto& m : sel.config_matches) {
      bool all = true;
      for (auto& [p, want] : m.items())
        if (!t.config.contains(p) || t.config[p] != want) all = false;
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

Result<SubmitResult> Coordinator::Rerun(int64_t sweep, const json& selection, SweepOrigin origin) {
  auto sel = ParseSelection(selection);
  if (!sel.ok()) return sel.status();
  auto sw = store_.GetSweep(sweep);
  if (!sw.ok()) return sw.status();
  auto req = ParseSweepRequest(sw->request);
  if (!req.ok()) return Status::Internal("sweep " + std::to_string(sweep) + "'s request no longer parses");
  std::vector<TrialRow> picked;
  TrialFilter f;
  f.sweep = sweep;
  f.limit = 5000;
  while (true) {
    auto page = store_.ListTrials(f);
    if (!page.ok()) return page.status();
    for (auto& t : *page)
      if (Picks(*sel, t)) picked.push_back(t);
    if (static_cast<int>(page->size()) < f.limit) break;
    f.after = page->back().id;
  }
  if (picked.empty())
    return Status::Invalid("no trial of sweep " + std::to_string(sweep) + " matches the selection",
                           selection.is_object() && selection.contains("verdicts") ? "verdicts" : "body");
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
  std::vector<NewTrial> trials;
  for (auto& t : picked) trials.push_back({t.config.dump(), t.config_key, t.target_index, t.repeat_index});
  origin.rerun_of = sweep;
  int64_t first = 0;
  auto id = store_.CreateSweep(sw->suite_id, request["name"], request, req->priority, req->max_attempts, trials,
                               &first, origin);
  if (!id.ok()) return id.status();
  events_.Publish("sweep.created", {{"sweep", *id}, {"trials", trials.size()}, {"suite", sw->suite}, {"rerun_of", sweep}});
  MutexLock lock(mu_);
  auto su = SuiteById(sw->suite_id);
  if (!su.ok()) return su.status();
  SweepRequest stored = *req;
  stored.reuse = false;
  stored.prune = false;
  requests_[*id] = std::make_shared<SweepRequest>(stored);
  std::vector<QueuedTrial> queued;
  for (size_t i = 0; i < picked.size(); ++i) {
    TrialRow row = picked[i];
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

}  // namespace gauntlet
