// Reads GoogleTest's own console report (docs/CLASSIFIER.md "Test runners") line by line:
// `[ RUN      ] Suite.Test`, the test's output (`file:line: Failure` and its message, `file:line:
// Skipped` and the reason, `C++ exception with description "..." thrown in the test body.`),
// `[       OK ]`, `[  FAILED  ]`, `[  SKIPPED ]` with the test's time, and the final
// `[==========] N tests from M test suites ran.` / `[  PASSED  ] N tests.` Streaming and bounded
// (test_report.h caps); not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "classifier/test_report.h"
#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class GtestReader final : public CopyableReader<GtestReader> {
 public:
  // Its tags (gtest.cc PrettyUnitTestResultPrinter); inside a test it sees every line (a failure's
  // message lines carry no tag).
  static std::vector<std::string> Needles() {
    return {"[ run      ]", "[       ok ]", "[  failed  ]", "[  skipped ]", "[==========]"};
  }
  bool active() const override { return running_.has_value(); }
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True once GoogleTest's "[==========] N tests from M test suites ran." was seen.
  bool complete() const override { return complete_; }
  // The cases in the order they ran; a test still running when the output ended is an error
  // ("did not finish"). Pure; may be called repeatedly.
  TestReport Report() const override;

 private:
  void End(TestEnd end, std::string_view rest);

  std::optional<TestCase> running_;  // between [ RUN ] and its end line
  bool in_skip_ = false, in_failure_ = false;  // the body lines now being read are a reason / a message
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
