// Will this work? The known verdict of one configuration on one hardware class, and the nearest
// configurations known to pass (GET /api/v1/check, `gauntlet check`). Pure; thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/config_runs.h"

namespace gauntlet {

enum class Known { kPasses, kFails, kUnknown };
const char* KnownName(Known k);  // "passes", "fails", "unknown" (static storage)
// The exit status `gauntlet check` gives: 0 passes, 1 fails, 3 unknown (2 stays the CLI's error).
int KnownExitCode(Known k);

// A passing configuration near the one asked about: which parameters differ from it.
struct Neighbour {
  const ConfigRuns* runs = nullptr;
  std::vector<std::string> changed;  // parameter names, sorted
  std::optional<MetricSummary> metric;
};

struct Preflight {
  Known known = Known::kUnknown;
  const ConfigRuns* match = nullptr;  // the config's own runs; nullptr when it never ran here
  std::vector<Neighbour> nearest;     // passing with confidence, fewest changes first, then faster
};

// Judges `config` against `cells` (the runs on one hardware class): passes when its runs pass with
// confidence (core/config_runs.h), fails when it has real runs that do not, unknown when it has
// none. `nearest` holds up to `max_nearest` other configs passing with confidence, ranked by how
// many parameters differ, then by metric (better first), then by config key. `cells` must outlive
// the answer.
Preflight Check(const std::vector<ConfigRuns>& cells, const Config& config, size_t max_nearest = 3);

}  // namespace gauntlet
