#include "core/preflight.h"

#include <algorithm>
#include <set>

namespace gauntlet {

const char* KnownName(Known k) {
  switch (k) {
    case Known::kPasses: return "passes";
    case Known::kFails: return "fails";
    case Known::kUnknown: return "unknown";
  }
  return "unknown";
}

int KnownExitCode(Known k) {
  switch (k) {
    case Known::kPasses: return 0;
    case Known::kFails: return 1;
    case Known::kUnknown: return 3;
  }
  return 3;
}

namespace {
std::vector<std::string> Differences(const Config& a, const Config& b) {
  std::set<std::string> names;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) names.insert(k);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) names.insert(k);
  return {names.begin(), names.end()};
}
}  // namespace

Preflight Check(const std::vector<ConfigRuns>& cells, const Config& config, size_t max_nearest) {
  Preflight p;
  const std::string key = ConfigKey(config);
  bool lower = false;
  for (const auto& c : cells) {
    if (!c.metric_name.empty()) lower = LowerIsBetter(c.metric_name, c.metric_unit);
    if (c.config_key == key && c.runs > 0) p.match = &c;
  }
  if (p.match) p.known = PassesWithConfidence(*p.match) ? Known::kPasses : Known::kFails;
  for (const auto& c : cells) {
    if (c.config_key == key || !PassesWithConfidence(c)) continue;
    p.nearest.push_back({&c, Differences(config, c.config), Summarize(c.metric)});
  }
  std::sort(p.nearest.begin(), p.nearest.end(), [lower](const Neighbour& a, const Neighbour& b) {
    if (a.changed.size() != b.changed.size()) return a.changed.size() < b.changed.size();
    if (a.metric.has_value() != b.metric.has_value()) return a.metric.has_value();
    if (a.metric && a.metric->mean != b.metric->mean)
      return lower ? a.metric->mean < b.metric->mean : a.metric->mean > b.metric->mean;
    return a.runs->config_key < b.runs->config_key;
  });
  if (p.nearest.size() > max_nearest) p.nearest.resize(max_nearest);
  return p;
}

}  // namespace gauntlet
