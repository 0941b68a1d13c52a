// Reads Python unittest's TextTestRunner report (docs/CLASSIFIER.md "Test runners") line by line: -v's
// `test_x (mod.Class.test_x) ... ok` / `FAIL` / `ERROR` / `skipped 'reason'` / `expected failure` /
// `unexpected success` (subtests indented two spaces, with their parameters), the `=====` / `FAIL:
// test_x (mod.Class.test_x)` / `-----` blocks with their traceback, `Ran 3 tests in 0.001s` and the
// closing `OK`, `OK (skipped=1, expected failures=1)`, `FAILED (failures=1, errors=1)` or `NO TESTS
// RAN`. Without -v only the failures are named; the rest are counted. Streaming and bounded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class UnittestReader final : public CopyableReader<UnittestReader> {
 public:
  // ASCII lowercase substrings of -v's result lines, the block separator and `Ran N tests`. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True inside a FAIL / ERROR block and between `Ran N tests` and its OK / FAILED line.
  bool active() const override { return state_ != State::kNone; }
  // True once `Ran N tests in ...` was seen.
  bool complete() const override { return complete_; }
  // The tests in unittest's order, with the closing line's counts. Pure.
  TestReport Report() const override;

 private:
  enum class State { kNone, kHeader, kDescription, kTraceback, kUnexpected, kStatus };
  struct Block {
    std::string flavour;    // "FAIL", "ERROR", "UNEXPECTED SUCCESS"
    std::string name;
    std::string exception;  // the line that ends the (last) traceback: "AssertionError: 1 != 2"
    bool in_frames = false, exception_open = false;
    std::string detail;
  };

  bool ResultLine(std::string_view line);
  bool Header(std::string_view t);
  void BlockLine(std::string_view line);
  void EndBlock();
  void StatusLine(std::string_view t);
  TestCase* Add(TestCase c);

  State state_ = State::kNone;
  bool cut_header_ = false;      // the block's header came without its "=" separator
  std::optional<Block> block_;
  int ran_ = -1;                 // "Ran N tests", until the status line under it
  std::unordered_map<std::string, size_t> index_;  // test id -> report_.cases index
  TestCounts run_;               // this run's named tests, until its status line replaces them
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
