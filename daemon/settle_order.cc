// Scheduler::OrderToSettle (see scheduler.h and docs/SCHEDULING.md "Order within a sweep"): the
// trials that settle the most run first. A gate key's deterministic failure prunes every queued
// trial that shares its values on that hardware, so the first trial of each value of each gate key
// is worth more than any later one: it either passes (the value is not a refusal) or settles all of
// them at once. Running one per value first, then the rest, spends the fewest GPU-hours before the
// matrix is known. Between targets (a node that could serve several), the cheaper trial goes first:
// the queues are keyed by cost (TargetKey, QueueOf).
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "daemon/scheduler.h"

namespace gauntlet::daemon {

namespace {
// "target\x1fkey index\x1fvalue..." for each gate key a trial of `target` and `config` has all parameters of.
std::vector<std::string> GateIds(int target, const Config& config, const std::vector<std::vector<std::string>>& keys,
                                 size_t size) {
  std::vector<std::string> out;
  for (size_t ki = 0; ki < keys.size(); ++ki) {
    if (size && keys[ki].size() != size) continue;
    std::string id = std::to_string(target) + '\x1f' + std::to_string(ki);
    bool complete = true;
    for (auto& k : keys[ki]) {
      auto v = config.find(k);
      if (v == config.end()) {
        complete = false;
        break;
      }
      id += '\x1f' + v->second;
    }
    if (complete) out.push_back(std::move(id));
  }
  return out;
}
}  // namespace

void Scheduler::OrderToSettle(const SweepInfo& info, std::vector<QueuedTrial>& trials) {
  auto order = SettleOrder(info, trials.size(), [&](size_t i) { return std::pair{trials[i].target, &trials[i].config}; });
  if (order.empty()) return;
  std::vector<QueuedTrial> out;
  out.reserve(trials.size());
  for (auto [i, probe] : order) {
    trials[i].probe = probe;
    out.push_back(std::move(trials[i]));
  }
  trials = std::move(out);
}

std::vector<std::pair<size_t, bool>> Scheduler::SettleOrder(
    const SweepInfo& info, size_t n, const std::function<std::pair<int, const Config*>(size_t)>& trial) {
  // The distinct gate keys over the stages (two stages gating on the same parameters share one),
  // single parameters first: one value refused settles more than one pair does.
  std::set<std::vector<std::string>> distinct;
  for (auto& [stage, key] : info.gate_on)
    if (!key.empty()) distinct.insert(key);
  if (distinct.empty() || n < 2) return {};
  auto ids_of = [&](size_t i, const std::vector<std::vector<std::string>>& keys, size_t size) {
    auto [target, config] = trial(i);
    return GateIds(target, *config, keys, size);
  };
  std::vector<std::vector<std::string>> keys(distinct.begin(), distinct.end());
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  // Per target (a hardware class), level by level (keys of one parameter, then two, ...): a trial
  // that opens an uncovered value of a key of this level is a probe of the level, and covers every
  // value it has (so a pair's probe also covers its single values). Greedy, in the trials' own order
  // (cheapest first), in two passes: first the trials that open a value of every key of the level
  // (the grid's diagonal covers two parameters' values in one trial each), then any that opens one.
  std::vector<int> level(n, 0);
  std::unordered_set<std::string> covered;
  auto cover = [&](size_t i, int lv) {
    level[i] = lv;
    for (auto& id : ids_of(i, keys, 0)) covered.insert(std::move(id));
  };
  int lv = 0;
  for (size_t size = 1; size <= keys.back().size(); ++size) {
    if (std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return k.size() == size; })) continue;
    ++lv;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < n; ++i) {
        if (level[i]) continue;
        auto ids = ids_of(i, keys, size);
        if (ids.empty()) continue;
        const size_t fresh = std::count_if(ids.begin(), ids.end(), [&](const std::string& id) { return !covered.count(id); });
        if (pass == 0 ? fresh == ids.size() : fresh > 0) cover(i, lv);
      }
  }
  if (lv == 0) return {};
  std::vector<size_t> order(n);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Probes by level, then the rest (level 0 last), each group in its own order.
  auto rank = [&](size_t i) { return level[i] == 0 ? lv + 1 : level[i]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  std::vector<std::pair<size_t, bool>> out;
  out.reserve(n);
  for (size_t i : order) out.emplace_back(i, level[i] != 0);
  return out;
}


std::map<TargetKey, std::deque<QueuedTrial>>::iterator Scheduler::FindQueue(Sweep& sw, int target) {
  auto c = sw.target_cost.find(target);
  return c == sw.target_cost.end() ? sw.by_target.end() : sw.by_target.find(TargetKey{c->second, target});
}

std::map<TargetKey, std::deque<QueuedTrial>>::const_iterator Scheduler::FindQueue(const Sweep& sw, int target) {
  auto c = sw.target_cost.find(target);
  return c == sw.target_cost.end() ? sw.by_target.end() : sw.by_target.find(TargetKey{c->second, target});
}

}  // namespace gauntlet::daemon
