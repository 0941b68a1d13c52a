// The short text forms of one configuration in the JSON of a recommendation or a pre-flight check
// (api/advice_views.h): its launch line, its region and its metric. The API's markdown and the CLI's
// tables both read them from here, so the two never word a config differently. Pure; thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace gauntlet {

// `v` to four significant digits ("%.4g").
std::string AdviceNumber(double v);
// A config's "env" then "flags", space-separated; its "config_key" when it has neither.
std::string AdviceFlags(const nlohmann::json& config);
// A region's parameters as "k=v k=v" in key order; empty for the whole suite (no --by).
std::string AdviceRegion(const nlohmann::json& region);

// How a metric's spread over several runs reads: the 95% interval, or its half-width as ±.
enum class MetricSpread { kInterval, kHalfWidth };
// A config's "metric" as "mean unit" and its spread and run count, e.g. "1.2 ms (95%: 1.1–1.3, 4 runs)"
// or "1.2 ms ±0.1 (4 runs)"; empty when the config has no metric.
std::string AdviceMetric(const nlohmann::json& config, MetricSpread spread);

}  // namespace gauntlet
