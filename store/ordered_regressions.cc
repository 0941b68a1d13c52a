#include "store/ordered_regressions.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/bisect.h"
#include "core/hardware.h"
#include "core/pass_rate.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

// One cell on the line of an ordered parameter: its value's place in the declared order.
struct Point {
  int index = 0;
  Verdict verdict = Verdict::kPassed;
  std::string signature, config_key;
  int64_t trial = 0, sweep = 0, at = 0;
};

// The suite versions that declare an ordered parameter, parsed, and each suite's latest version.
struct Suites {
  std::map<std::pair<std::string, int>, Suite> versions;
  std::map<std::string, int> latest;
};

// A stored bisection as the regressions match it: what it searches and where it runs.
struct BisectRow {
  int64_t id = 0;
  std::string suite, rest;  // rest: its config without the parameter, canonical JSON
  int version = 0;
  Bisection search;
  json target;
  std::set<std::string> hardware;  // where its probes ran
};

using GroupKey = std::tuple<std::string, int, std::string, std::string, std::string>;  // suite, version, param, hw, rest

Suites LoadSuites(sql::Db& db, const std::optional<std::string>& suite) {
  Suites out;
  auto s = db.Prepare(std::string("SELECT name, version, definition FROM suites") + (suite ? " WHERE name = ?" : ""));
  if (suite) s.Bind(1, *suite);
  while (s.Step()) {
    const std::string name = s.Text(0);
    const int version = static_cast<int>(s.Int(1));
    out.latest[name] = std::max(out.latest[name], version);
    json def = json::parse(s.TextView(2), nullptr, false);
    if (def.is_discarded()) continue;
    auto parsed = ParseSuite(def);
    if (!parsed.ok()) continue;
    bool any = false;
    for (const ParamSpec& p : parsed->params) any = any || IsOrdered(*parsed, p.name);
    if (any) out.versions.emplace(std::make_pair(name, version), std::move(*parsed));
  }
  return out;
}

std::vector<BisectRow> LoadBisections(sql::Db& db, const std::optional<std::string>& suite) {
  std::vector<BisectRow> out;
  auto s = db.Prepare(std::string(
      "SELECT s.id, su.name, su.version, s.search, s.request,"
      " (SELECT config FROM trials WHERE sweep_id = s.id ORDER BY id LIMIT 1),"
      " (SELECT json_group_array(DISTINCT hardware) FROM trials WHERE sweep_id = s.id AND hardware IS NOT NULL)"
      " FROM sweeps s JOIN suites su ON su.id = s.suite_id WHERE s.kind = 'bisect' AND s.search IS NOT NULL") +
      (suite ? " AND su.name = ?" : "") + " ORDER BY s.id");
  if (suite) s.Bind(1, *suite);
  while (s.Step()) {
    BisectRow b;
    b.id = s.Int(0);
    b.suite = s.Text(1);
    b.version = static_cast<int>(s.Int(2));
    const json search = json::parse(s.TextView(3), nullptr, false);
    const json req = json::parse(s.TextView(4), nullptr, false);
    json config = s.IsNull(5) ? json() : json::parse(s.TextView(5), nullptr, false);
    const json hw = s.IsNull(6) ? json::array() : json::parse(s.TextView(6), nullptr, false);
    if (!search.is_object() || !config.is_object()) continue;
    auto parsed = BisectionFromJson(search);
    if (!parsed.ok()) continue;  // a damaged search covers nothing
    b.search = std::move(*parsed);
    config.erase(b.search.parameter);
    b.rest = config.dump();
    b.target = json::object();
    if (req.is_object() && req.contains("targets") && req["targets"].is_array() && !req["targets"].empty())
      b.target = req["targets"][0];
    if (hw.is_array())
      for (auto& h : hw)
        if (h.is_string()) b.hardware.insert(h.get<std::string>());
    out.push_back(std::move(b));
  }
  return out;
}

