// One reader per registered test runner (test_runner.h), as one classifier holds them: each made
// when the first line meant for it comes (most logs hold no runner's report, and a worker makes a
// classifier per stage), and shown only its lines. Copying the set copies every reader's state
// (Classifier::Finish and Tests work on a copy). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "classifier/test_report.h"
#include "classifier/test_runner.h"

namespace gauntlet::classifier {

class RunnerSet {
 public:
  RunnerSet();
  RunnerSet(const RunnerSet& o);
  RunnerSet& operator=(const RunnerSet& o);
  RunnerSet(RunnerSet&&) noexcept = default;
  RunnerSet& operator=(RunnerSet&&) noexcept = default;

  // Runner `i` (TestRunners()'s index) has a needle on the line about to be observed.
  void Hit(uint32_t i) { hit_ |= 1u << i; }
  // Shows `line` to every reader hit on it or active after its last line, then clears the hits.
  void Observe(std::string_view line);
  // The first complete report in the registry's order (a runner's inside another's, CTest running
  // GoogleTest programs, prefers the first), else nullopt.
  std::optional<TestReport> Complete() const;
  // A run cut short: the report with the most cases so far (the first on a tie), else nullopt.
  std::optional<TestReport> Longest() const;

 private:
  std::vector<std::unique_ptr<TestRunnerReader>> readers_;  // null until its first line
  // Bit i: reader i's needle is on the current line / reader i was active() after the last line it
  // saw (that only changes then), so a line costs one test of two masks, not a call per reader.
  uint32_t hit_ = 0, active_ = 0;
};

}  // namespace gauntlet::classifier
