// Fuzzes sweep requests: bytes -> JSON -> ParseSweepRequest -> ExpandSweep (core/sweep.h) against a
// fixed suite, tests/fixtures/suites/fixture-cmd.json (declared values and pattern parameters both).
//
// What must hold: neither throws; an expansion gives distinct configs, each naming every parameter
// of the suite and only those, each value one its parameter accepts, no config dropped by an exclude
// unless an include asked for it, and no more trials than max_trials.
//
// Expansion is bounded by max_trials (up to a million) and the grid check (ten million), by design;
// walking that is seconds of honest work, which the fuzzer would report as a timeout. So an input
// whose grid (plus what its includes expand to) is over kCost configs is not expanded.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "core/sweep.h"
#include "core/yaml_json.h"

namespace {
using namespace gauntlet;
using nlohmann::json;

constexpr double kCost = 100000;

[[noreturn]] void Fail(const char* what, const json& j) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n  input: %.2000s\n", what,
               j.dump(-1, ' ', true, json::error_handler_t::replace).c_str());
  std::abort();
}

const Suite& Fixture() {
  static const Suite s = [] {
    auto j = ReadJsonOrYaml(std::string(GAUNTLET_SOURCE_DIR) + "/tests/fixtures/suites/fixture-cmd.json");
    if (!j.ok()) std::abort();
    auto s = ParseSuite(*j);
    if (!s.ok()) std::abort();
    return *s;
  }();
  return s;
}

double Cost(const Suite& suite, const SweepRequest& r) {
  double grid = 1;
  for (const auto& p : suite.params) {
    auto it = r.parameters.find(p.name);
    grid *= it != r.parameters.end() ? static_cast<double>(it->second.size()) : p.def ? 1.0 : static_cast<double>(p.values.size());
  }
  return grid * (1.0 + static_cast<double>(r.include.size()));
}

bool Matches(const Config& c, const Config& partial) {
  for (const auto& [k, v] : partial)
    if (auto it = c.find(k); it == c.end() || it->second != v) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json j = json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  const Suite& suite = Fixture();
  Result<SweepRequest> req = Status::Invalid("unset", "");
  try {
    req = ParseSweepRequest(j);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ParseSweepRequest threw %s\n", e.what());
    Fail("ParseSweepRequest threw", j);
  }
  if (!req.ok()) return 0;
  if (req->targets.empty()) Fail("a request without targets", j);
  if (Cost(suite, *req) > kCost) return 0;
  Result<std::vector<Config>> out = Status::Invalid("unset", "");
  try {
    out = ExpandSweep(suite, *req);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ExpandSweep threw %s\n", e.what());
    Fail("ExpandSweep threw", j);
  }
  if (!out.ok()) return 0;
  if (out->empty()) Fail("an expansion with nothing in it", j);
  const int64_t trials = static_cast<int64_t>(out->size()) * static_cast<int64_t>(req->targets.size()) * req->repeats;
  if (trials > req->max_trials) Fail("more trials than max_trials", j);
  std::set<std::string> keys;
  for (const auto& c : *out) {
    if (!keys.insert(ConfigKey(c)).second) Fail("a config twice", j);
    if (c.size() != suite.params.size()) Fail("a config that does not name every parameter once", j);
    for (const auto& [k, v] : c) {
      const ParamSpec* p = suite.Param(k);
      if (!p) Fail("a config naming no parameter of the suite", j);
      if (!p->Accepts(v)) Fail("a config value its parameter refuses", j);
    }
    bool included = false;
    for (const auto& inc : req->include) included = included || Matches(c, inc);
    for (const auto& ex : req->exclude)
      if (!included && Matches(c, ex)) Fail("an excluded config that no include asked for", j);
  }
  return 0;
}