// The latest bisection of (suite, version, param, hardware, rest) whose good..bad range holds
// values[lo] and values[hi]; nullptr if none.
const BisectRow* Covering(const std::vector<BisectRow>& bs, const GroupKey& k, const std::vector<std::string>& values,
                          int lo, int hi) {
  const auto& [suite, version, param, hw, rest] = k;
  const auto target = TargetForHardware(hw);
  auto at = [&](const std::string& v) {
    auto it = std::find(values.begin(), values.end(), v);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
  };
  const BisectRow* found = nullptr;
  for (const BisectRow& b : bs) {
    if (b.suite != suite || b.version != version || b.search.parameter != param || b.rest != rest) continue;
    if (!b.hardware.count(hw) && !(target && b.target == *target)) continue;
    const int g = at(b.search.values[b.search.good]), bad = at(b.search.values[b.search.bad]);
    if (g >= 0 && bad >= 0 && g <= lo && hi <= bad) found = &b;  // ordered by id: the latest wins
  }
  return found;
}

// `s` as one shell word.
std::string Shell(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("_./:=@+-,").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What starts the bisection of the gap from `good` to `bad`.
BisectStart Start(const std::string& suite, const std::string& param, const std::string& good, const std::string& bad,
                  const json& rest, const json& target) {
  BisectStart out;
  out.request.suite = suite;
  out.request.parameter = param;
  out.request.good = good;
  out.request.bad = bad;
  out.request.config = rest;
  out.command = "gauntlet bisect --suite " + Shell(suite) + " --param " + Shell(param) + " --good " + Shell(good) +
                " --bad " + Shell(bad);
  for (auto& [k, v] : rest.items()) out.command += " --set " + Shell(k + "=" + v.get<std::string>());
  if (!target.empty()) {
    out.request.target = target;
    out.command += " --target " + Shell(target.dump());
  }
  return out;
}

RegressionEnd End(const Point& p, const std::string& value) {
  return {value, p.verdict, p.signature, p.config_key, p.trial, p.sweep};
}

json EndJson(const RegressionEnd& e) {
  return {{"value", e.value}, {"verdict", Name(e.verdict)}, {"signature", e.signature}, {"trial", e.trial},
          {"sweep", e.sweep}, {"config_key", e.config_key}};
}

// The POST /api/v1/bisect body of `r` (core/bisect_request.h reads it back).
json RequestJson(const BisectRequest& r) {
  json out = {{"suite", r.suite}, {"parameter", r.parameter}, {"good", r.good}, {"bad", r.bad}, {"config", r.config}};
  if (r.target) out["target"] = *r.target;
  return out;
}

// The regression from `good` to `bad` (adjacent points of group `k`).
OrderedRegression Item(const GroupKey& k, const json& rest, const Point& good, const Point& bad, const Suites& suites,
                       const std::vector<BisectRow>& bs) {
  const auto& [suite, version, param, hw, rest_key] = k;
  const auto& values = suites.versions.at({suite, version}).Param(param)->values;
  const int untested = bad.index - good.index - 1;
  const int latest = suites.latest.at(suite);
  OrderedRegression item;
  item.suite = suite;
  item.suite_version = version;
  item.latest_version = latest;
  item.parameter = param;
  item.hardware = hw;
  item.config = rest;
  item.config_key = bad.config_key;
  item.before = End(good, values[good.index]);
  item.after = End(bad, values[bad.index]);
  item.untested = untested;
  if (untested == 0) item.first_bad = values[bad.index];
  item.at = std::max(good.at, bad.at);
  const std::string span = param + " " + values[good.index] + " passed, " + values[bad.index] + " " + std::string(Name(bad.verdict));
  if (const BisectRow* b = Covering(bs, k, values, good.index, bad.index)) {
    item.bisection = CoveringBisection{b->id, b->search};
    item.detail = span + "; bisection " + std::to_string(b->id) + " " + std::string(Name(b->search.state)) + ": " +
                  b->search.detail;
    return item;
  }
  if (untested == 0) {
    item.detail = span + ": the first bad value is " + values[bad.index] + " (no value lies between)";
    return item;
  }
  const auto target = TargetForHardware(hw);
  if (version == latest && target) {
    item.start = Start(suite, param, values[good.index], values[bad.index], rest, *target);
    item.detail = span + "; " + std::to_string(untested) + " untested between, no bisection started: run `" +
                  item.start->command + "` (or POST /api/v1/bisect with start.request)";
  } else {
    item.detail = span + "; " + std::to_string(untested) + " untested between, no bisection started" +
                     (version == latest ? " (hardware " + hw + " cannot be named as a target)"
                                        : " (recorded under suite version " + std::to_string(version) +
                                              "; a bisection runs on version " + std::to_string(latest) + ")");
  }
  return item;
}

}  // namespace

