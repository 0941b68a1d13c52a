// Reads pytest's own console report (pytest 6-8; docs/CLASSIFIER.md "Test runners") line by line:
// the final summary (`==== 2 failed, 1 passed, 1 skipped in 0.03s ====`, `-q`'s bare form,
// `no tests ran`), the FAILURES/ERRORS sections (each test's `E   Type: msg` lines and its
// `path:line: Type` location), the short summary (`FAILED node - Type: msg`, `ERROR node - ...`,
// `SKIPPED [N] path:line: reason`, `XFAIL node - reason`, `PASSED node`) and `-v`'s per-test lines
// (`path::test PASSED [ 25%]`, `SKIPPED (reason)`). Streaming: memory is bounded by the report's
// caps (test_report.h); the result does not depend on how lines were chunked. Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classifier/test_report.h"
#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class PytestReader final : public CopyableReader<PytestReader> {
 public:
  // The lines it reads outside a section: a border ("===="), a -v line ("... PASSED [ 25%]", which
  // names its outcome), and the final counts ("2 failed, 1 passed in 0.03s", whose words are pytest's
  // outcome names: terminal.py KNOWN_TYPES). Inside FAILURES, ERRORS and the short summary it sees
  // every line (a traceback is free text).
  static std::vector<std::string> Needles() {
    return {"==", "passed", "failed", "error", "skipped", "deselected", "xfail", "xpass", "warning", "no tests ran"};
  }
  bool active() const override {
    return section_ == Section::kFailures || section_ == Section::kErrors || section_ == Section::kSummary;
  }
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True once pytest's final summary line was seen: the run was pytest's and it finished.
  bool complete() const override { return complete_; }
  // The cases as pytest reported them, merged by node id (a FAILURES block gives the full message,
  // the short summary the node id), with the summary's counts. Pure; may be called repeatedly.
  TestReport Report() const override;

 private:
  enum class Section { kNone, kFailures, kErrors, kSummary, kOther };
  struct Block {  // one test's section in FAILURES or ERRORS
    std::string name;  // as the header shows it: "test_x", "TestA.test_b[128]"
    TestEnd end = TestEnd::kFailed;
    std::string exception;  // the first exception-shaped E line (or traceback line), "Type: msg"
    std::string first_e;    // the first E line, when none is exception-shaped
    std::string location_type;  // "AssertionError" from "test_x.py:19: AssertionError"
    std::string detail;
  };
  void EndBlock();
  void SummaryLine(std::string_view line);
  void VerboseLine(std::string_view line);
  // Adds or updates the case called `name`; returns it (nullptr once the cap is reached).
  TestCase* Case(const std::string& name);

  Section section_ = Section::kNone;
  std::optional<Block> block_;
  std::vector<Block> blocks_;  // at most kMaxCases
  TestReport report_;          // cases from the summary and -v lines; counts from the final line
  std::unordered_map<std::string, size_t> index_;  // node id -> report_.cases index
  std::vector<char> full_reason_;  // per case: its skip reason came whole from a SKIPPED line
  bool complete_ = false;
  bool counted_ = false;  // the final line's counts were read
};

// True for a test runner's line that reports a test that passed, was skipped or failed as the suite
// expected (pytest's "XFAIL node - reason", "XPASS ...", "SKIPPED [1] ...", "node XFAIL (reason)",
// GoogleTest's "[  SKIPPED ]"): the test runner's report judges those tests, so the built-in line
// rules must not read the reason's words (an xfail marker's "requires sm_100") as the run's failure. Pure.
bool IsPassOrSkipOutcomeLine(std::string_view line);

// Reads pytest's final counts line ("2 failed, 1 passed, 1 skipped, 1 error in 0.02s", with or
// without its '=' border; "no tests ran in 0.01s") into *out; false for any other line. Pure.
bool ParsePytestCounts(std::string_view line, TestCounts* out);

}  // namespace gauntlet::classifier
