// The test runners the classifier reads (test_runner.h), in the order a complete report is preferred
// when two finished in one log: the runners that name each check (pytest, GoogleTest, Catch2,
// doctest, Rust, go, unittest) before CTest, which runs them and reports only pass/fail per
// program, and the kernel projects' result lines last (a bare "PASSED" line completes them).
// Adding a runner: its file, and one line here.
#include "classifier/test_runner.h"

#include <cstdint>
#include <cstdlib>

#include "classifier/catch2_report.h"
#include "classifier/ctest_report.h"
#include "classifier/doctest_report.h"
#include "classifier/go_test_report.h"
#include "classifier/gtest_report.h"
#include "classifier/pytest_report.h"
#include "classifier/result_line_report.h"
#include "classifier/rust_test_report.h"
#include "classifier/unittest_report.h"

namespace gauntlet::classifier {
namespace {

template <typename Reader>
TestRunnerEntry Entry(std::string_view runner) {
  return {runner, Reader::Needles(), [] { return std::unique_ptr<TestRunnerReader>(new Reader()); }};
}

}  // namespace

const std::vector<TestRunnerEntry>& TestRunners() {
  static const std::vector<TestRunnerEntry> k = {
      Entry<PytestReader>("pytest"),     Entry<GtestReader>("gtest"),       Entry<Catch2Reader>("catch2"),
      Entry<DoctestReader>("doctest"),   Entry<RustTestReader>("rust"),     Entry<GoTestReader>("go"),
      Entry<UnittestReader>("unittest"), Entry<CtestReader>("ctest"),       Entry<ResultLineReader>("result_line"),
  };
  // The classifier keeps one bit per runner (classifier.cc RunnerSet).
  static_assert(sizeof(uint32_t) * 8 >= 32);
  if (k.size() > 32) std::abort();
  for (const TestRunnerEntry& e : k)
    if (e.needles.empty()) std::abort();  // a reader is shown the lines its needles find
  return k;
}

}  // namespace gauntlet::classifier