Result<std::vector<OrderedRegression>> OrderedRegressions(Store& store, const std::optional<std::string>& suite,
                                                          QueryBudget* bounds) {
  std::vector<OrderedRegression> items;
  QueryBudget unbounded = QueryBudget::Unbounded();
  QueryBudget& budget = bounds ? *bounds : unbounded;
  try {
    store.ReadBounded(budget, [&](sql::Db& db) {
      const Suites suites = LoadSuites(db, suite);
      if (suites.versions.empty()) return;
      std::map<GroupKey, std::map<int, Point>> groups;
      std::map<GroupKey, json> rests;
      auto s = db.Prepare(std::string(
          "SELECT c.suite, c.suite_version, c.config_key, c.config, c.hardware, c.verdict, c.signature, c.trial_id,"
          " c.flaky, c.last_seen, COALESCE(t.sweep_id, 0) FROM cells c LEFT JOIN trials t ON t.id = c.trial_id") +
          (suite ? " WHERE c.suite = ?" : ""));
      if (suite) s.Bind(1, *suite);
      while (s.Step()) {
        budget.Count();
        auto sv = suites.versions.find({s.Text(0), static_cast<int>(s.Int(1))});
        const Verdict verdict = detail::VerdictColumn(s.TextView(5));
        if (sv == suites.versions.end() || s.Int(8) != 0 || !CountsAsRun(verdict)) continue;
        const json config = json::parse(s.TextView(3), nullptr, false);
        if (!config.is_object()) continue;
        for (const ParamSpec& p : sv->second.params) {
          if (!IsOrdered(sv->second, p.name) || !config.contains(p.name) || !config[p.name].is_string()) continue;
          const int i = p.IndexOf(config[p.name].get<std::string>());
          if (i < 0) continue;
          json rest = config;
          rest.erase(p.name);
          GroupKey k{sv->first.first, sv->first.second, p.name, s.Text(4), rest.dump()};
          groups[k][i] = Point{i, verdict, s.Text(6), s.Text(2), s.Int(7), s.Int(10), s.Int(9)};
          rests[k] = std::move(rest);
        }
      }
      const std::vector<BisectRow> bs = LoadBisections(db, suite);
      for (auto& [k, line] : groups)
        for (auto it = line.begin(); it != line.end() && std::next(it) != line.end(); ++it) {
          const Point &a = it->second, &b = std::next(it)->second;
          if (a.verdict == Verdict::kPassed && b.verdict != Verdict::kPassed) items.push_back(Item(k, rests[k], a, b, suites, bs));
        }
    });
  } catch (const sql::Error& e) {
    if (IsInterrupt(e.code()) && budget.why() != QueryBudget::Why::kNone)
      return budget.Answer("give suite= (regressions read every cell of every suite without it)", "suite");
    return Status::Internal(e.what());
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const OrderedRegression& a, const OrderedRegression& b) { return a.at > b.at; });
  return items;
}

json OrderedRegressionJson(const OrderedRegression& r) {
  json bisection = nullptr, start = nullptr;
  if (r.bisection) {
    const Bisection& b = r.bisection->search;
    const json s = BisectionJson(b);
    bisection = {{"id", r.bisection->id}, {"state", s["state"]}, {"good", s["good"]}, {"bad", s["bad"]},
                 {"first_bad", s["first_bad"]}, {"interval", s["interval"]}, {"trials", s["trials"]}};
  }
  if (r.start) start = {{"request", RequestJson(r.start->request)}, {"command", r.start->command}};
  return {{"kind", "ordered"}, {"suite", r.suite}, {"suite_version", r.suite_version},
          {"latest_version", r.latest_version}, {"parameter", r.parameter}, {"hardware", r.hardware},
          {"config", r.config}, {"config_key", r.config_key}, {"before", EndJson(r.before)},
          {"after", EndJson(r.after)}, {"untested", r.untested},
          {"first_bad", r.first_bad ? json(*r.first_bad) : json()}, {"at", r.at}, {"bisection", bisection},
          {"start", start}, {"detail", r.detail}};
}

}  // namespace gauntlet::store
