// A small CTest project as kernel projects write theirs, for the tests that run CTest as a stage
// (test_runner_test, isolation_test): `ok` checks its result against a reference and passes, `wrong`
// prints the mismatch and fails, `needs_sm100` needs hardware this machine lacks and skips through
// SKIP_RETURN_CODE 77. Built here with CMake and the C compiler the build uses.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gauntlet::test {

// Whether cmake and ctest are installed here.
inline bool HaveCtest() { return std::system("cmake --version >/dev/null 2>&1 && ctest --version >/dev/null 2>&1") == 0; }

// Writes the project into `src` and builds it into `bin`; true when the build succeeded.
inline bool BuildCtestProject(const std::string& src, const std::string& bin) {
  std::filesystem::create_directories(src);
  std::ofstream(src + "/CMakeLists.txt") << "cmake_minimum_required(VERSION 3.20)\nproject(k C)\nenable_testing()\n"
                                             "foreach(n ok wrong needs_sm100)\n  add_executable(${n} ${n}.c)\n"
                                             "  add_test(NAME ${n} COMMAND ${n})\nendforeach()\n"
                                             "set_tests_properties(needs_sm100 PROPERTIES SKIP_RETURN_CODE 77)\n";
  const std::string check =
      "#include <stdio.h>\nint main(void) { float ref[5] = {1, 2, 3, 4, 5}, out[5];\n"
      "  for (int i = 0; i < 5; ++i) out[i] = ref[i] + BUG * (i == 3);\n"
      "  for (int i = 0; i < 5; ++i) if (out[i] != ref[i]) { printf(\"mismatch at index %d: expected %f, got %f\\n\", i, ref[i], out[i]); return 1; }\n"
      "  printf(\"Result = PASS\\n\"); return 0; }\n";
  std::ofstream(src + "/ok.c") << "#define BUG 0\n" << check;
  std::ofstream(src + "/wrong.c") << "#define BUG 1\n" << check;
  std::ofstream(src + "/needs_sm100.c") << "#include <stdio.h>\nint main(void) { printf(\"NVFP4 GEMM requires compute "
                                           "capability 10.0: skipping\\n\"); return 77; }\n";
  return std::system(("cmake -S " + src + " -B " + bin + " >/dev/null 2>&1 && cmake --build " + bin + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace gauntlet::test
