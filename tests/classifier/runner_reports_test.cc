// The console readers of CTest, Catch2, doctest, Rust's libtest, go test, Python's unittest and the
// kernel projects' result lines (classifier/*_report.h), fed as the classifier feeds them: a line
// reaches Observe only when it holds one of the reader's needles or the reader is active(). Inputs are
// the runners' output written exactly as printed: captured from real runs here (ctest 3.25.1,
// Catch2 v3.7.1 and v2.13.10, doctest 2.4.11, rustc 1.95, Python 3.11.7) or quoted from public issue
// threads (URL beside each), with shapes checked against the runners' sources.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "classifier/catch2_report.h"
#include "classifier/ctest_report.h"
#include "classifier/doctest_report.h"
#include "classifier/go_test_report.h"
#include "classifier/normalize.h"
#include "classifier/result_line_report.h"
#include "classifier/rust_test_report.h"
#include "classifier/unittest_report.h"

namespace gauntlet::classifier {
namespace {

// Feeds `text` line by line the way the classifier does: a line is shown when it contains one of the
// reader's needles (ASCII case-insensitive) or while the reader says it is active.
template <typename Reader>
Reader RunnerFeed(std::string_view text, Reader r = Reader()) {
  const std::vector<std::string> needles = Reader::Needles();
  std::stringstream ss{std::string(text)};
  for (std::string line; std::getline(ss, line);) {
    bool shown = r.active();
    for (const std::string& n : needles) shown = shown || ContainsCI(line, n);
    if (shown) r.Observe(line);
  }
  return r;
}

template <typename Reader>
TestReport RunnerReadAll(std::string_view text) {
  return RunnerFeed<Reader>(text).Report();
}

const TestCase* RunnerCase(const TestReport& r, std::string_view name) {
  for (const TestCase& c : r.cases)
    if (c.name == name) return &c;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------
// CTest

// Captured from ctest 3.25.1 --output-on-failure on sh commands (the "Looked in the following places"
// list shortened).
constexpr std::string_view kCtestMixed = R"(Test project /tmp/ctp/b
      Start  1: passes
 1/10 Test  #1: passes ...........................   Passed    0.00 sec
      Start  2: fails
 2/10 Test  #2: fails ............................***Failed    0.00 sec
RuntimeError: CUDA error: an illegal memory access was encountered

      Start  3: skips
 3/10 Test  #3: skips ............................***Skipped   0.00 sec
      Start  4: skipre
 4/10 Test  #4: skipre ...........................***Skipped   0.00 sec
      Start  5: slow
 5/10 Test  #5: slow .............................***Timeout   1.00 sec
start

      Start  6: segv
 6/10 Test  #6: segv .............................***Exception: SegFault  0.00 sec

      Start  7: disabled
 7/10 Test  #7: disabled .........................***Not Run (Disabled)   0.00 sec
      Start  8: missing
Could not find executable /nonexistent/prog
Looked in the following places:
/nonexistent/prog
nonexistent/Development/prog
Unable to find executable: /nonexistent/prog
 8/10 Test  #8: missing ..........................***Not Run   0.00 sec
      Start  9: errre
 9/10 Test  #9: errre ............................***Failed  Error regular expression found in output. Regex=[FATAL]  0.00 sec
FATAL thing

      Start 10: abrt
10/10 Test #10: abrt .............................Subprocess aborted***Exception:   0.00 sec


33% tests passed, 6 tests failed out of 9

Total Test time (real) =   1.02 sec

The following tests did not run:
	  3 - skips (Skipped)
	  4 - skipre (Skipped)
	  7 - disabled (Disabled)

The following tests FAILED:
	  2 - fails (Failed)
	  5 - slow (Timeout)
	  6 - segv (SEGFAULT)
	  8 - missing (Not Run)
	  9 - errre (Failed)
	 10 - abrt (Subprocess aborted)
Errors while running CTest
)";

TEST(CtestReport, EveryStatusOfARealRun) {
  TestReport r = RunnerReadAll<CtestReader>(kCtestMixed);
  EXPECT_EQ(r.runner, "ctest");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "33% tests passed, 6 tests failed out of 9");
  ASSERT_EQ(r.cases.size(), 9u);  // the DISABLED test is left out, as CTest leaves it out of "out of 9"
  EXPECT_EQ(r.cases[0].name, "passes");
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_DOUBLE_EQ(r.cases[0].seconds, 0.0);
  const TestCase* fails = RunnerCase(r, "fails");
  ASSERT_NE(fails, nullptr);
  EXPECT_EQ(fails->end, TestEnd::kFailed);
  EXPECT_FALSE(fails->assertion);
  EXPECT_EQ(fails->message, "RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(fails->detail, "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(RunnerCase(r, "skips")->end, TestEnd::kSkipped);
  EXPECT_EQ(RunnerCase(r, "skipre")->end, TestEnd::kSkipped);
  const TestCase* slow = RunnerCase(r, "slow");
  EXPECT_EQ(slow->end, TestEnd::kError);
  EXPECT_EQ(slow->message, "Timeout after 1.00 sec");
  EXPECT_EQ(slow->detail, "start\n");
  EXPECT_DOUBLE_EQ(slow->seconds, 1.0);
  EXPECT_EQ(RunnerCase(r, "segv")->end, TestEnd::kError);
  EXPECT_EQ(RunnerCase(r, "segv")->message, "Segmentation fault (SIGSEGV)");
  EXPECT_EQ(RunnerCase(r, "missing")->end, TestEnd::kError);
  EXPECT_EQ(RunnerCase(r, "missing")->message, "Unable to find executable: /nonexistent/prog");
  EXPECT_EQ(RunnerCase(r, "errre")->message, "Error regular expression found in output. Regex=[FATAL]");
  EXPECT_EQ(RunnerCase(r, "errre")->detail, "FATAL thing\n");
  EXPECT_EQ(RunnerCase(r, "abrt")->message, "Subprocess aborted (SIGABRT)");
  EXPECT_EQ(RunnerCase(r, "disabled"), nullptr);
  // The summary's "3 passed" holds the 2 skips; its 6 failures are 2 failed and 4 errors.
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.skipped, 2);
  EXPECT_EQ(r.counts.failed, 2);
  EXPECT_EQ(r.counts.errors, 4);
  EXPECT_EQ(r.counts.passed + r.counts.skipped, 3);
  EXPECT_EQ(r.counts.failed + r.counts.errors, 6);
}

TEST(CtestReport, SkippedTestsCountAsPassedInTheSummary) {
  // Captured from ctest 3.25.1: SKIP_RETURN_CODE 77, and CTest still says 100%.
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /tmp/ctp/b
    Start 1: gemm_fp16
1/3 Test #1: gemm_fp16 ........................   Passed    0.00 sec
    Start 2: gemm_fp8
2/3 Test #2: gemm_fp8 .........................***Skipped   0.00 sec
    Start 3: gemm_bf16
3/3 Test #3: gemm_bf16 ........................   Passed    0.00 sec

100% tests passed, 0 tests failed out of 3

Total Test time (real) =   0.01 sec

The following tests did not run:
	  2 - gemm_fp8 (Skipped)
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[1].name, "gemm_fp8");
  EXPECT_EQ(r.cases[1].end, TestEnd::kSkipped);
  EXPECT_EQ(r.counts.passed, 2);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.failed + r.counts.errors, 0);
  EXPECT_EQ(r.counts.total(), 3);
}

TEST(CtestReport, NewerCMakeSummaryAndManySkips) {
  // https://github.com/uxlfoundation/oneMath/pull/311 (ctest's summary with skips listed after it),
  // and CMake 4's "% tests passed out of N" when nothing failed (cmCTestTestHandler::LogTestSummary).
  TestReport r = RunnerReadAll<CtestReader>(
      "977/977 Test #977: dft/EXAMPLE/CT/complex_fwd_buffer_mklcpu ..........................   Passed    0.30 sec\n"
      "\n100% tests passed out of 977\n\nTotal Test time (real) = 260.39 sec\n");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "100% tests passed out of 977");
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].name, "dft/EXAMPLE/CT/complex_fwd_buffer_mklcpu");
  EXPECT_EQ(r.counts.passed, 977);  // the 976 tests before the excerpt are counted, not named
  EXPECT_EQ(r.counts.failed, 0);
}

