// Scheduler::Prune (see scheduler.h and docs/SCHEDULING.md "Pruning"): what a finished trial's
// result settles for the queued trials of its sweep that share its gate key values.
#include <algorithm>
#include <unordered_set>

#include "daemon/scheduler.h"

namespace gauntlet::daemon {

namespace {
bool Deterministic(Verdict verdict) { return verdict == Verdict::kUnsupported; }

// A signature that names no message, only how the process ended (`crashed:exit_code:1`,
// `crashed:signal:SIGSEGV`, the stage-name fallback, a server that exited with nothing said): two
// such crashes of unrelated causes would look alike, so they never prune.
bool BareSignature(const std::string& signature, Verdict verdict, const std::string& stage) {
  if (signature.empty() || signature == std::string(Name(verdict)) + ":" + stage) return true;
  for (const char* bare : {":exit_code:", ":signal:", ":server_exited_"})
    if (signature.find(bare) != std::string::npos) return true;
  return false;
}

// "trial 7" or "trials 7 and 9": who settled a pruning.
std::string TrialsText(const std::vector<int64_t>& ids) {
  if (ids.size() == 1) return "trial " + std::to_string(ids[0]);
  std::string out = "trials ";
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + std::to_string(ids[i]);
  return out;
}
}  // namespace

void Scheduler::SecondLook(Sweep& sw, int target, const Config& gate) {
  // The crash settles its gate values once a second trial of them crashes alike: run that one next,
  // so the rest are pruned now rather than after the grid got to them.
  auto dit = FindQueue(sw, target);
  if (dit == sw.by_target.end()) return;
  auto& dq = dit->second;
  for (size_t i = 0; i < dq.size(); ++i) {
    if (tombstones_.count(dq[i].id)) continue;
    bool same = true;
    for (auto& [k, v] : gate) {
      auto c = dq[i].config.find(k);
      if (c == dq[i].config.end() || c->second != v) {
        same = false;
        break;
      }
    }
    if (!same) continue;
    if (i > 0) {
      QueuedTrial t = std::move(dq[i]);
      dq.erase(dq.begin() + static_cast<long>(i));
      dq.push_front(std::move(t));
    }
    return;
  }
}

void Scheduler::NoteRun(Sweep& sw, const QueuedTrial& spec, const store::ResultRow& r) {
  const std::pair<int, std::string> k{spec.target, spec.config_key};
  if (r.verdict == Verdict::kPassed) {
    sw.passed.insert(k);
    for (auto& [stage, keys] : sw.info.gate_on) {
      std::string key;
      bool all = !keys.empty();
      for (auto& g : keys) {
        auto v = spec.config.find(g);
        if (v == spec.config.end()) {
          all = false;
          break;
        }
        key += (key.empty() ? "" : "&") + g + "=" + v->second;
      }
      if (all) sw.passed_gates.insert({spec.target, stage, key});
    }
  }
  // Judged both ways within one trial (a failure, then a passing confirmation): still measured.
  if (r.flaky) sw.measuring.insert(k);
  else if (r.confirmed > 0) sw.measuring.erase(k);  // a failure seen alike every time: measured, it stands
}

void Scheduler::Prune(Sweep& sw, const QueuedTrial& spec, int64_t evidence, const std::string& hardware,
                      const store::ResultRow& r, ReportOutcome* out) {
  auto g = sw.info.gate_on.find(r.failing_stage);
  if (g == sw.info.gate_on.end() || g->second.empty()) return;
  // A config seen to pass in this sweep, or being measured, fails only sometimes: what it ended with
  // now settles nothing, and its crash is no second look for another config's.
  const auto measured = [&](const QueuedTrial& t) {
    return !t.tried.empty() || sw.passed.count({t.target, t.config_key}) || sw.measuring.count({t.target, t.config_key});
  };
  if (sw.passed.count({spec.target, spec.config_key}) || sw.measuring.count({spec.target, spec.config_key})) return;
  std::string key;
  Config gate;
  for (auto& k : g->second) {
    auto v = spec.config.find(k);
    if (v == spec.config.end()) return;
    gate[k] = v->second;
    key += (key.empty() ? "" : "&") + k + "=" + v->second;
  }
  // A trial with these very gate values passed here: they do not decide this failure.
  if (sw.passed_gates.count({spec.target, r.failing_stage, key})) return;
  std::vector<int64_t> settled_by = {evidence};
  if (sw.info.confirm_failures > 0 && (r.verdict == Verdict::kCrashed || r.verdict == Verdict::kWrongOutput ||
                                    r.verdict == Verdict::kFallback)) {
    // Under confirmation a failure is the config's once it was seen as often as the sweep asks, with
    // one signature each time: the confirming attempts are the second look that the rule below
    // takes from another trial. A crash that says nothing still never prunes.
    if (r.confirmed < sw.info.confirm_failures || BareSignature(r.signature, r.verdict, r.failing_stage)) return;
  } else if (r.verdict == Verdict::kCrashed) {
    // A crash is the config's once two trials with these same gate values crashed with the same
    // signature in this stage on this hardware class: one crash may be a flake, and a crash of
    // other gate values says nothing about these.
    if (BareSignature(r.signature, r.verdict, r.failing_stage)) return;
    auto& seen = sw.crash_signatures[{spec.target, r.failing_stage, key, r.signature}];
    if (std::find(seen.begin(), seen.end(), evidence) == seen.end()) seen.push_back(evidence);
    if (seen.size() < 2) {
      if (sw.info.settle_first) SecondLook(sw, spec.target, gate);
      return;
    }
    settled_by = seen;
  } else if (!Deterministic(r.verdict)) {
    return;
  }
  // Same hardware class: queued trials of the evidence's target (all of a target's trials share
  // one hardware need, and a sweep's targets are its hardware classes).
  auto dit = FindQueue(sw, spec.target);
  if (dit == sw.by_target.end()) return;
  auto& dq = dit->second;
  std::vector<int64_t> ids;
  double saved = 0, saved_cost = 0;
  for (auto& t : dq) {
    bool same = true;
    for (auto& [k, v] : gate) {
      auto c = t.config.find(k);
      if (c == t.config.end() || c->second != v) {
        same = false;
        break;
      }
    }
    // Never a repeat of a config that passed here or is being measured, nor a trial being confirmed.
    if (!same || tombstones_.count(t.id) || measured(t)) continue;
    ids.push_back(t.id);
    saved += t.cost_s * t.need.gpus;  // GPU-hours: a CPU-only trial saves none
    saved_cost += TrialCost(t);
  }
  if (ids.empty()) return;
  const std::string text = "pruned: " + TrialsText(settled_by) + " ended " + std::string(Name(r.verdict)) +
                           (r.signature.empty() ? "" : " (" + r.signature + ")") + " in stage " + r.failing_stage +
                           " on " + (hardware.empty() ? "this hardware" : hardware) + "; key " + key;
  if (!store_.Skip(ids, "skipped:" + r.signature, evidence, hardware, r.failing_stage, text).ok()) return;
  // The scan above already paid for a pass over the queue, so drop the skipped trials now instead
  // of leaving tombstones: a later lease call would otherwise pop long runs of them at once.
  std::unordered_set<int64_t> gone(ids.begin(), ids.end());
  dq.erase(std::remove_if(dq.begin(), dq.end(), [&](const QueuedTrial& t) { return gone.count(t.id) > 0; }), dq.end());
  queued_count_ -= ids.size();
  for (int64_t id : ids) Settled(id, Verdict::kSkipped);
  sw.skipped += static_cast<int64_t>(ids.size());
  sw.saved_gpu_s += saved;
  sw.saved_cost += saved_cost;
  out->skipped = std::move(ids);
  out->prune_key = key;
}

}  // namespace gauntlet::daemon
