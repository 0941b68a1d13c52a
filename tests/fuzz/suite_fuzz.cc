// Fuzzes suite parsing: bytes -> JSON -> ParseSuite (core/suite.h), what PUT /api/v1/suites/{name}
// and the daemon's suite folder both run on text someone wrote.
//
// What must hold: ParseSuite returns a Status for any JSON and never throws (the suite loader reads
// suites outside any handler's net); a suite it accepts keeps its definition as given, holds only
// what it validated (identifier parameter names, each default accepted, stages of a known kind with
// an argv whose placeholders it knows, a cost_s the coordinator can read), and parses the same
// again from its own definition.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "core/suite.h"

namespace {
using namespace gauntlet;
using nlohmann::json;

[[noreturn]] void Fail(const char* what, const json& j) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n  input: %.2000s\n", what, j.dump(-1, ' ', true, json::error_handler_t::replace).c_str());
  std::abort();
}

Result<Suite> Parse(const json& j) {
  try {
    return ParseSuite(j);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\nFUZZ FINDING: ParseSuite threw %s\n", e.what());
    Fail("ParseSuite threw", j);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json j = json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  auto s = Parse(j);
  if (!s.ok()) {
    if (s.status().message().empty()) Fail("an error without a message", j);
    return 0;
  }
  if (s->definition != j) Fail("the definition is not the input", j);
  if (s->stages.empty()) Fail("a suite without stages", j);
  std::set<std::string> known(BuiltinPlaceholders().begin(), BuiltinPlaceholders().end());
  std::set<std::string> names;
  for (const auto& p : s->params) {
    if (!names.insert(p.name).second) Fail("two parameters of one name", j);
    known.insert(p.name);
    if (p.values.empty() && !p.pattern) Fail("a parameter that accepts nothing", j);
    if (p.def && !p.Accepts(*p.def)) Fail("a default the parameter refuses", j);
    for (const auto& v : p.values)
      if (!p.Accepts(v)) Fail("a declared value the parameter refuses", j);
  }
  for (const auto& st : s->stages) {
    if (st.kind != "command" && st.kind != "server") Fail("a stage of an unknown kind", j);
    if (st.timeout_s <= 0) Fail("a stage timeout that is not positive", j);
    for (const auto& a : st.argv)
      for (const auto& ph : PlaceholdersIn(a))
        if (!known.count(ph)) Fail("an argv placeholder that names nothing", j);
    for (const auto& g : st.gate_on)
      if (!s->Param(g)) Fail("gate_on names no parameter", j);
  }
  // What the coordinator reads from an accepted suite's definition when a sweep is submitted.
  try {
    const double cost = s->definition.value("cost_s", 60.0);
    if (!(cost >= 0)) Fail("a negative cost_s", j);
  } catch (const std::exception& e) {
    Fail("an accepted suite whose cost_s the coordinator cannot read", j);
  }
  auto again = Parse(s->definition);
  if (!again.ok() || again->name != s->name || again->params.size() != s->params.size())
    Fail("the suite's own definition does not parse the same", j);
  return 0;
}