TEST(CtestReport, OutputOnFailureGivesTheMessage) {
  // Captured from ctest 3.25.1 --output-on-failure -j2: a Python traceback and a C++ terminate.
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /tmp/ctp/b
    Start 1: passes
    Start 2: py_fails
1/3 Test #1: passes ...........................   Passed    0.01 sec
    Start 3: cpp_abort
2/3 Test #3: cpp_abort ........................Subprocess aborted***Exception:   0.01 sec
terminate called after throwing an instance of 'std::runtime_error'
  what():  CUTLASS: no kernel image is available

3/3 Test #2: py_fails .........................***Failed    0.22 sec
running gemm
Traceback (most recent call last):
  File "<string>", line 3, in <module>
RuntimeError: CUDA error: an illegal memory access was encountered


33% tests passed, 2 tests failed out of 3

Total Test time (real) =   0.23 sec

The following tests FAILED:
	  2 - py_fails (Failed)
	  3 - cpp_abort (Subprocess aborted)
Errors while running CTest
)");
  ASSERT_EQ(r.cases.size(), 3u);
  const TestCase* abrt = RunnerCase(r, "cpp_abort");
  EXPECT_EQ(abrt->end, TestEnd::kError);
  EXPECT_EQ(abrt->message, "Subprocess aborted (SIGABRT)");
  EXPECT_NE(abrt->detail.find("what():  CUTLASS: no kernel image is available"), std::string::npos);
  const TestCase* py = RunnerCase(r, "py_fails");
  EXPECT_EQ(py->end, TestEnd::kFailed);
  EXPECT_EQ(py->message, "RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_TRUE(py->detail.starts_with("running gemm\nTraceback (most recent call last):\n"));
  EXPECT_DOUBLE_EQ(py->seconds, 0.22);
  EXPECT_EQ(r.counts.failed + r.counts.errors, 2);
}

TEST(CtestReport, SegfaultWithItsOutput) {
  // https://github.com/mspass-team/mspass/issues/512 (ctest --rerun-failed --output-on-failure), cut
  // inside the output as the issue quotes it.
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /Users/jiaoma/gitCode/mspass/cxx/build
    Start 6: test_bundle
1/1 Test #6: test_bundle ......................***Exception: SegFault  0.07 sec
Starting test_bundle program
Input ensemble summary
net sta chan loc npts fill_value
AA ABC HHN 00 1
)");
  EXPECT_FALSE(r.complete);  // the excerpt ends inside the output
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].name, "test_bundle");
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(r.cases[0].message, "Segmentation fault (SIGSEGV)");
  EXPECT_EQ(r.cases[0].detail, "Starting test_bundle program\nInput ensemble summary\n"
                               "net sta chan loc npts fill_value\nAA ABC HHN 00 1\n");
  EXPECT_EQ(r.counts.errors, 1);
}

TEST(CtestReport, TimeoutInTheFailedList) {
  // https://github.com/awslabs/aws-c-common/issues/834
  TestReport r = RunnerReadAll<CtestReader>(R"(380/381 Test #315: ring_buffer_acquire_multi_threaded_test ..............................   Passed  175.95 sec
381/381 Test #381: promise_test_multiple_waiters ........................................***Timeout 1500.03 sec


99% tests passed, 1 tests failed out of 381

Total Test time (real) = 1685.65 sec

The following tests FAILED:
	381 - promise_test_multiple_waiters (Timeout)
Errors while running CTest
make: *** [Makefile:149: test] Error 8
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].name, "promise_test_multiple_waiters");
  EXPECT_EQ(r.cases[1].end, TestEnd::kError);
  EXPECT_EQ(r.cases[1].message, "Timeout after 1500.03 sec");
  EXPECT_EQ(r.counts.passed, 380);
  EXPECT_EQ(r.counts.errors, 1);
  EXPECT_EQ(r.counts.failed, 0);
}

TEST(CtestReport, MultiLineRegexReasonAndTheFailedListNamesLostLines) {
  // https://github.com/catchorg/Catch2/issues/1083: a required regex holding "\n" breaks the line. The
  // result lines of tests 3 and 4 are left out here, so only the FAILED list can name them.
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /home/mgorny/git/Catch/_build
    Start 1: RunTests
1/4 Test #1: RunTests .........................***Failed    0.02 sec
    Start 2: ListTests
2/4 Test #2: ListTests ........................***Failed  Required regular expression not found.Regex=[[0-9]+ test cases
]  0.02 sec
    Start 3: ListTags

0% tests passed, 4 tests failed out of 4

Total Test time (real) =   1.78 sec

The following tests FAILED:
	  1 - RunTests (Failed)
	  2 - ListTests (Failed)
	  3 - ListTags (Failed)
	  4 - ApprovalTests (Failed)
Errors while running CTest
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 4u);
  EXPECT_EQ(r.cases[1].name, "ListTests");
  EXPECT_EQ(r.cases[1].message, "Required regular expression not found.Regex=[[0-9]+ test cases ]");
  EXPECT_DOUBLE_EQ(r.cases[1].seconds, 0.02);
  EXPECT_EQ(r.cases[1].detail, "");
  // Tests 3 and 4 have no result line in this excerpt: the FAILED list names them.
  EXPECT_EQ(r.cases[2].name, "ListTags");
  EXPECT_EQ(r.cases[3].name, "ApprovalTests");
  EXPECT_EQ(r.cases[3].end, TestEnd::kFailed);
  EXPECT_EQ(r.counts.failed, 4);
  EXPECT_EQ(r.counts.total(), 4);
}

TEST(CtestReport, NotRunAndAbortFromAnIssue) {
  // https://github.com/ceres-solver/ceres-solver/issues/1011
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /usr/local/google/home/sameeragarwal/ceres-solver/cmake-build
        Start   1: cuda_memcheck_dense_qr_test
Could not find executable /usr/local/google/home/sameeragarwal/local/cuda/bin/cuda-memcheck
Looked in the following places:
/usr/local/google/home/sameeragarwal/local/cuda/bin/cuda-memcheck
Unable to find executable: /usr/local/google/home/sameeragarwal/local/cuda/bin/cuda-memcheck
  1/183 Test   #1: cuda_memcheck_dense_qr_test ....................***Not Run   0.00 sec
)");
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(r.cases[0].message,
            "Unable to find executable: /usr/local/google/home/sameeragarwal/local/cuda/bin/cuda-memcheck");
}

TEST(CtestReport, CutLogKeepsTheCasesSoFar) {
  // https://github.com/DOI-USGS/ISIS3/issues/4864 (an excerpt), cut while a test runs.
  TestReport r = RunnerReadAll<CtestReader>(R"(Test project /Users/kbecker/ISIS/Isis4Dev/Eros/MSI/Mar282022/ISIS3/build
      Start 1935: Msi2isis.Msi2isisTestGblIngestDefault
 1/13 Test #1935: Msi2isis.Msi2isisTestGblIngestDefault ..........***Exception: SegFault  0.21 sec
      Start 1936: Msi2isis.Msi2isisTestGblIngestNoTrim
 2/13 Test #1936: Msi2isis.Msi2isisTestGblIngestNoTrim ...........***Exception: SegFault  0.17 sec
      Start 1940: Msi2isis.Msi2isisTestAMissingLabelFile
 6/13 Test #1940: Msi2isis.Msi2isisTestAMissingLabelFile .........   Passed    0.17 sec
      Start 1941: Msi2isis.Msi2isisTestBInvalidInstrumentId
)");
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].name, "Msi2isis.Msi2isisTestGblIngestDefault");
  EXPECT_EQ(r.cases[0].message, "Segmentation fault (SIGSEGV)");
  EXPECT_EQ(r.cases[0].detail, "");
  EXPECT_EQ(r.cases[2].end, TestEnd::kPassed);
  EXPECT_EQ(r.counts.errors, 2);
  EXPECT_EQ(r.counts.passed, 1);
}

TEST(CtestReport, IgnoresOtherLinesAndClonesItsState) {
  CtestReader r = RunnerFeed<CtestReader>("some ***bold*** text\n[==========] 3 tests ran.\n1/2 Test #1: a ....***Failed    0.01 sec\nboom\n");
  EXPECT_TRUE(r.active());  // reading test a's output
  std::unique_ptr<TestRunnerReader> copy = r.Clone();
  copy->Observe("2/2 Test #2: b ....   Passed    0.01 sec");
  EXPECT_EQ(r.Report().cases.size(), 1u);
  EXPECT_EQ(copy->Report().cases.size(), 2u);
  EXPECT_EQ(copy->Report().cases[0].message, "boom");
  EXPECT_FALSE(r.complete());
}

// ---------------------------------------------------------------------------------------------------
// Catch2

// Captured from a Catch2 v3.7.1 program (extras/catch_amalgamated.cpp) built here.
constexpr std::string_view kCatch2V3 = R"(Randomness seeded to: 2502479148

~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
t3 is a Catch2 v3.7.1 host application.
Run with -? for options

-------------------------------------------------------------------------------
fails check
-------------------------------------------------------------------------------
t3.cpp:6
...............................................................................

t3.cpp:9: FAILED:
  CHECK( f(1) == 2 )
with expansion:
  1 == 2
with message:
  n := 3

-------------------------------------------------------------------------------
throws
-------------------------------------------------------------------------------
t3.cpp:12
...............................................................................

t3.cpp:12: FAILED:
due to unexpected exception with message:
  CUDA error: no kernel image is available

-------------------------------------------------------------------------------
throws in require
-------------------------------------------------------------------------------
t3.cpp:13
...............................................................................

t3.cpp:13: FAILED:
  REQUIRE( f([]{ throw std::runtime_error("boom"); return 1; }()) == 1 )
due to unexpected exception with message:
  boom

