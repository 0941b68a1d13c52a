#include "core/bisect.h"

#include <algorithm>
#include <ostream>

#include "core/enum_names.h"
#include "core/pass_rate.h"

namespace gauntlet {
using nlohmann::json;

namespace {
constexpr std::string_view kBisectStateNames[] = {"running", "found", "good_not_good", "bad_not_bad", "undecided",
                                                  "cancelled"};
}  // namespace

std::string_view Name(BisectState s) { return NameIn(kBisectStateNames, s); }
std::optional<BisectState> ParseBisectState(std::string_view name) {
  return ParseIn<BisectState>(kBisectStateNames, name);
}

void PrintTo(BisectState s, std::ostream* os) { *os << Name(s); }

bool IsOrdered(const Suite& suite, const std::string& name) {
  const json& params = suite.definition.contains("parameters") ? suite.definition["parameters"] : json();
  if (!params.is_object() || !params.contains(name)) return false;
  const json& p = params[name];
  return p.is_object() && p.value("ordered", false) == true;
}

Result<Bisection> StartBisection(const ParamSpec& p, bool ordered, const std::string& good, const std::string& bad) {
  if (!ordered)
    return Status::Invalid("parameter " + p.name + " is not ordered (declare it {\"values\": [...], \"ordered\": true})",
                           "parameter");
  auto at = [&](const std::string& v) {
    auto it = std::find(p.values.begin(), p.values.end(), v);
    return it == p.values.end() ? -1 : static_cast<int>(it - p.values.begin());
  };
  Bisection b;
  b.parameter = p.name;
  b.values = p.values;
  b.good = at(good);
  b.bad = at(bad);
  if (b.good < 0) return Status::Invalid("'" + good + "' is not a declared value of " + p.name, "good");
  if (b.bad < 0) return Status::Invalid("'" + bad + "' is not a declared value of " + p.name, "bad");
  if (b.good >= b.bad)
    return Status::Invalid("good (" + good + ") must come before bad (" + bad + ") in " + p.name + "'s declared order",
                           "bad");
  b.lo = b.good;
  b.hi = b.bad;
  b.detail = "searching " + std::to_string(b.hi - b.lo - 1) + " values between " + good + " and " + bad;
  return b;
}

std::optional<int> NextProbe(Bisection& b) {
  b.pending.reset();
  b.pending_trial = 0;
  if (b.state != BisectState::kRunning) return std::nullopt;
  int next;
  if (b.hi - b.lo > 1) next = b.lo + (b.hi - b.lo) / 2;
  else if (!b.lo_known) next = b.lo;  // every probe was bad: the answer rests on `good` being good
  else if (!b.hi_known) next = b.hi;  // every probe was good: it rests on `bad` being bad
  else {
    b.state = BisectState::kFound;
    b.first_bad = b.hi;
    b.detail = "first bad " + b.parameter + " is " + b.values[b.hi] + " (the last good is " + b.values[b.lo] + ")";
    return std::nullopt;
  }
  b.pending = next;
  b.detail = "trying " + b.values[next] + "; first bad is after " + b.values[b.lo] + " and at or before " + b.values[b.hi];
  return next;
}

void Observe(Bisection& b, Verdict v, int64_t trial) {
  if (!b.pending || b.state != BisectState::kRunning) return;
  const int i = *b.pending;
  const bool good = v == Verdict::kPassed, bad = !good && CountsAsRun(v);
  const std::string verdict(Name(v));  // for the steps and the prose
  b.steps.push_back({{"value", b.values[i]}, {"index", i}, {"verdict", verdict}, {"trial", trial}, {"bad", bad}});
  b.pending.reset();
  b.pending_trial = 0;
  if (!good && !bad) {
    b.state = BisectState::kUndecided;
    b.detail = b.values[i] + " ended " + verdict + ", which says nothing about the config: retry the sweep or bisect again";
    return;
  }
  if (i == b.lo && !b.lo_known) {
    if (bad) {
      b.state = BisectState::kGoodNotGood;
      b.detail = "good (" + b.values[i] + ") is not good: it ended " + verdict;
    }
    b.lo_known = true;
  } else if (i == b.hi && !b.hi_known) {
    if (good) {
      b.state = BisectState::kBadNotBad;
      b.detail = "bad (" + b.values[i] + ") is not bad: it passed";
    }
    b.hi_known = true;
  } else if (bad) {
    b.hi = i;
    b.hi_known = true;
  } else {
    b.lo = i;
    b.lo_known = true;
  }
}

json BisectionJson(const Bisection& b) {
  return {{"parameter", b.parameter}, {"values", b.values}, {"good", b.values[b.good]}, {"bad", b.values[b.bad]},
          {"state", Name(b.state)}, {"interval", {{"good", b.values[b.lo]}, {"bad", b.values[b.hi]},
                                             {"good_known", b.lo_known}, {"bad_known", b.hi_known},
                                             {"values_left", std::max(0, b.hi - b.lo - 1)}}},
          {"lo", b.lo}, {"hi", b.hi},
          {"first_bad", b.first_bad ? json(b.values[*b.first_bad]) : json()},
          {"trying", b.pending ? json(b.values[*b.pending]) : json()}, {"pending_trial", b.pending_trial},
          {"steps", b.steps}, {"trials", b.steps.size()}, {"detail", b.detail}};
}

Result<Bisection> BisectionFromJson(const json& j) {
  try {
    Bisection b;
    b.parameter = j.at("parameter").get<std::string>();
    b.values = j.at("values").get<std::vector<std::string>>();
    auto at = [&](const std::string& v) {
      return static_cast<int>(std::find(b.values.begin(), b.values.end(), v) - b.values.begin());
    };
    b.good = at(j.at("good").get<std::string>());
    b.bad = at(j.at("bad").get<std::string>());
    b.lo = j.at("lo").get<int>();
    b.hi = j.at("hi").get<int>();
    const int n = static_cast<int>(b.values.size());
    if (b.good >= n || b.bad >= n || b.lo < 0 || b.hi >= n || b.lo >= b.hi) return Status::Invalid("bad search state", "search");
    b.lo_known = j.at("interval").at("good_known").get<bool>();
    b.hi_known = j.at("interval").at("bad_known").get<bool>();
    auto state = ParseBisectState(j.at("state").get<std::string>());
    if (!state) return Status::Invalid("bad search state: unknown state " + j["state"].dump(), "search");
    b.state = *state;
    if (j.at("first_bad").is_string()) b.first_bad = at(j["first_bad"].get<std::string>());
    if (j.at("trying").is_string()) b.pending = at(j["trying"].get<std::string>());
    b.pending_trial = j.value("pending_trial", int64_t{0});
    b.steps = j.at("steps");
    b.detail = j.value("detail", "");
    return b;
  } catch (const json::exception& e) {
    return Status::Invalid(std::string("bad search state: ") + e.what(), "search");
  }
}

}  // namespace gauntlet
