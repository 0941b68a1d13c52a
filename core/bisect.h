// Bisection over an ordered parameter (a suite parameter declared {"values": [...], "ordered": true}):
// the search state a bisection sweep keeps, and its two moves, which value to try next and what a
// verdict there means. Pure data and functions; thread-safe (no shared state).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/suite.h"
#include "core/verdict.h"

namespace gauntlet {

// Invariant while running: values[lo] is good (known, or assumed as asked) and values[hi] is bad
// (likewise), lo < hi. Probes are midpoints until lo and hi are adjacent; an endpoint the user
// asserted is run only then, and only if no midpoint replaced it, so a search of n values takes
// about log2(n) trials, and says so when `good` was not good or `bad` not bad.
struct Bisection {
  std::string parameter;
  std::vector<std::string> values;  // the parameter's declared order, oldest first
  int good = 0, bad = 0;            // indices as asked
  int lo = 0, hi = 0;
  bool lo_known = false, hi_known = false;
  // running, found, good_not_good, bad_not_bad, undecided (a probe ended without a verdict about
  // the config: infra_error, cancelled), cancelled.
  std::string state = "running";
  std::optional<int> first_bad;  // index, when found
  std::optional<int> pending;    // the index whose trial is out now
  int64_t pending_trial = 0;
  nlohmann::json steps = nlohmann::json::array();  // [{value, index, verdict, trial, bad}] in order
  std::string detail;                             // one line a person reads
};

// True if `suite` declares parameter `name` {"values": [...], "ordered": true}.
bool IsOrdered(const Suite& suite, const std::string& name);
// A search of `param` (`ordered` as IsOrdered says: it must be) from `good` to `bad`, both declared
// values, good before bad in the declared order. Invalid names the field ("parameter", "good", "bad").
Result<Bisection> StartBisection(const ParamSpec& param, bool ordered, const std::string& good, const std::string& bad);
// The index to run next (and marks it pending), or nullopt when the search has ended (state says
// how; a found search also sets first_bad and detail).
std::optional<int> NextProbe(Bisection& b);
// Takes the verdict of the pending probe (`trial` ran it). Passed is good; a judged failure or a
// timeout is bad; anything else ends the search undecided.
void Observe(Bisection& b, Verdict verdict, int64_t trial);

nlohmann::json BisectionJson(const Bisection& b);  // what GET /sweeps/{id} shows as "search"
// Back from BisectionJson's output; Invalid when it is not one.
Result<Bisection> BisectionFromJson(const nlohmann::json& j);

}  // namespace gauntlet
