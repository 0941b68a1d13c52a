// Reads `go test` output (docs/CLASSIFIER.md "Test runners") line by line: `=== RUN   TestX` (and
// PAUSE/CONT/NAME), `--- PASS: TestX (0.00s)` / `--- FAIL:` / `--- SKIP:` (subtests indented four
// spaces a level), the test's log lines (`    x_test.go:12: got 1, want 2`: streamed before the result
// under -v, printed after it otherwise), `panic: ...` in a test, `panic: test timed out after 10m0s`
// with its `running tests:` list, the binary's `PASS` / `FAIL` and the go command's `ok  \tpkg\t0.01s`
// / `FAIL\tpkg\t0.01s`. go test states no counts: they are the cases' (a package that names no test
// is one case). Streaming and bounded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class GoTestReader final : public CopyableReader<GoTestReader> {
 public:
  // ASCII lowercase substrings of the `===` / `---` lines, panics and the package result. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True from a package's first test line to its result: log lines carry no needle.
  bool active() const override { return in_run_; }
  // True once the package result (or the test binary's bare PASS / FAIL) was seen.
  bool complete() const override { return complete_; }
  // The tests in the order go test reported them. Pure.
  TestReport Report() const override;

 private:
  struct After {      // the last result line, whose deeper-indented lines are its log
    size_t index;     // in report_.cases
    size_t indent;
  };

  bool ResultLine(std::string_view line);
  void LogLine(std::string_view line);
  void Panic(std::string_view t);
  void TimeoutLine(std::string_view line);
  void PackageLine(std::string_view t);
  void AddLog(TestCase* c, std::string_view line);
  TestCase* Case(std::string_view name);
  // Adds `c` to the report; returns it, or nullptr once kMaxCases are kept.
  TestCase* Add(TestCase c);
  // The case called `name` (added if new) as an error with `message`; the lines after are its dump.
  TestCase* Errored(std::string_view name, std::string_view message);

  bool in_run_ = false;
  std::string current_;                    // the test the === lines say is writing
  std::unordered_map<std::string, std::string> pending_;  // -v output of tests not finished yet
  std::unordered_map<std::string, size_t> index_;         // reported test -> report_.cases index
  std::optional<After> after_;
  std::optional<size_t> panicked_;         // the case a panic's goroutine dump belongs to
  std::string timeout_;                    // "Timeout: test timed out after 10m0s" while its list is read
  TestCounts dropped_counts_;              // the ends of cases over kMaxCases
  size_t package_start_ = 0;               // cases named before this package's output
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
