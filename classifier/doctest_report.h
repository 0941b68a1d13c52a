// Reads doctest's console reporter (docs/CLASSIFIER.md "Test runners") line by line: a failing test
// case's `TEST CASE:  name` header (with its subcases), its assertion lines (`file:7: ERROR: CHECK( a
// == b ) is NOT correct!` and `  values: CHECK( 1 == 2 )`, `FATAL ERROR:` for REQUIRE, `test case
// THREW exception: ...`, `test case CRASHED: SIGSEGV ...`, a FAIL's message), the verdict lines
// test_case_end adds (`Test case exceeded time limit`, `Failed as expected so marking it as not
// failed`), and the closing `[doctest] test cases: 2 | 1 passed | 1 failed | 0 skipped` / `[doctest]
// Status: FAILURE!`. doctest names only the test cases that failed; the others are counted. Streaming
// and bounded; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class DoctestReader final : public CopyableReader<DoctestReader> {
 public:
  // ASCII lowercase substrings of the test case header and the `[doctest]` lines. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True from the first test case header to `[doctest] Status:`: assertion lines carry no needle.
  bool active() const override { return in_run_; }
  // True once doctest's `[doctest] test cases: ...` totals were seen.
  bool complete() const override { return complete_; }
  // The failing test cases in doctest's order, with its totals as counts. Pure.
  TestReport Report() const override;

 private:
  void Header(std::string name);
  bool AssertionLine(std::string_view line);
  bool VerdictLine(std::string_view t);
  void Fail(TestEnd end, std::string_view message);
  void Flush();
  void Totals(std::string_view t);

  bool in_run_ = false;
  std::optional<TestCase> open_;  // the test case whose lines are being read
  bool open_failed_ = false;      // it printed a failure (or a verdict) of its own
  bool values_pending_ = false;   // the case's message is a check whose "values:" line comes next
  bool exception_pending_ = false;  // "... THREW exception: " puts the exception on the next line
  bool between_ = false;          // after a separator, before the next header: not the case's output
  TestCounts run_;                // this run's named cases, until its totals replace them
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
