// Reads a test-runner fixture (tests/fixtures/test_runners/: output captured from real pytest 7.2.1,
// GoogleTest 1.12.1 and ctest 3.25 runs of the programs beside them) for the reader tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gauntlet::testing_fixture {

inline std::string RunnerFixture(const std::string& name) {
  std::ifstream f(std::string(GAUNTLET_CLASSIFIER_FIXTURES) + "/test_runners/" + name, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The lines of `text` without their line ends.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

}  // namespace gauntlet::testing_fixture
