#include "core/advice_text.h"

#include <cstdio>

namespace gauntlet {
using nlohmann::json;

std::string AdviceNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string AdviceFlags(const json& c) {
  std::string s;
  for (auto& e : c["env"]) s += (s.empty() ? "" : " ") + e.get<std::string>();
  for (auto& f : c["flags"]) s += (s.empty() ? "" : " ") + f.get<std::string>();
  return s.empty() ? c["config_key"].get<std::string>() : s;
}

std::string AdviceRegion(const json& region) {
  std::string s;
  for (auto& [k, v] : region.items()) s += (s.empty() ? "" : " ") + k + "=" + v.get<std::string>();
  return s;
}

std::string AdviceMetric(const json& c, MetricSpread spread) {
  const json& m = c["metric"];
  if (m.is_null()) return "";
  std::string s = AdviceNumber(m["mean"]) + " " + m["unit"].get<std::string>();
  const bool several = m["n"].get<int64_t>() > 1;
  if (spread == MetricSpread::kInterval)
    return s + (several ? " (95%: " + AdviceNumber(m["low"]) + "–" + AdviceNumber(m["high"]) + ", " + m["n"].dump() + " runs)"
                        : std::string(" (1 run)"));
  if (several) s += " ±" + AdviceNumber((m["high"].get<double>() - m["low"].get<double>()) / 2);
  return s + " (" + m["n"].dump() + (m["n"] == 1 ? " run)" : " runs)");
}

}  // namespace gauntlet
