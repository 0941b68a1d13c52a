// Automatic bisection (sweep field auto_bisect): when a finished sweep shows a config getting worse
// between two tested values of an ordered parameter on one target (passed at one, failed at the next
// one tested) with untested values between them, a bisection of that gap starts by itself. The
// search runs from the clock thread, outside the Coordinator's lock (Bisect takes it).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/pass_rate.h"
#include "daemon/coordinator.h"

namespace gauntlet {
using nlohmann::json;

namespace {
constexpr size_t kMaxAutoBisections = 16;  // per sweep: a broken grid must not start hundreds
}  // namespace

std::vector<json> RegressionBisections(const Suite& suite, const SweepRequest& req, const std::vector<TrialRow>& trials) {
  std::vector<json> out;
  for (const ParamSpec& p : suite.params) {
    if (!IsOrdered(suite, p.name)) continue;
    // (target, the config without p) -> index of p's value -> passed?
    std::map<std::pair<int, std::string>, std::map<int, bool>> groups;
    std::map<std::pair<int, std::string>, json> others;
    for (const TrialRow& t : trials) {
      if (t.state != "done" || !t.verdict || !t.config.contains(p.name)) continue;
      const std::string& v = *t.verdict;
      if (v != "passed" && !CountsAsRun(v)) continue;
      auto it = std::find(p.values.begin(), p.values.end(), t.config[p.name].get<std::string>());
      if (it == p.values.end()) continue;
      json rest = t.config;
      rest.erase(p.name);
      const auto key = std::make_pair(t.target_index, rest.dump());
      auto& seen = groups[key];
      const int i = static_cast<int>(it - p.values.begin());
      // A value seen both ways (repeats) is not a clean edge: keep it failed only if it never passed.
      seen[i] = seen.count(i) ? (seen[i] || v == "passed") : v == "passed";
      others[key] = rest;
    }
    for (auto& [key, seen] : groups) {
      for (auto it = seen.begin(); it != seen.end() && std::next(it) != seen.end(); ++it) {
        auto next = std::next(it);
        if (!it->second || next->second || next->first - it->first < 2) continue;
        json body = {{"suite", suite.name}, {"parameter", p.name}, {"good", p.values[it->first]},
                     {"bad", p.values[next->first]}, {"config", others[key]}, {"priority", req.priority},
                     {"name", "auto bisect " + p.name + " " + p.values[it->first] + ".." + p.values[next->first]}};
        if (key.first < static_cast<int>(req.targets.size()) && !req.targets[key.first].raw.empty())
          body["target"] = req.targets[key.first].raw;
        if (req.confirm_failures) body["confirm_failures"] = req.confirm_failures;
        out.push_back(std::move(body));
        if (out.size() >= kMaxAutoBisections) return out;
        break;  // the first regression of a group: a later one is inside a bad stretch anyway
      }
    }
  }
  return out;
}

void Coordinator::AutoBisectLocked(int64_t sweep) {
  auto rit = requests_.find(sweep);
  if (rit == requests_.end() || !rit->second->auto_bisect || searches_.count(sweep)) return;
  if (sched_->Pending(sweep) || auto_bisected_.count(sweep)) return;
  auto_bisected_.insert(sweep);
  auto_bisect_due_.push_back(sweep);
  tick_cv_.notify_all();
}

void Coordinator::RunAutoBisections() {
  std::vector<int64_t> due;
  {
    std::lock_guard lock(mu_);
    due.swap(auto_bisect_due_);
  }
  for (int64_t sweep : due) {
    // The sweep's last verdicts may still be staged: read them committed.
    if (Status s = store_.Flush(); !s.ok()) continue;
    auto sw = store_.GetSweep(sweep);
    if (!sw.ok()) continue;
    auto req = ParseSweepRequest(sw->request);
    const Suite* suite = nullptr;
    {
      std::lock_guard lock(mu_);
      auto s = SuiteById(sw->suite_id);
      if (s.ok()) suite = *s;  // cached for the Coordinator's life: the pointer stays valid
    }
    if (!req.ok() || !suite) continue;
    TrialFilter f;
    f.sweep = sweep;
    f.limit = 100000;
    auto trials = store_.ListTrials(f);
    if (!trials.ok()) continue;
    for (const json& body : RegressionBisections(*suite, *req, *trials)) {
      auto b = Bisect(body);
      if (b.ok()) spdlog::info("sweep {}: a regression in {} started bisection {}", sweep, body["parameter"].get<std::string>(), b->sweep);
      else spdlog::warn("sweep {}: could not start an automatic bisection: {}", sweep, b.status().message());
    }
  }
}

}  // namespace gauntlet