-------------------------------------------------------------------------------
skips
-------------------------------------------------------------------------------
t3.cpp:14
...............................................................................

t3.cpp:14: SKIPPED:
explicitly with message:
  requires sm_100

-------------------------------------------------------------------------------
skip after check
-------------------------------------------------------------------------------
t3.cpp:15
...............................................................................

t3.cpp:15: SKIPPED:
explicitly with message:
  needs two GPUs

-------------------------------------------------------------------------------
sections
  second
-------------------------------------------------------------------------------
t3.cpp:18
...............................................................................

t3.cpp:18: FAILED:
  REQUIRE_THAT( 1.0, Catch::Matchers::WithinAbs(2.0, 0.5) )
with expansion:
  1.0 is within 0.5 of 2.0

-------------------------------------------------------------------------------
explicit fail
-------------------------------------------------------------------------------
t3.cpp:20
...............................................................................

t3.cpp:20: FAILED:
explicitly with message:
  tolerance exceeded: max diff 0.5

-------------------------------------------------------------------------------
a very long test case name: that goes on and on past the console width of
eighty columns for sure
-------------------------------------------------------------------------------
t3.cpp:21
...............................................................................

t3.cpp:21: FAILED:
  CHECK( 1 == 2 )

-------------------------------------------------------------------------------
mayfail
-------------------------------------------------------------------------------
t3.cpp:22
...............................................................................

t3.cpp:22: FAILED:
  CHECK( 1 == 2 )

================================================================================
test cases: 10 | 1 passed | 6 failed | 2 skipped | 1 failed as expected
assertions: 11 | 4 passed | 6 failed | 1 failed as expected

)";

TEST(Catch2Report, FailedChecksExceptionsAndSkips) {
  TestReport r = RunnerReadAll<Catch2Reader>(kCatch2V3);
  EXPECT_EQ(r.runner, "catch2");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "test cases: 10 | 1 passed | 6 failed | 2 skipped | 1 failed as expected; "
                       "assertions: 11 | 4 passed | 6 failed | 1 failed as expected");
  ASSERT_EQ(r.cases.size(), 9u);
  const TestCase& check = r.cases[0];
  EXPECT_EQ(check.name, "fails check");
  EXPECT_EQ(check.end, TestEnd::kFailed);
  EXPECT_TRUE(check.assertion);
  EXPECT_EQ(check.message, "CHECK( f(1) == 2 ) with expansion: 1 == 2");
  EXPECT_NE(check.detail.find("n := 3"), std::string::npos);
  const TestCase* threw = RunnerCase(r, "throws");
  EXPECT_EQ(threw->end, TestEnd::kError);
  EXPECT_FALSE(threw->assertion);
  EXPECT_EQ(threw->message, "due to unexpected exception with message: CUDA error: no kernel image is available");
  EXPECT_EQ(RunnerCase(r, "throws in require")->message,
            "REQUIRE( f([]{ throw std::runtime_error(\"boom\"); return 1; }()) == 1 ) "
            "due to unexpected exception with message: boom");
  EXPECT_EQ(RunnerCase(r, "skips")->end, TestEnd::kSkipped);
  EXPECT_EQ(RunnerCase(r, "skips")->message, "requires sm_100");
  EXPECT_EQ(RunnerCase(r, "skip after check")->message, "needs two GPUs");
  const TestCase* sections = RunnerCase(r, "sections");  // the section is not part of the test case's name
  ASSERT_NE(sections, nullptr);
  EXPECT_EQ(sections->message,
            "REQUIRE_THAT( 1.0, Catch::Matchers::WithinAbs(2.0, 0.5) ) with expansion: 1.0 is within 0.5 of 2.0");
  EXPECT_EQ(RunnerCase(r, "explicit fail")->message, "tolerance exceeded: max diff 0.5");
  EXPECT_TRUE(RunnerCase(r, "explicit fail")->assertion);
  const TestCase* wrapped =
      RunnerCase(r, "a very long test case name: that goes on and on past the console width of eighty columns for sure");
  ASSERT_NE(wrapped, nullptr);
  EXPECT_EQ(wrapped->message, "CHECK( 1 == 2 )");
  // [!shouldfail] prints its failure like any other: named failed, counted "failed as expected".
  EXPECT_EQ(RunnerCase(r, "mayfail")->end, TestEnd::kFailed);
  // The totals' 6 failures: the two exceptions are errors, the other 4 failed checks.
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.failed, 4);
  EXPECT_EQ(r.counts.errors, 2);
  EXPECT_EQ(r.counts.skipped, 2);
  EXPECT_EQ(r.counts.xfailed, 1);
  EXPECT_EQ(r.counts.total(), 10);
}

TEST(Catch2Report, V2FatalSignalAndRepeatedFailures) {
  // Captured from a Catch2 v2.13.10 program (single_include/catch2/catch.hpp) built here.
  TestReport r = RunnerReadAll<Catch2Reader>(R"(
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
t2 is a Catch v2.13.10 host application.
Run with -? for options

-------------------------------------------------------------------------------
fails check
-------------------------------------------------------------------------------
t2.cpp:7
...............................................................................

t2.cpp:7: FAILED:
  CHECK( f(1) == 2 )
with expansion:
  1 == 2

t2.cpp:7: FAILED:
  REQUIRE( f(2) == 3 )
with expansion:
  2 == 3

-------------------------------------------------------------------------------
segv
-------------------------------------------------------------------------------
t2.cpp:9
...............................................................................

t2.cpp:9: FAILED:
due to a fatal error condition:
  SIGSEGV - Segmentation violation signal

===============================================================================
test cases: 3 | 1 passed | 2 failed
assertions: 5 | 1 passed | 4 failed

)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].message, "CHECK( f(1) == 2 ) with expansion: 1 == 2");  // the first failure
  EXPECT_NE(r.cases[0].detail.find("REQUIRE( f(2) == 3 )"), std::string::npos);
  EXPECT_EQ(r.cases[1].end, TestEnd::kError);
  EXPECT_EQ(r.cases[1].message, "due to a fatal error condition: SIGSEGV - Segmentation violation signal");
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 1);
}

TEST(Catch2Report, OnlySkippedAndAllPassed) {
  // Captured from Catch2 v3.7.1: one SKIP, then a second program whose tests all passed.
  TestReport r = RunnerReadAll<Catch2Reader>(R"(Randomness seeded to: 965358865

~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
t3b is a Catch2 v3.7.1 host application.
Run with -? for options

-------------------------------------------------------------------------------
fp8 gemm
-------------------------------------------------------------------------------
t3b.cpp:3
...............................................................................

t3b.cpp:3: SKIPPED:
explicitly with message:
  requires sm_100

===============================================================================
test cases: 3 | 2 passed | 1 skipped
assertions: 2 | 2 passed

Randomness seeded to: 2052469485
===============================================================================
All tests passed (2 assertions in 2 test cases)

)");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "All tests passed (2 assertions in 2 test cases)");
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].name, "fp8 gemm");
  EXPECT_EQ(r.cases[0].end, TestEnd::kSkipped);
  EXPECT_EQ(r.counts.passed, 4);
  EXPECT_EQ(r.counts.skipped, 1);
}

TEST(Catch2Report, TotalsFromAnIssue) {
  // https://github.com/vbpf/prevail/pull/1192 (Catch2 v3.15.2's totals, columns padded).
  TestReport r = RunnerReadAll<Catch2Reader>(
      "test cases:   1811 |   1583 passed | 1 skipped | 227 failed as expected\n"
      "assertions: 417410 | 417183 passed | 227 failed as expected\n");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.counts.passed, 1583);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.xfailed, 227);
  EXPECT_EQ(r.counts.failed, 0);
  EXPECT_EQ(r.counts.total(), 1811);
}

TEST(Catch2Report, CutLogKeepsTheOpenTestCase) {
  std::string_view text = kCatch2V3.substr(0, kCatch2V3.find("-------------------------------------------------------------------------------\nskips"));
  Catch2Reader reader = RunnerFeed<Catch2Reader>(text);
  EXPECT_TRUE(reader.active());
  TestReport r = reader.Report();
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 3u);  // "throws in require" was still the open test case
  EXPECT_EQ(r.cases[2].end, TestEnd::kError);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 2);
}

TEST(Catch2Report, IgnoresOutputOutsideARun) {
  TestReport r = RunnerReadAll<Catch2Reader>("x.cpp:3: FAILED:\n  CHECK( a )\n\n[doctest] test cases: 2 | 1 passed | 1 failed |\n");
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.cases.empty());
}

// ---------------------------------------------------------------------------------------------------
// doctest

// Captured from a doctest 2.4.11 program (doctest/doctest.h) built here; the last test raised SIGSEGV.
constexpr std::string_view kDoctest = R"([doctest] doctest version is "2.4.11"
[doctest] run with "--help" for options
===============================================================================
t.cpp:7:
TEST CASE:  fails check

t.cpp:7: ERROR: CHECK( f(1) == 2 ) is NOT correct!
  values: CHECK( 1 == 2 )
  logged: n = 3

