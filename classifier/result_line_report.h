// Reads the kernel projects' own one-line verdicts (docs/CLASSIFIER.md "Test runners"): a program
// with one check prints one result line. The CUDA samples' `Result = PASS` / `Result = FAIL`, `Test
// passed` / `Test failed`, `PASSED` / `FAILED` alone; NVIDIA's QA lines `&&&& PASSED name` / `&&&&
// FAILED name` / `&&&& WAIVED name` (and `[name] test results...` above a bare status); CUTLASS
// examples' `Disposition: Passed` / `Failed` and `Passed` / `Failed` alone; the CUTLASS profiler's
// `Disposition: Passed|Failed|Incorrect|Not verified|Not supported|Not run` under its
// `Operation: name`. Only whole lines of these forms count, so prose that says "passed" makes no
// case. Every result line is one case. Streaming and bounded; not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class ResultLineReader final : public CopyableReader<ResultLineReader> {
 public:
  // ASCII lowercase substrings that every result line (and the lines naming its program) contain.
  // Static data.
  static std::vector<std::string> Needles();
  // One line of output, without its line end (a trailing '\r' is ignored).
  void Observe(std::string_view line) override;
  // Never: every line this reader reads carries a needle.
  bool active() const override { return false; }
  // True once a result line was seen.
  bool complete() const override { return !report_.cases.empty() || report_.dropped > 0; }
  // One case per result line, in log order. Pure.
  TestReport Report() const override;

 private:
  bool QaLine(std::string_view t);
  bool DispositionLine(std::string_view t);
  bool BareLine(std::string_view t);
  void Add(TestEnd end, bool assertion, std::string_view message, std::string name = "");

  std::string program_;    // from "&&&& RUNNING name" / "[name] test results...", for the next result
  std::string operation_;  // the profiler's "Operation: name" above its Disposition line
  TestReport report_;
};

}  // namespace gauntlet::classifier
