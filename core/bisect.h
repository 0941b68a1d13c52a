// Bisection over an ordered parameter (a suite parameter declared {"values": [...], "ordered": true}):
// the search state a bisection sweep keeps, and its two moves, which value to try next and what a
// verdict there means. Pure data and functions; thread-safe (no shared state).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/suite.h"
#include "core/verdict.h"

namespace gauntlet {

// How a search stands: running, found, good_not_good (the good end failed), bad_not_bad (the bad
// end passed), undecided (a probe ended without a verdict about the config: infra_error,
// cancelled), cancelled (by a user).
enum class BisectState : uint8_t { kRunning, kFound, kGoodNotGood, kBadNotBad, kUndecided, kCancelled };
// "good_not_good": the SQL/JSON spelling of `s`; static storage.
std::string_view Name(BisectState s);
// The state spelled `name`, or nullopt for anything else.
std::optional<BisectState> ParseBisectState(std::string_view name);
// Spelled with Name() at the JSON edge, never as a number (as core/verdict.h's enums).
void to_json(nlohmann::json&, BisectState) = delete;
void from_json(const nlohmann::json&, BisectState&) = delete;
// GoogleTest prints a state by its name. Writes to *os; thread-safe.
void PrintTo(BisectState s, std::ostream* os);

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
  BisectState state = BisectState::kRunning;
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