t.cpp:7: FATAL ERROR: REQUIRE( f(2) == 3 ) is NOT correct!
  values: REQUIRE( 2 == 3 )
  logged: n = 3

===============================================================================
t.cpp:8:
TEST CASE:  throws

t.cpp:8: ERROR: test case THREW exception: CUDA error: no kernel image is available

===============================================================================
t.cpp:10:
TEST CASE:  subcases
  second

t.cpp:10: ERROR: CHECK_EQ( f(1), 5 ) is NOT correct!
  values: CHECK_EQ( 1, 5 )

===============================================================================
t.cpp:11:
TEST CASE:  fail msg

t.cpp:11: ERROR: tolerance exceeded

===============================================================================
t.cpp:12:
TEST CASE:  segv

t.cpp:12: FATAL ERROR: test case CRASHED: SIGSEGV - Segmentation violation signal

===============================================================================
[doctest] test cases: 6 | 1 passed | 5 failed | 1 skipped
[doctest] assertions: 6 | 2 passed | 4 failed |
[doctest] Status: FAILURE!
)";

TEST(DoctestReport, FailedChecksExceptionsAndCrashes) {
  TestReport r = RunnerReadAll<DoctestReader>(kDoctest);
  EXPECT_EQ(r.runner, "doctest");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "test cases: 6 | 1 passed | 5 failed | 1 skipped");
  ASSERT_EQ(r.cases.size(), 5u);
  const TestCase& check = r.cases[0];
  EXPECT_EQ(check.name, "fails check");
  EXPECT_EQ(check.end, TestEnd::kFailed);
  EXPECT_TRUE(check.assertion);
  EXPECT_EQ(check.message, "CHECK( f(1) == 2 ) is NOT correct! values: CHECK( 1 == 2 )");
  EXPECT_NE(check.detail.find("REQUIRE( f(2) == 3 )"), std::string::npos);  // the later failure is detail
  EXPECT_NE(check.detail.find("logged: n = 3"), std::string::npos);
  EXPECT_EQ(check.detail.find("TEST CASE"), std::string::npos);
  EXPECT_EQ(r.cases[1].name, "throws");
  EXPECT_EQ(r.cases[1].end, TestEnd::kError);
  EXPECT_EQ(r.cases[1].message, "test case THREW exception: CUDA error: no kernel image is available");
  EXPECT_EQ(r.cases[2].name, "subcases");
  EXPECT_EQ(r.cases[2].message, "CHECK_EQ( f(1), 5 ) is NOT correct! values: CHECK_EQ( 1, 5 )");
  EXPECT_EQ(r.cases[3].message, "tolerance exceeded");
  EXPECT_TRUE(r.cases[3].assertion);
  EXPECT_EQ(r.cases[4].end, TestEnd::kError);
  EXPECT_EQ(r.cases[4].message, "test case CRASHED: SIGSEGV - Segmentation violation signal");
  // doctest's "1 skipped" is the skip-decorated test that did not pass the filters: not counted.
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.failed, 3);
  EXPECT_EQ(r.counts.errors, 2);
  EXPECT_EQ(r.counts.skipped, 0);
  EXPECT_EQ(r.counts.total(), 6);
}

TEST(DoctestReport, TimeoutShouldFailAndExpectedFailures) {
  // Captured from doctest 2.4.11: doctest::timeout, doctest::should_fail, a CHECK that threw.
  TestReport r = RunnerReadAll<DoctestReader>(R"([doctest] doctest version is "2.4.11"
[doctest] run with "--help" for options
===============================================================================
t2.cpp:7:
TEST SUITE: gemm
TEST CASE:  slow

Test case exceeded time limit of 0.010000!
===============================================================================
t2.cpp:8:
TEST SUITE: gemm
TEST CASE:  should fail but passes

Should have failed but didn't! Marking it as failed!
===============================================================================
t2.cpp:9:
TEST SUITE: gemm
TEST CASE:  known bug

t2.cpp:9: ERROR: CHECK( 1 == 2 ) is NOT correct!
  values: CHECK( 1 == 2 )

Failed as expected so marking it as not failed
===============================================================================
t2.cpp:10:
TEST SUITE: gemm
TEST CASE:  check throws

t2.cpp:10: ERROR: CHECK( f(-1) == 1 ) THREW exception: "negative"

===============================================================================
[doctest] test cases: 5 | 2 passed | 3 failed | 0 skipped
[doctest] assertions: 5 | 3 passed | 2 failed |
[doctest] Status: FAILURE!
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 4u);
  EXPECT_EQ(r.cases[0].name, "slow");
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(r.cases[0].message, "Timeout: Test case exceeded time limit of 0.010000");
  EXPECT_EQ(r.cases[1].end, TestEnd::kFailed);
  EXPECT_FALSE(r.cases[1].assertion);
  EXPECT_EQ(r.cases[1].message, "Should have failed but didn't! Marking it as failed!");
  EXPECT_EQ(r.cases[2].name, "known bug");
  EXPECT_EQ(r.cases[2].end, TestEnd::kXfailed);
  EXPECT_EQ(r.cases[3].end, TestEnd::kError);
  EXPECT_EQ(r.cases[3].message, "CHECK( f(-1) == 1 ) THREW exception: \"negative\"");
  EXPECT_EQ(r.counts.passed, 1);   // doctest's "2 passed" holds the expected failure
  EXPECT_EQ(r.counts.xfailed, 1);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 2);
  EXPECT_EQ(r.counts.total(), 5);
}

TEST(DoctestReport, MsvcLocationsAndAllPassed) {
  // doctest's non-GNU file_line_to_stream form "file(line):", and a run where nothing failed.
  TestReport r = RunnerReadAll<DoctestReader>(R"(===============================================================================
C:\src\gemm_test.cpp(12):
TEST CASE:  fp8 gemm

C:\src\gemm_test.cpp(14): ERROR: CHECK( max_diff < 1e-2 ) is NOT correct!
  values: CHECK( 0.5 < 0.01 )

===============================================================================
[doctest] test cases: 2 | 1 passed | 1 failed | 0 skipped
[doctest] assertions: 4 | 3 passed | 1 failed |
[doctest] Status: FAILURE!
[doctest] doctest version is "2.4.11"
[doctest] run with "--help" for options
===============================================================================
[doctest] test cases: 3 | 3 passed | 0 failed | 0 skipped
[doctest] assertions: 9 | 9 passed | 0 failed |
[doctest] Status: SUCCESS!
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].message, "CHECK( max_diff < 1e-2 ) is NOT correct! values: CHECK( 0.5 < 0.01 )");
  EXPECT_EQ(r.counts.passed, 4);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.summary, "test cases: 3 | 3 passed | 0 failed | 0 skipped");
}

TEST(DoctestReport, CutLogKeepsTheOpenTestCase) {
  std::string_view text = kDoctest.substr(0, kDoctest.find("TEST CASE:  subcases"));
  DoctestReader reader = RunnerFeed<DoctestReader>(text);
  EXPECT_TRUE(reader.active());
  TestReport r = reader.Report();
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].name, "throws");
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 1);
}

// ---------------------------------------------------------------------------------------------------
// Rust libtest

// Captured from `cargo test` (rustc 1.95, RUST_BACKTRACE=0) on a crate built here.
constexpr std::string_view kRust = R"(     Running unittests src/lib.rs (target/debug/deps/k-678ef1a18d084846)

running 14 tests
test tests::assert_msg_fails ... FAILED
test tests::assert_fails ... FAILED
test tests::eq_fails ... FAILED
test tests::eq_msg_fails ... FAILED
test tests::explicit_panic ... FAILED
test tests::ignored ... ignored
test tests::ignored_reason ... ignored, needs a GPU
test tests::ne_fails ... FAILED
test tests::multiline ... FAILED
test tests::passes ... ok
test tests::should_panic_none - should panic ... FAILED
test tests::should_panic_ok - should panic ... ok
test tests::unwrap_fails ... FAILED
test tests::should_panic_wrong - should panic ... FAILED

failures:

---- tests::assert_msg_fails stdout ----

thread 'tests::assert_msg_fails' (17854) panicked at src/lib.rs:10:37:
tolerance exceeded: 0.5

---- tests::assert_fails stdout ----

thread 'tests::assert_fails' (17853) panicked at src/lib.rs:9:33:
assertion failed: add(1, 1) == 3
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- tests::eq_fails stdout ----

thread 'tests::eq_fails' (17855) panicked at src/lib.rs:6:29:
assertion `left == right` failed
  left: 2
 right: 3

---- tests::eq_msg_fails stdout ----

thread 'tests::eq_msg_fails' (17856) panicked at src/lib.rs:7:33:
assertion `left == right` failed: sum of 1 and 1
  left: 2
 right: 3

---- tests::explicit_panic stdout ----

thread 'tests::explicit_panic' (17857) panicked at src/lib.rs:12:35:
requires sm_100

---- tests::ne_fails stdout ----

thread 'tests::ne_fails' (17859) panicked at src/lib.rs:8:29:
assertion `left != right` failed
  left: 2
 right: 2

