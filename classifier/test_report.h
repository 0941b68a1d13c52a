// What a test runner said about its test cases (docs/CLASSIFIER.md "Test runners"): the cases it
// ran with how each ended, and the counts of its own summary. Filled by the readers of pytest's and
// GoogleTest's console output (pytest_report.h, gtest_report.h) and of JUnit XML files
// (junit_report.h); judged into verdicts by test_judge.h. Plain values; bounded (kMaxCases, field caps).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::classifier {

// How one test case ended, in the runner's own terms (not yet a verdict).
enum class TestEnd : unsigned char {
  kPassed,
  kSkipped,   // skipped (pytest.skip, GTEST_SKIP, ctest SKIP_RETURN_CODE): `message` is the reason
  kXfailed,   // an expected failure (pytest xfail, unittest expectedFailure): the suite says it is known to fail
  kXpassed,   // a non-strict expected failure that passed (pytest XPASS): the test itself passed
  kFailed,    // an assertion of the test failed, or (pytest) the test body raised
  kError,     // an error outside the assertions: a fixture/setup error, a C++ exception, a crash;
              // a test the runner stopped at its time limit is an error whose message starts "Timeout"
};

// Bounds on what a report keeps, whatever the runner printed.
inline constexpr size_t kMaxCases = 1000;        // cases kept per report; later ones are only counted
inline constexpr size_t kMaxCaseName = 256;      // bytes of a case's name
inline constexpr size_t kMaxCaseMessage = 1024;  // bytes of `message`
inline constexpr size_t kMaxCaseDetail = 4096;   // bytes of `detail`

struct TestCase {
  std::string name;      // "test_kernels.py::test_fp8_addmm", "Bf16Gemm.WithinTolerance"
  TestEnd end = TestEnd::kPassed;
  // A failure's exception as "Type: message" when the runner names one (pytest), else its first
  // message line; a skip's reason.
  std::string message;
  std::string detail;    // the rest the runner printed for this case (traceback, E lines, output)
  bool assertion = false;  // the runner says an assertion failed (GoogleTest's EXPECT/ASSERT)
  double seconds = -1;   // -1: not reported
};

// The counts a runner's own summary states (or that the cases add up to when it states none).
struct TestCounts {
  int passed = 0, failed = 0, errors = 0, skipped = 0, xfailed = 0, xpassed = 0;
  int total() const { return passed + failed + errors + skipped + xfailed + xpassed; }
};

struct TestReport {
  std::string runner;    // "pytest", "gtest", "junit", "ctest", ... (test_runner.h)
  std::vector<TestCase> cases;  // at most kMaxCases, in the order the runner reported them
  TestCounts counts;
  size_t dropped = 0;    // cases counted but not kept (over kMaxCases)
  bool complete = false; // the runner's final summary was seen (a run cut short has none)
  std::string summary;   // the summary line itself ("2 failed, 1 passed, 1 skipped in 0.03s")
};

// A case called `name` that passed, everything else empty. Pure.
TestCase NamedCase(std::string_view name);
// Appends `c` to r->cases with every field cut to its bound, or counts it in r->dropped once
// kMaxCases are kept. Pure.
void AddCase(TestReport* r, TestCase c);
// Appends `line` and a newline to *detail while it is under kMaxCaseDetail bytes (AddCase cuts the
// rest): how readers gather a case's output. Pure.
void AppendDetailLine(std::string* detail, std::string_view line);
// Counts one case that ended `e` in *n. Pure.
void CountEnd(TestCounts* n, TestEnd e);
// Adds every count of `n` to *to. Pure.
void AddCounts(TestCounts* to, const TestCounts& n);
// "passed", "skipped", "xfailed", "failed", "error": how a case ended, for logs and JSON. Static storage.
std::string_view EndName(TestEnd e);
// `s` cut to at most `max` bytes on a UTF-8 boundary. Pure.
std::string CutUtf8(std::string_view s, size_t max);

}  // namespace gauntlet::classifier
