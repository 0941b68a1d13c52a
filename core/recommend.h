// What to run here: for each hardware class (and each region of the `by` parameters), the fastest
// configuration that passed with confidence, its runner-up, and whether the gap between them is
// larger than the noise of their runs (GET /api/v1/recommend, `gauntlet best`). Pure; thread-safe.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/config_runs.h"

namespace gauntlet {

// One configuration as a recommendation names it. Points into the ConfigRuns given to Recommend.
struct Candidate {
  const ConfigRuns* runs = nullptr;
  std::optional<MetricSummary> metric;
  Evidence evidence = Evidence::kNone;
};

// How a region's answer was decided.
enum class Decision {
  kBeyondNoise,       // the best's metric interval lies wholly on the better side of the runner-up's
  kWithinNoise,       // both measured over 2+ runs, intervals overlap: either will do
  kInsufficientData,  // a runner-up exists but one of the two has fewer than two measured runs
  kOnlyCandidate,     // one config passes with confidence here
  kNoPassingConfig,   // configs ran here, none passed with confidence
};
const char* DecisionName(Decision d);  // "beyond_noise", ... (static storage)

struct Recommendation {
  std::string hardware;
  Config region;  // the `by` parameters' values of this region; empty without `by`
  Decision decision = Decision::kNoPassingConfig;
  std::optional<Candidate> best, runner_up;
  int64_t configs = 0, candidates = 0;  // configs seen here, of which passing with confidence
  bool lower_is_better = false;
};

// Groups `cells` by hardware and by the values of `by` (a config missing a `by` parameter goes to a
// region where it is ""), ranks the configs passing with confidence by their metric mean (better
// first; configs without a metric after those with one, by pass count), and decides each region.
// Sorted by hardware, then region. `cells` must outlive the answer.
std::vector<Recommendation> Recommend(const std::vector<ConfigRuns>& cells, const std::vector<std::string>& by);

}  // namespace gauntlet