---- tests::multiline stdout ----
some output
to stderr

thread 'tests::multiline' (17858) panicked at src/lib.rs:18:79:
assertion `left == right` failed
  left: "a\nb"
 right: "a\nc"

---- tests::should_panic_none stdout ----
note: test did not panic as expected at src/lib.rs:17:32
---- tests::unwrap_fails stdout ----

thread 'tests::unwrap_fails' (17864) panicked at src/lib.rs:11:107:
called `Result::unwrap()` on an `Err` value: "CUDA error: no kernel image"

---- tests::should_panic_wrong stdout ----

thread 'tests::should_panic_wrong' (17863) panicked at src/lib.rs:16:73:
bar
note: panic did not contain expected string
      panic message: "bar"
 expected substring: "foo"

failures:
    tests::assert_fails
    tests::assert_msg_fails
    tests::eq_fails
    tests::eq_msg_fails
    tests::explicit_panic
    tests::multiline
    tests::ne_fails
    tests::should_panic_none
    tests::should_panic_wrong
    tests::unwrap_fails

test result: FAILED. 2 passed; 10 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
)";

TEST(RustTestReport, AssertionsPanicsAndIgnored) {
  TestReport r = RunnerReadAll<RustTestReader>(kRust);
  EXPECT_EQ(r.runner, "rust");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary,
            "test result: FAILED. 2 passed; 10 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.00s");
  ASSERT_EQ(r.cases.size(), 14u);
  const TestCase* eq = RunnerCase(r, "tests::eq_fails");
  ASSERT_NE(eq, nullptr);
  EXPECT_EQ(eq->end, TestEnd::kFailed);
  EXPECT_TRUE(eq->assertion);
  EXPECT_EQ(eq->message, "assertion `left == right` failed (left: 2, right: 3)");
  EXPECT_TRUE(eq->detail.starts_with("thread 'tests::eq_fails' (17855) panicked at src/lib.rs:6:29:\n"));
  EXPECT_EQ(RunnerCase(r, "tests::eq_msg_fails")->message, "assertion `left == right` failed: sum of 1 and 1 (left: 2, right: 3)");
  EXPECT_EQ(RunnerCase(r, "tests::ne_fails")->message, "assertion `left != right` failed (left: 2, right: 2)");
  EXPECT_EQ(RunnerCase(r, "tests::assert_fails")->message, "assertion failed: add(1, 1) == 3");
  EXPECT_TRUE(RunnerCase(r, "tests::assert_fails")->assertion);
  EXPECT_EQ(RunnerCase(r, "tests::multiline")->message, "assertion `left == right` failed (left: \"a\\nb\", right: \"a\\nc\")");
  // assert!(cond, "msg") prints only its message: it reads as any other panic.
  EXPECT_EQ(RunnerCase(r, "tests::assert_msg_fails")->message, "tolerance exceeded: 0.5");
  EXPECT_FALSE(RunnerCase(r, "tests::assert_msg_fails")->assertion);
  const TestCase* unwrap = RunnerCase(r, "tests::unwrap_fails");
  EXPECT_EQ(unwrap->end, TestEnd::kFailed);
  EXPECT_FALSE(unwrap->assertion);
  EXPECT_EQ(unwrap->message, "called `Result::unwrap()` on an `Err` value: \"CUDA error: no kernel image\"");
  EXPECT_EQ(RunnerCase(r, "tests::explicit_panic")->message, "requires sm_100");
  EXPECT_EQ(RunnerCase(r, "tests::should_panic_none")->message, "test did not panic as expected at src/lib.rs:17:32");
  EXPECT_EQ(RunnerCase(r, "tests::should_panic_wrong")->message, "bar");
  EXPECT_EQ(RunnerCase(r, "tests::should_panic_ok")->end, TestEnd::kPassed);
  EXPECT_EQ(RunnerCase(r, "tests::ignored")->end, TestEnd::kSkipped);
  EXPECT_EQ(RunnerCase(r, "tests::ignored")->message, "");
  EXPECT_EQ(RunnerCase(r, "tests::ignored_reason")->message, "needs a GPU");
  EXPECT_EQ(r.counts.passed, 2);
  EXPECT_EQ(r.counts.failed, 10);
  EXPECT_EQ(r.counts.skipped, 2);
  EXPECT_EQ(r.counts.total(), 14);
}

TEST(RustTestReport, BacktraceAndOldPanicFormats) {
  // https://github.com/MaterializeInc/materialize/issues/26551 (a backtrace after the operands) and
  // https://github.com/mkhan45/CalcuLaTeX/issues/21 (Rust before 1.73: the message inside quotes),
  // framed here as one run of two tests.
  TestReport r = RunnerReadAll<RustTestReader>(R"(
running 2 tests
test test_storage_usage_collection_interval ... FAILED
test tests::test_basic ... FAILED

failures:

---- test_storage_usage_collection_interval stdout ----
thread 'test_storage_usage_collection_interval' panicked at src/environmentd/tests/server.rs:1228:5:
assertion `left == right` failed
  left: 2929
 right: 0
stack backtrace:
   0: rust_begin_unwind
             at /rustc/aedd173a2c086e558c2b66d3743b344f977621a7/library/std/src/panicking.rs:647:5
   1: core::panicking::panic_fmt

---- tests::test_basic stdout ----
thread 'tests::test_basic' panicked at 'assertion failed: `(left == right)`
  left: `"9000 g"`,
 right: `"5004 g"`', src/main.rs:57:9
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    test_storage_usage_collection_interval
    tests::test_basic

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.02s
)");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].message, "assertion `left == right` failed (left: 2929, right: 0)");
  EXPECT_TRUE(r.cases[0].assertion);
  EXPECT_NE(r.cases[0].detail.find("stack backtrace:"), std::string::npos);
  EXPECT_EQ(r.cases[1].message, "assertion failed: `(left == right)` (left: `\"9000 g\"`, right: `\"5004 g\"`)");
  EXPECT_TRUE(r.cases[1].assertion);
  EXPECT_EQ(r.counts.failed, 2);
}

TEST(RustTestReport, CrashWhileOneTestRuns) {
  // Captured from `cargo test --test crash -- --test-threads=1`: the binary died of SIGSEGV, so no
  // summary; cargo's error landed on the test's own line.
  TestReport r = RunnerReadAll<RustTestReader>(R"(    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.59s
     Running tests/crash.rs (target/debug/deps/crash-1824ef7bdb1fdf2d)

running 3 tests
test first ... ok
test segv ... error: test failed, to rerun pass `--test crash`

Caused by:
  process didn't exit successfully: `/tmp/rt/k/target/debug/deps/crash-1824ef7bdb1fdf2d --test-threads=1` (signal: 11, SIGSEGV: invalid memory reference)
)");
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[1].name, "segv");
  EXPECT_EQ(r.cases[1].end, TestEnd::kError);
  EXPECT_NE(r.cases[1].message.find("SIGSEGV: invalid memory reference"), std::string::npos);
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.errors, 1);
}

TEST(RustTestReport, CutLogAndSecondBinary) {
  // The first binary finished; the second was cut while its failures were being printed.
  std::string text = "running 1 test\ntest add ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; "
                     "0 measured; 0 filtered out; finished in 0.00s\n\n";
  text += std::string(kRust.substr(0, kRust.find("---- tests::ne_fails stdout ----")));
  RustTestReader reader = RunnerFeed<RustTestReader>(text);
  EXPECT_TRUE(reader.active());  // inside a failure's block
  TestReport r = reader.Report();
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 15u);
  EXPECT_EQ(RunnerCase(r, "tests::explicit_panic")->message, "requires sm_100");
  EXPECT_EQ(RunnerCase(r, "tests::multiline")->message, "");  // its block was never printed
  EXPECT_EQ(r.counts.passed, 3);
  EXPECT_EQ(r.counts.failed, 10);
  EXPECT_EQ(r.counts.skipped, 2);
}

// ---------------------------------------------------------------------------------------------------
// go test

