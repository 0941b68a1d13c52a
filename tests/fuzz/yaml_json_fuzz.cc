// Fuzzes YAML input: bytes -> YamlToJson (core/yaml_json.h), what a suite or sweep written in YAML
// goes through (PUT /api/v1/suites/{name}, `gauntlet submit`, the suite folder), and DeclaredKeys,
// which reads the same text for the parameters' order.
//
// What must hold: neither throws nor crashes; an error is Invalid and names "body"; what converts is
// JSON that serialises (dump() throws on strings that are not UTF-8) and reads back as itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/yaml_json.h"

namespace {
using namespace gauntlet;
using nlohmann::json;

[[noreturn]] void Fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n  input (%zu bytes): %.2000s\n", what, text.size(), text.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto r = YamlToJson(text);
    if (!r.ok()) {
      if (r.status().code() != Code::kInvalid || r.status().field() != "body") Fail("an error that is not Invalid(body)", text);
    } else {
      std::string dumped;
      try {
        dumped = r->dump();
      } catch (const json::exception& e) {
        std::fprintf(stderr, "dump threw %s\n", e.what());
        Fail("YamlToJson gave JSON that does not serialise", text);
      }
      if (json::parse(dumped) != *r) Fail("the JSON does not read back as itself", text);
    }
    (void)DeclaredKeys(text, "parameters");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "threw %s\n", e.what());
    Fail("an exception escaped", text);
  }
  return 0;
}
