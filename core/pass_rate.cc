#include "core/pass_rate.h"

#include <algorithm>
#include <cmath>

#include "core/verdict.h"

namespace gauntlet {

Interval WilsonInterval(int64_t passed, int64_t runs, double z) {
  if (runs <= 0) return {};
  const double n = static_cast<double>(runs), p = static_cast<double>(passed) / n, z2 = z * z;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

bool CountsAsRun(Verdict verdict) { return Info(verdict).judged || verdict == Verdict::kTimeout; }

bool CountsAsRun(const std::string& verdict) {
  const std::optional<Verdict> v = ParseVerdict(verdict);
  return v && CountsAsRun(*v);
}

nlohmann::json PassRateJson(const nlohmann::json& counts, int64_t reused) {
  int64_t passed = 0, runs = 0;
  if (counts.is_object())
    for (auto& [k, v] : counts.items()) {
      if (!v.is_number_integer() || !CountsAsRun(k)) continue;
      runs += v.get<int64_t>();
      if (k == "passed") passed += v.get<int64_t>();
    }
  if (runs == 0) return nullptr;
  const Interval ci = WilsonInterval(passed, runs);
  // Three decimals: what a person compares; the counts are there for anyone who wants more.
  auto r3 = [](double x) { return std::round(x * 1000) / 1000; };
  return {{"passed", passed}, {"runs", runs}, {"rate", r3(static_cast<double>(passed) / runs)},
          {"low", r3(ci.low)}, {"high", r3(ci.high)}, {"reused", reused}};
}

}  // namespace gauntlet