TEST(GoTestReport, VerboseRunWithFailuresSkipsAndPasses) {
  // -v as Go 1.20+ prints it (src/testing/testing.go: the log streamed under "=== RUN", the result
  // after; subtests' results flushed indented under their parent's).
  TestReport r = RunnerReadAll<GoTestReader>(R"(=== RUN   TestGemm
=== RUN   TestGemm/fp16
=== RUN   TestGemm/fp8
    gemm_test.go:31: max abs diff 0.5 > tolerance 0.01: got 1.5, want 1
--- FAIL: TestGemm (0.02s)
    --- PASS: TestGemm/fp16 (0.01s)
    --- FAIL: TestGemm/fp8 (0.01s)
=== RUN   TestBlackwell
    gemm_test.go:44: requires sm_100, have sm_90
--- SKIP: TestBlackwell (0.00s)
=== RUN   TestCopy
--- PASS: TestCopy (0.00s)
FAIL
exit status 1
FAIL	example.com/kernels	0.031s
)");
  EXPECT_EQ(r.runner, "go");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "FAIL\texample.com/kernels\t0.031s");
  ASSERT_EQ(r.cases.size(), 5u);
  EXPECT_EQ(r.cases[0].name, "TestGemm");
  EXPECT_EQ(r.cases[0].end, TestEnd::kFailed);
  EXPECT_DOUBLE_EQ(r.cases[0].seconds, 0.02);
  const TestCase* fp8 = RunnerCase(r, "TestGemm/fp8");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->end, TestEnd::kFailed);
  EXPECT_TRUE(fp8->assertion);
  EXPECT_EQ(fp8->message, "max abs diff 0.5 > tolerance 0.01: got 1.5, want 1");
  EXPECT_EQ(fp8->detail, "    gemm_test.go:31: max abs diff 0.5 > tolerance 0.01: got 1.5, want 1\n");
  EXPECT_EQ(RunnerCase(r, "TestGemm/fp16")->end, TestEnd::kPassed);
  EXPECT_EQ(RunnerCase(r, "TestBlackwell")->end, TestEnd::kSkipped);
  EXPECT_EQ(RunnerCase(r, "TestBlackwell")->message, "requires sm_100, have sm_90");
  EXPECT_EQ(r.counts.passed, 2);
  EXPECT_EQ(r.counts.failed, 2);
  EXPECT_EQ(r.counts.skipped, 1);
}

TEST(GoTestReport, LogAfterTheResultWithoutVerbose) {
  // https://github.com/fatih/vim-go/issues/1797 (tabs restored in the package line, which the
  // issue's rendering turned into spaces) and https://github.com/mitranim/gow/issues/28.
  TestReport r = RunnerReadAll<GoTestReader>(
      "--- FAIL: TestTest (0.00s)\n"
      "    --- FAIL: TestTest/Input_good. (0.00s)\n"
      "        test_test.go:16: Wrong\n"
      "FAIL\n"
      "FAIL\tcommand-line-arguments\t0.001s\n"
      "ok  \tgowtest\t0.167s\n"
      "--- FAIL: TestSum (0.00s)\n"
      "    main_test.go:9:\n"
      "FAIL\n"
      "FAIL\tgowtest\t0.568s\n"
      "FAIL\n");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 4u);
  EXPECT_EQ(r.cases[1].name, "TestTest/Input_good.");
  EXPECT_EQ(r.cases[1].message, "Wrong");
  EXPECT_EQ(r.cases[0].message, "");  // the parent failed because its subtest did
  EXPECT_EQ(r.cases[2].name, "gowtest");  // a package that passed without -v names no test
  EXPECT_EQ(r.cases[2].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[3].name, "TestSum");
  EXPECT_EQ(r.cases[3].message, "main_test.go:9:");  // t.Error() with no text: the location is all
  EXPECT_EQ(r.summary, "FAIL\tgowtest\t0.568s");
  EXPECT_EQ(r.counts.failed, 3);
  EXPECT_EQ(r.counts.passed, 1);
}

TEST(GoTestReport, PackagesThatNameNoTest) {
  // The go command's package lines (cmd/go: "ok  \t", "FAIL\t", "[no tests to run]", "[build failed]").
  TestReport r = RunnerReadAll<GoTestReader>(
      "ok  \texample.com/kernels/gemm\t0.412s\n"
      "ok  \texample.com/kernels/attn\t(cached)\n"
      "ok  \texample.com/kernels/norm\t0.003s [no tests to run]\n"
      "FAIL\texample.com/kernels/fp8 [build failed]\n");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].name, "example.com/kernels/gemm");
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[1].name, "example.com/kernels/attn");
  EXPECT_EQ(r.cases[2].name, "example.com/kernels/fp8");
  EXPECT_EQ(r.cases[2].end, TestEnd::kError);
  EXPECT_EQ(r.cases[2].message, "FAIL\texample.com/kernels/fp8 [build failed]");
  EXPECT_EQ(r.counts.passed, 2);
  EXPECT_EQ(r.counts.errors, 1);
}

TEST(GoTestReport, PanicInATestIsAnError) {
  // Go 1.14+: tRunner flushes the test's "--- FAIL" before re-panicking (testing.go doPanic); the
  // panic text as in https://github.com/golang/go/issues/32121.
  TestReport r = RunnerReadAll<GoTestReader>(R"(=== RUN   Test
=== RUN   Test/0
--- FAIL: Test (0.00s)
    --- FAIL: Test/0 (0.00s)
panic: runtime error: integer divide by zero [recovered]
	panic: runtime error: integer divide by zero

goroutine 8 [running]:
testing.tRunner.func1(0xc0000ac400)
	/usr/lib/google-golang/src/testing/testing.go:830 +0x388
exit status 2
FAIL	_/usr/local/google/home/dneil/src/testpanic	0.018s
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].name, "Test/0");
  EXPECT_EQ(r.cases[1].end, TestEnd::kError);
  EXPECT_FALSE(r.cases[1].assertion);
  EXPECT_EQ(r.cases[1].message, "panic: runtime error: integer divide by zero");
  EXPECT_NE(r.cases[1].detail.find("goroutine 8 [running]:"), std::string::npos);
  EXPECT_EQ(r.cases[0].end, TestEnd::kFailed);
  EXPECT_EQ(r.counts.errors, 1);
  EXPECT_EQ(r.counts.failed, 1);
}

TEST(GoTestReport, TimeoutNamesTheRunningTests) {
  // https://github.com/ipfs/gateway-conformance/issues/46 (Go 1.20+ lists the tests still running).
  TestReport r = RunnerReadAll<GoTestReader>(
      "=== NAME  TestGatewayTar\n"
      "=== RUN   TestGatewayTar/GET_TAR_has_expected_root_directory\n"
      "panic: test timed out after 10m0s\n"
      "running tests:\n"
      "\tTestGatewayTar (9m52s)\n"
      "\tTestGatewayTar/GET_TAR_has_expected_root_directory (9m52s)\n"
      "\n"
      "goroutine 1028 [running]:\n"
      "testing.(*M).startAlarm.func1()\n"
      "\t/usr/local/go/src/testing/testing.go:2241 +0x3c5\n");
  EXPECT_FALSE(r.complete);  // the excerpt ends in the goroutine dump
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].name, "TestGatewayTar");
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(r.cases[0].message, "Timeout: test timed out after 10m0s");
  EXPECT_EQ(r.cases[1].message, "Timeout: test timed out after 10m0s");
  EXPECT_NE(r.cases[0].detail.find("startAlarm"), std::string::npos);
  EXPECT_EQ(r.counts.errors, 2);
}

TEST(GoTestReport, OldTimeoutWithoutAList) {
  // https://github.com/bosnet/sebak/issues/808 (Go 1.11: no "running tests:" list).
  TestReport r = RunnerReadAll<GoTestReader>(
      "=== RUN   TestSubscribe\n"
      "coverage: 43.5% of statements\n"
      "panic: test timed out after 8m0s\n"
      "\n"
      "goroutine 143 [running]:\n"
      "testing.(*M).startAlarm.func1()\n"
      "\t/usr/local/go/src/testing/testing.go:1296 +0x13a\n"
      "FAIL\tboscoin.io/sebak/lib/node/runner\t480.123s\n");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].name, "TestSubscribe");
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(r.cases[0].message, "Timeout: test timed out after 8m0s");
}

TEST(GoTestReport, CutLogKeepsWhatWasReported) {
  // https://github.com/jstemmer/go-junit-report/issues/38, cut before the package result.
  GoTestReader reader = RunnerFeed<GoTestReader>(R"(=== RUN   TestFUpload
=== RUN   TestFUpload/POSTs_with_filename_body_result_in_200
--- PASS: TestFUpload (0.00s)
    --- PASS: TestFUpload/POSTs_with_filename_body_result_in_200 (0.00s)
=== RUN   TestFDownload
)");
  EXPECT_TRUE(reader.active());
  TestReport r = reader.Report();
  EXPECT_FALSE(r.complete);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.counts.passed, 2);
}

// ---------------------------------------------------------------------------------------------------
// Python unittest

// Captured from `python3.11 -m unittest -v` on a module written here (a setUpClass error included).
constexpr std::string_view kUnittestV311 = R"(test_close (test_k.Gemm.test_close) ... FAIL
test_error (test_k.Gemm.test_error) ... ERROR
test_fail (test_k.Gemm.test_fail) ... FAIL
test_pass (test_k.Gemm.test_pass) ... ok
test_skip (test_k.Gemm.test_skip) ... skipped 'requires sm_100'
test_sub (test_k.Gemm.test_sub) ... 
  test_sub (test_k.Gemm.test_sub) (i=1) ... FAIL
test_xfail (test_k.Gemm.test_xfail) ... expected failure
test_xpass (test_k.Gemm.test_xpass) ... unexpected success
ERROR

======================================================================
ERROR: test_error (test_k.Gemm.test_error)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 6, in test_error
    def test_error(self): raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: CUDA error: no kernel image is available for execution on the device

======================================================================
ERROR: setUpClass (test_k.Setup)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 19, in setUpClass
    def setUpClass(cls): raise RuntimeError("no GPU")
                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: no GPU

