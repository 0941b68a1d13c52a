// Judges a test runner's report (test_report.h) case by case into verdicts, and the run by its worst
// case (docs/CLASSIFIER.md "Test runners"). Pure over its inputs; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "classifier/classifier.h"
#include "classifier/test_report.h"
#include "core/signature_rule.h"
#include "core/verdict.h"

namespace gauntlet::classifier {

struct JudgedCase {
  std::string name;
  TestEnd end = TestEnd::kPassed;
  Verdict verdict = Verdict::kPassed;
  std::string signature, evidence;  // empty for a passed case
  double seconds = -1;
  // A failure whose own text named no cause: only the runner's word (a bare failed status, a
  // PASS/FAIL result line, a count of cases the output never named) says it failed.
  bool said_nothing = false;
};

struct TestJudgement {
  std::string runner;               // "pytest", "gtest", "junit"
  std::vector<JudgedCase> cases;    // one per kept case, in the runner's order (at most kMaxCases + 4)
  TestCounts counts;                // the runner's own counts
  size_t dropped = 0;               // cases the runner reported beyond kMaxCases (counted, not judged)
  bool complete = false;
  std::string summary;              // the runner's summary line
  // The run's verdict: the worst case's (highest VerdictInfo::severity, ties to the higher
  // cause_rank, then the first); passed when every case passed; crashed:no_tests when none ran.
  Classification overall;
  bool overall_said_nothing = false;  // the worst case's said_nothing
};

// Judges each case of `r`:
//   passed, xfailed -> passed;
//   skipped -> unsupported, signature "unsupported:skipped:<normalized reason>";
//   failed / error -> what the classifier says of the case's exception and output (its
//     "Type: message" as the final line of a traceback, then what the runner printed for it), with
//     `rules` (the suite's signature rules); when that explains nothing (crashed:exit_code), a failed
//     assertion is wrong_output:assertion:<message> and anything else crashed:test_failed:<message or name>.
// Counts the runner states but whose cases it did not name (pytest without -rs/-v prints only
// "1 skipped in 0.1s") become one unnamed case each, so a summary alone can never pass a skip.
TestJudgement JudgeTests(const TestReport& r, const std::vector<SignatureRule>& rules = {});

// A report cut short (a crash, a kill, a pasted excerpt): its failed and errored cases judged, the
// worst deciding with basis runner; nullopt when it names none, or none the classifier explains
// beyond the exit status (its skips and passes say nothing about a run that failed). Pure.
std::optional<Classification> JudgeFailedCases(const TestReport& r, const std::vector<SignatureRule>& rules = {});

// How many JudgeTests calls are on this thread's stack: the classifier reads a runner's report in a
// case's own text only below kMaxJudgeDepth. Thread-safe (thread-local).
int TestJudgementDepth();
inline constexpr int kMaxJudgeDepth = 2;

// {"runner", "complete", "summary", "counts": {verdict: n}, "runner_counts": {passed, failed,
// errors, skipped, xfailed}, "total", "dropped", "cases": [{"name", "outcome", "verdict",
// "signature", "evidence", "seconds"}]}: what a worker reports and the log's summary reads.
nlohmann::json ToJson(const TestJudgement& j);

}  // namespace gauntlet::classifier
