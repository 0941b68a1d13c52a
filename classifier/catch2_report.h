// Reads Catch2's console reporter (v2 and v3; docs/CLASSIFIER.md "Test runners") line by line: the
// `<name> is a Catch2 v3.7.1 host application.` banner that opens a run's report, each test case's
// framed header (a line of '-', the name and its sections, a line of '-', `file:line`, a line of
// '.'), its assertion blocks (`file:line: FAILED:`, `  REQUIRE( a == b )`, `with expansion:`,
// `due to unexpected exception with message:`, `SKIPPED:`, `explicitly with message:`), and the
// totals (`All tests passed (N assertions in M test cases)`, `test cases: 3 | 2 passed | 1 failed`
// with `assertions: ...`, `No tests ran`). Catch2 names only the test cases that printed something:
// the others are counted from the totals. Streaming and bounded; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class Catch2Reader final : public CopyableReader<Catch2Reader> {
 public:
  // ASCII lowercase substrings of the banner and the totals lines. Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // True between the banner and the totals: headers and assertion blocks carry no needle.
  bool active() const override { return in_run_; }
  // True once Catch2's totals were printed.
  bool complete() const override { return complete_; }
  // The test cases Catch2 reported on, with its totals as counts. Pure.
  TestReport Report() const override;

 private:
  enum class Header { kNone, kName, kSource, kDots };
  // One assertion block: from "file:line: FAILED:" to the blank line that ends it.
  struct Block {
    std::string kind;        // "FAILED", "SKIPPED", "PASSED"
    std::string expression;  // "CHECK( f(1) == 2 )"
    std::string label;       // the last "with expansion:" / "due to ...:" line, without its ':'
    std::string expansion;   // the lines under "with expansion:"
    std::string text;        // the lines under any other label (messages, the exception's what())
  };

  void HeaderLine(std::string_view line);
  void BodyLine(std::string_view line);
  void EndBlock();
  void Flush();
  bool Totals(std::string_view line);

  bool in_run_ = false;
  Header header_ = Header::kNone;
  std::vector<std::string> header_lines_;  // the name, its wrapped rest and the section names
  std::optional<TestCase> open_;           // the test case whose blocks are being read
  bool open_reported_ = false;             // it printed a FAILED / SKIPPED / PASSED block
  std::optional<Block> block_;
  TestCounts run_;                         // this run's named cases, until its totals replace them
  TestReport report_;
  bool complete_ = false;
};

}  // namespace gauntlet::classifier
