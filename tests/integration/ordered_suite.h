// The bisection tests' suite: 40 ordered versions × two backends, whose one command stage fails
// from version 17 on (a real process, printing a real RuntimeError), so the first bad version is 17.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace gauntlet::test {

// The suite definition named `name`; `gpus` > 0 adds `requires.gpus` (a target by hardware class).
inline nlohmann::json OrderedSuite40(const std::string& name, int gpus = 0) {
  nlohmann::json versions = nlohmann::json::array();
  for (int i = 1; i <= 40; ++i) versions.push_back(std::to_string(i));
  const std::string script =
      "import sys\n"
      "v = int(sys.argv[1])\n"
      "if v >= 17:\n"
      "    print('RuntimeError: fused kernel regressed in version %d' % v, file=sys.stderr)\n"
      "    sys.exit(1)\n"
      "print('ok')\n";
  nlohmann::json s = {
      {"name", name},
      {"parameters", {{"version", {{"values", versions}, {"ordered", true}}}, {"backend", {"a", "b"}}}},
      {"stages", nlohmann::json::array({{{"name", "run"}, {"kind", "command"},
                                         {"argv", {"python3", "-c", script, "{version}", "{backend}"}}}})}};
  if (gpus > 0) s["requires"] = {{"gpus", gpus}};
  return s;
}

}  // namespace gauntlet::test
