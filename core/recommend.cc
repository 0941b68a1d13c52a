#include "core/recommend.h"

#include <algorithm>
#include <map>

namespace gauntlet {

const char* DecisionName(Decision d) {
  switch (d) {
    case Decision::kBeyondNoise: return "beyond_noise";
    case Decision::kWithinNoise: return "within_noise";
    case Decision::kInsufficientData: return "insufficient_data";
    case Decision::kOnlyCandidate: return "only_candidate";
    case Decision::kNoPassingConfig: return "no_passing_config";
  }
  return "no_passing_config";
}

namespace {

Config RegionOf(const ConfigRuns& c, const std::vector<std::string>& by) {
  Config r;
  for (const auto& p : by) {
    auto it = c.config.find(p);
    r[p] = it == c.config.end() ? "" : it->second;
  }
  return r;
}

// True when `a` ranks before `b`: a measured config before an unmeasured one; better mean first;
// then more passes; then the config key, so equal evidence always ranks the same way.
bool Better(const Candidate& a, const Candidate& b, bool lower) {
  if (a.metric.has_value() != b.metric.has_value()) return a.metric.has_value();
  if (a.metric && a.metric->mean != b.metric->mean)
    return lower ? a.metric->mean < b.metric->mean : a.metric->mean > b.metric->mean;
  if (a.runs->passed != b.runs->passed) return a.runs->passed > b.runs->passed;
  return a.runs->config_key < b.runs->config_key;
}

Decision Decide(const Recommendation& r) {
  if (!r.best) return Decision::kNoPassingConfig;
  if (!r.runner_up) return Decision::kOnlyCandidate;
  const auto& a = r.best->metric;
  const auto& b = r.runner_up->metric;
  if (!a || !b || a->n < 2 || b->n < 2) return Decision::kInsufficientData;
  const bool apart = r.lower_is_better ? a->high < b->low : a->low > b->high;
  return apart ? Decision::kBeyondNoise : Decision::kWithinNoise;
}

}  // namespace

std::vector<Recommendation> Recommend(const std::vector<ConfigRuns>& cells, const std::vector<std::string>& by) {
  std::map<std::pair<std::string, Config>, std::vector<const ConfigRuns*>> groups;
  for (const auto& c : cells) groups[{c.hardware, RegionOf(c, by)}].push_back(&c);
  std::vector<Recommendation> out;
  for (auto& [key, members] : groups) {
    Recommendation r;
    r.hardware = key.first;
    r.region = key.second;
    std::vector<Candidate> ranked;
    for (const ConfigRuns* c : members) {
      if (c->runs == 0) continue;
      ++r.configs;
      if (!PassesWithConfidence(*c)) continue;
      if (!c->metric_name.empty()) r.lower_is_better = LowerIsBetter(c->metric_name, c->metric_unit);
      ranked.push_back({c, Summarize(c->metric), EvidenceOf(*c)});
    }
    if (r.configs == 0) continue;  // only reused or unjudged results here: nothing to say
    r.candidates = static_cast<int64_t>(ranked.size());
    const bool lower = r.lower_is_better;
    std::sort(ranked.begin(), ranked.end(), [lower](const Candidate& a, const Candidate& b) { return Better(a, b, lower); });
    if (!ranked.empty()) r.best = ranked[0];
    if (ranked.size() > 1) r.runner_up = ranked[1];
    r.decision = Decide(r);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gauntlet