======================================================================
FAIL: test_close (test_k.Gemm.test_close)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 5, in test_close
    def test_close(self): self.assertAlmostEqual(1.0, 1.5, places=3, msg="max diff")
                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError: 1.0 != 1.5 within 3 places (0.5 difference) : max diff

======================================================================
FAIL: test_fail (test_k.Gemm.test_fail)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 4, in test_fail
    def test_fail(self): self.assertEqual(1, 2)
                         ^^^^^^^^^^^^^^^^^^^^^^
AssertionError: 1 != 2

======================================================================
FAIL: test_sub (test_k.Gemm.test_sub) (i=1)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 16, in test_sub
    self.assertEqual(i, 0)
AssertionError: 1 != 0

======================================================================
UNEXPECTED SUCCESS: test_xpass (test_k.Gemm.test_xpass)
----------------------------------------------------------------------
Ran 8 tests in 0.001s

FAILED (failures=3, errors=2, skipped=1, expected failures=1, unexpected successes=1)
)";

TEST(UnittestReport, VerboseRunWithEveryOutcome) {
  TestReport r = RunnerReadAll<UnittestReader>(kUnittestV311);
  EXPECT_EQ(r.runner, "unittest");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary, "Ran 8 tests in 0.001s, FAILED (failures=3, errors=2, skipped=1, expected failures=1, "
                       "unexpected successes=1)");
  const TestCase* fail = RunnerCase(r, "test_k.Gemm.test_fail");
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->end, TestEnd::kFailed);
  EXPECT_TRUE(fail->assertion);
  EXPECT_EQ(fail->message, "AssertionError: 1 != 2");
  EXPECT_TRUE(fail->detail.starts_with("Traceback (most recent call last):\n"));
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_close")->message,
            "AssertionError: 1.0 != 1.5 within 3 places (0.5 difference) : max diff");
  const TestCase* error = RunnerCase(r, "test_k.Gemm.test_error");
  EXPECT_EQ(error->end, TestEnd::kError);
  EXPECT_FALSE(error->assertion);
  EXPECT_EQ(error->message, "RuntimeError: CUDA error: no kernel image is available for execution on the device");
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_skip")->end, TestEnd::kSkipped);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_skip")->message, "requires sm_100");
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_sub (i=1)")->message, "AssertionError: 1 != 0");
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_xfail")->end, TestEnd::kXfailed);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_xpass")->end, TestEnd::kFailed);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_xpass")->message, "unexpected success");
  const TestCase* setup = RunnerCase(r, "test_k.Setup.setUpClass");  // named only by its ERROR block
  ASSERT_NE(setup, nullptr);
  EXPECT_EQ(setup->end, TestEnd::kError);
  EXPECT_EQ(setup->message, "RuntimeError: no GPU");
  EXPECT_EQ(r.cases.size(), 9u);
  // The closing line's counts; unexpected successes are among the failures.
  EXPECT_EQ(r.counts.failed, 4);
  EXPECT_EQ(r.counts.errors, 2);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.xfailed, 1);
  EXPECT_EQ(r.counts.passed, 1);
}

TEST(UnittestReport, OldIdsAndSubtestsSharingALine) {
  // Captured from python3.8: "test_x (mod.Class)", and a subtest-failed test with no result of its own.
  TestReport r = RunnerReadAll<UnittestReader>(R"(test_close (test_k.Gemm) ... FAIL
test_error (test_k.Gemm) ... ERROR
test_fail (test_k.Gemm) ... FAIL
test_pass (test_k.Gemm) ... ok
test_skip (test_k.Gemm) ... skipped 'requires sm_100'
test_sub (test_k.Gemm) ... test_xfail (test_k.Gemm) ... expected failure
test_xpass (test_k.Gemm) ... unexpected success
ERROR

======================================================================
ERROR: test_error (test_k.Gemm)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 6, in test_error
    def test_error(self): raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
RuntimeError: CUDA error: no kernel image is available for execution on the device

======================================================================
ERROR: setUpClass (test_k.Setup)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 19, in setUpClass
    def setUpClass(cls): raise RuntimeError("no GPU")
RuntimeError: no GPU

======================================================================
FAIL: test_close (test_k.Gemm)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 5, in test_close
    def test_close(self): self.assertAlmostEqual(1.0, 1.5, places=3, msg="max diff")
AssertionError: 1.0 != 1.5 within 3 places (0.5 difference) : max diff

======================================================================
FAIL: test_fail (test_k.Gemm)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 4, in test_fail
    def test_fail(self): self.assertEqual(1, 2)
AssertionError: 1 != 2

======================================================================
FAIL: test_sub (test_k.Gemm) (i=1)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 16, in test_sub
    self.assertEqual(i, 0)
AssertionError: 1 != 0

----------------------------------------------------------------------
Ran 8 tests in 0.001s

FAILED (failures=3, errors=2, skipped=1, expected failures=1, unexpected successes=1)
)");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_fail")->message, "AssertionError: 1 != 2");
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_xfail")->end, TestEnd::kXfailed);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_sub (i=1)")->end, TestEnd::kFailed);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_sub"), nullptr);
  EXPECT_EQ(r.counts.failed, 4);
}

TEST(UnittestReport, DotsModeNamesOnlyFailures) {
  // Captured from `python3.11 -m unittest` (no -v): the progress dots, then the blocks.
  TestReport r = RunnerReadAll<UnittestReader>(R"(FEF.sFxuE
======================================================================
ERROR: test_error (test_k.Gemm.test_error)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 6, in test_error
    def test_error(self): raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: CUDA error: no kernel image is available for execution on the device

======================================================================
ERROR: setUpClass (test_k.Setup)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 19, in setUpClass
    def setUpClass(cls): raise RuntimeError("no GPU")
                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: no GPU

======================================================================
FAIL: test_close (test_k.Gemm.test_close)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 5, in test_close
    def test_close(self): self.assertAlmostEqual(1.0, 1.5, places=3, msg="max diff")
                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError: 1.0 != 1.5 within 3 places (0.5 difference) : max diff

======================================================================
FAIL: test_fail (test_k.Gemm.test_fail)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 4, in test_fail
    def test_fail(self): self.assertEqual(1, 2)
                         ^^^^^^^^^^^^^^^^^^^^^^
AssertionError: 1 != 2

======================================================================
FAIL: test_sub (test_k.Gemm.test_sub) (i=1)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/test_k.py", line 16, in test_sub
    self.assertEqual(i, 0)
AssertionError: 1 != 0

======================================================================
UNEXPECTED SUCCESS: test_xpass (test_k.Gemm.test_xpass)
----------------------------------------------------------------------
Ran 8 tests in 0.001s

FAILED (failures=3, errors=2, skipped=1, expected failures=1, unexpected successes=1)
)");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 6u);  // 2 errors, 3 failures, the unexpected success
  EXPECT_EQ(r.cases[0].name, "test_k.Gemm.test_error");
  EXPECT_EQ(r.cases[0].end, TestEnd::kError);
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_xpass")->end, TestEnd::kFailed);
  EXPECT_EQ(r.counts.passed, 0);  // "Ran 8" less the 8 others the closing line counts
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.failed, 4);
  EXPECT_EQ(r.counts.errors, 2);
}

TEST(UnittestReport, OnlySkipsAndNoTests) {
  // Captured from python3.11 and python3.13 (3.12+ prints "NO TESTS RAN").
  TestReport r = RunnerReadAll<UnittestReader>(R"(.sx
----------------------------------------------------------------------
Ran 3 tests in 0.000s

OK (skipped=1, expected failures=1)

----------------------------------------------------------------------
Ran 0 tests in 0.000s

NO TESTS RAN
)");
  EXPECT_TRUE(r.complete);
  EXPECT_TRUE(r.cases.empty());
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.xfailed, 1);
  EXPECT_EQ(r.summary, "Ran 0 tests in 0.000s, NO TESTS RAN");
}

TEST(UnittestReport, NumpyMessageOnTheNextLineAndPytorchTimes) {
  // https://github.com/osqp/cuosqp/issues/14 (assert_allclose's message starts on the next line) and
  // https://github.com/pytorch/pytorch/pull/68486 (PyTorch's runner puts the time in the header).
  TestReport r = RunnerReadAll<UnittestReader>(R"(F
======================================================================
FAIL: test_basic_QP (basic_test.basic_tests)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "//ppcg/cuosqp/module/tests/basic_test.py", line 42, in test_basic_QP
    nptest.assert_allclose(res.x, np.array([0., 5.]), rtol=1e-4, atol=1e-4)
  File "/usr/lib/python3.8/contextlib.py", line 75, in inner
    return func(*args, **kwds)
AssertionError:
Not equal to tolerance rtol=0.0001, atol=0.0001

Mismatched elements: 2 / 2 (100%)
Max absolute difference: 4.

======================================================================
FAIL [2.987s]: test_cuda_assert_should_stop_common_utils_test_suite_cuda (__main__.TestTestingCUDA)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/opt/conda/lib/python3.9/site-packages/torch/testing/_internal/common_utils.py", line 1463, in wrapper
    method(*args, **kwargs)
RuntimeError: CUDA error: device-side assert triggered

----------------------------------------------------------------------
Ran 2 tests in 3.121s

FAILED (failures=2)
)");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].name, "basic_test.basic_tests.test_basic_QP");
  EXPECT_EQ(r.cases[0].message, "AssertionError: Not equal to tolerance rtol=0.0001, atol=0.0001");
  EXPECT_TRUE(r.cases[0].assertion);
  EXPECT_EQ(r.cases[1].name, "__main__.TestTestingCUDA.test_cuda_assert_should_stop_common_utils_test_suite_cuda");
  EXPECT_EQ(r.cases[1].message, "RuntimeError: CUDA error: device-side assert triggered");
  EXPECT_EQ(r.counts.failed, 2);
}

