// Reads CTest's console report (docs/CLASSIFIER.md "Test runners") line by line: each test's result
// line (` 1/3 Test  #1: name .......   Passed    0.01 sec`, `***Failed  <reason>`, `***Skipped`,
// `***Timeout`, `***Exception: SegFault`, `<what>***Exception:`, `***Not Run`), the output that
// --output-on-failure prints right after a failed test's line, the closing `67% tests passed, 1 tests
// failed out of 3` (`100% tests passed out of 3` in newer CMake) or `No tests were found!!!`, and the
// `The following tests FAILED:` list. Streaming and bounded (test_report.h caps); not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class CtestReader final : public CopyableReader<CtestReader> {
 public:
  // ASCII lowercase substrings of every CTest line read outside a failed test's output. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True while a failed test's output or the FAILED list (lines without a needle) is being read.
  bool active() const override { return output_.has_value() || in_failed_list_; }
  // True once CTest's `N% tests passed ...` line (or `No tests were found!!!`) was seen.
  bool complete() const override { return complete_; }
  // The tests in the order CTest finished them, with CTest's own counts. Pure.
  TestReport Report() const override;

 private:
  // A failed test whose --output-on-failure text is being read, with candidates for its message.
  struct Output {
    TestCase c;
    bool has_message = false;       // CTest's own reason or crash already gave the message
    std::string exception;          // the exception line closing a Python traceback in the output
    std::string error_line;         // the first unindented line that names an error
    std::string first_line;         // the first non-blank line
    bool in_traceback = false, after_gtest_failure = false;
  };

  bool ResultLine(std::string_view line);
  void OutputLine(std::string_view line);
  void CloseOutput();
  void Add(TestCase c);
  bool SummaryLine(std::string_view line);
  void FailedListLine(std::string_view line);

  std::optional<Output> output_;
  std::string pending_;               // "Unable to find executable: x", printed before its "***Not Run"
  bool reason_continues_ = false;     // a multi-line "Required regular expression" reason is open
  bool in_failed_list_ = false;
  TestCounts run_;                    // this run's cases, until its summary line reconciles them
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