TEST(UnittestReport, CutLogKeepsTheOpenBlock) {
  std::string_view text = kUnittestV311.substr(0, kUnittestV311.find("FAIL: test_close"));
  text = text.substr(0, text.rfind("RuntimeError: no GPU"));
  UnittestReader reader = RunnerFeed<UnittestReader>(text);
  EXPECT_TRUE(reader.active());
  TestReport r = reader.Report();
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.cases.size(), 9u);  // the -v lines, and setUpClass from its open block
  EXPECT_EQ(RunnerCase(r, "test_k.Gemm.test_error")->message,
            "RuntimeError: CUDA error: no kernel image is available for execution on the device");
  EXPECT_EQ(RunnerCase(r, "test_k.Setup.setUpClass")->message, "");  // cut before its exception line
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.failed, 4);
  EXPECT_EQ(r.counts.errors, 2);
}

// ---------------------------------------------------------------------------------------------------
// Result lines

TEST(ResultLineReport, CudaSampleResultLines) {
  // https://github.com/NVIDIA/cuda-samples/issues/13 (deviceQuery's own verdict).
  TestReport r = RunnerReadAll<ResultLineReader>(R"($ ./deviceQuery
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

cudaGetDeviceCount returned 999
-> unknown error
Result = FAIL
)");
  EXPECT_EQ(r.runner, "result_line");
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].name, "result");
  EXPECT_EQ(r.cases[0].end, TestEnd::kFailed);
  EXPECT_TRUE(r.cases[0].assertion);
  EXPECT_EQ(r.cases[0].message, "Result = FAIL");
  EXPECT_EQ(r.counts.failed, 1);
}

TEST(ResultLineReport, QaLinesNameTheProgram) {
  // The forms of cuda-samples' printf calls: shrQATest's "&&&& %s %s" with sStatus first (and
  // "[%s] test results...\n%s\n" without -qatest), cdpAdvancedQuicksort's "&&&& %s WAIVED",
  // fp16ScalarProduct's "&&&& fp16ScalarProduct %s".
  TestReport r = RunnerReadAll<ResultLineReader>(
      "&&&& RUNNING ./bin/x86_64/linux/release/matrixMul -qatest\n"
      "[Matrix Multiply Using CUDA] - Starting...\n"
      "Result = PASS\n"
      "&&&& PASSED matrixMul -qatest\n"
      "&&&& cdpAdvancedQuicksort WAIVED\n"
      "&&&& fp16ScalarProduct FAILED\n"
      "[bandwidthTest] test results...\n"
      "PASSED\n");
  ASSERT_EQ(r.cases.size(), 5u);
  EXPECT_EQ(r.cases[0].name, "matrixMul");  // "Result = PASS" under "&&&& RUNNING"
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[1].name, "matrixMul");
  EXPECT_EQ(r.cases[1].message, "&&&& PASSED matrixMul -qatest");
  EXPECT_EQ(r.cases[2].name, "cdpAdvancedQuicksort");
  EXPECT_EQ(r.cases[2].end, TestEnd::kSkipped);  // WAIVED: not runnable on this configuration
  EXPECT_EQ(r.cases[3].name, "fp16ScalarProduct");
  EXPECT_EQ(r.cases[3].end, TestEnd::kFailed);
  EXPECT_TRUE(r.cases[3].assertion);
  EXPECT_EQ(r.cases[4].name, "bandwidthTest");
  EXPECT_EQ(r.counts.passed, 3);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.failed, 1);
}

TEST(ResultLineReport, CutlassExampleDisposition) {
  // https://github.com/NVIDIA/cutlass/issues/1088 (48_hopper_warp_specialized_gemm, two runs).
  TestReport r = RunnerReadAll<ResultLineReader>(R"($ ./48_hopper_warp_specialized_gemm --m=1024 --n=1024 --k=1024
  Disposition: Passed
  Problem Size: 1024x1024x1024
  Avg runtime: 0.0179222 ms
  GFLOPS: 119822
$ ./48_hopper_warp_specialized_gemm --m=1024 --n=2048 --k=1024
  Disposition: Failed
)");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[1].end, TestEnd::kFailed);
  EXPECT_TRUE(r.cases[1].assertion);
  EXPECT_EQ(r.cases[1].message, "Disposition: Failed");
  EXPECT_EQ(r.summary, "Disposition: Failed");
}

TEST(ResultLineReport, CutlassProfilerDispositions) {
  // https://github.com/NVIDIA/cutlass/issues/1587 (one profiler result), then the other dispositions
  // as tools/profiler/src/performance_report.cpp prints them (the second coloured for a terminal).
  TestReport r = RunnerReadAll<ResultLineReader>(R"(=============================
  Problem ID: 1

        Provider: CUTLASS
   OperationKind: gemm
       Operation: cutlass_tensorop_c1688gemm_128x64_16x3_nn_align1

          Status: Success
    Verification: ON
     Disposition: Passed

reference_device: Passed
          cuBLAS: Not run
           cuDNN: Not run

=============================
       Operation: cutlass_tensorop_h16816gemm_256x128_32x3_nn_align8
     Disposition: )" "\x1b[1;31m" R"(Incorrect)" "\x1b[0m" R"(
       Operation: cutlass3x_sm100_tensorop_gemm_f16_f16_f32_f16_f16_256x128x64_2x1x1_0_tnn_align8
     Disposition: Not supported
       Operation: cutlass_simt_sgemm_128x128_8x2_nn_align1
     Disposition: Failed
       Operation: cutlass_simt_dgemm_128x128_8x2_nn_align1
     Disposition: Not verified
)");
  ASSERT_EQ(r.cases.size(), 5u);  // the per-provider "cuBLAS: Not run" lines make no case
  EXPECT_EQ(r.cases[0].name, "cutlass_tensorop_c1688gemm_128x64_16x3_nn_align1");
  EXPECT_EQ(r.cases[0].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[1].end, TestEnd::kFailed);
  EXPECT_TRUE(r.cases[1].assertion);
  EXPECT_EQ(r.cases[1].message, "Disposition: Incorrect");
  EXPECT_EQ(r.cases[2].end, TestEnd::kSkipped);
  EXPECT_EQ(r.cases[3].end, TestEnd::kError);  // the kernel itself reported an error
  EXPECT_FALSE(r.cases[3].assertion);
  EXPECT_EQ(r.cases[4].end, TestEnd::kPassed);  // not verified is not a failure
  EXPECT_EQ(r.cases[4].message, "Disposition: Not verified");
  EXPECT_EQ(r.counts.passed, 2);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 1);
  EXPECT_EQ(r.counts.skipped, 1);
}

TEST(ResultLineReport, SampleAndExampleBareForms) {
  // The forms of cuda-samples' "Test passed\n" / "Test failed!\n" / "Test PASSED\n" and CUTLASS
  // examples' "Passed." / "Failed" after the reference check.
  TestReport r = RunnerReadAll<ResultLineReader>("Test passed\nTest failed!\nTest PASSED\nPassed.\nFailed\nFAILED\nWAIVED\n");
  ASSERT_EQ(r.cases.size(), 7u);
  EXPECT_EQ(r.cases[1].end, TestEnd::kFailed);
  EXPECT_EQ(r.cases[1].message, "Test failed!");
  EXPECT_EQ(r.cases[3].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[6].end, TestEnd::kSkipped);
  EXPECT_EQ(r.counts.passed, 3);
  EXPECT_EQ(r.counts.failed, 3);
  EXPECT_EQ(r.counts.skipped, 1);
}

TEST(ResultLineReport, ProseIsNotAResult) {
  ResultLineReader reader = RunnerFeed<ResultLineReader>(
      "All 5 tests passed\nTest passed with 0 errors\nPASS\nFAIL\npassed\n[  PASSED  ] 3 tests.\n"
      "test_x.py::test_y PASSED [ 50%]\nFAILED (failures=1)\n1/3 Test #1: a ....   Passed    0.01 sec\n"
      "Disposition of the result: Passed\n");
  EXPECT_FALSE(reader.active());
  EXPECT_FALSE(reader.complete());
  EXPECT_TRUE(reader.Report().cases.empty());
}

}  // namespace
}  // namespace gauntlet::classifier
