// pytest's console report read by PytestReader, on output captured from real pytest 7.2.1 runs of
// tests/fixtures/test_runners/test_kernels.py (one skip, one NotImplementedError, one failed
// tolerance assert, one pass) in the forms people run it: default, -rs, -v -rA, -q --tb=native.
#include <gtest/gtest.h>

#include "classifier/pytest_report.h"
#include "test_runner_fixture.h"

namespace gauntlet::classifier {
namespace {
using testing_fixture::Lines;
using testing_fixture::RunnerFixture;

TestReport Read(const std::string& name) {
  PytestReader r;
  for (const std::string& l : Lines(RunnerFixture(name))) r.Observe(l);
  EXPECT_TRUE(r.complete()) << name;
  return r.Report();
}

const TestCase* Find(const TestReport& r, const std::string& name) {
  for (const TestCase& c : r.cases)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(PytestCounts, ReadsTheFinalLineInEveryForm) {
  TestCounts c;
  ASSERT_TRUE(ParsePytestCounts("=============== 2 failed, 1 passed, 1 skipped, 1 error in 0.02s ================", &c));
  EXPECT_EQ(c.failed, 2);
  EXPECT_EQ(c.passed, 1);
  EXPECT_EQ(c.skipped, 1);
  EXPECT_EQ(c.errors, 1);
  ASSERT_TRUE(ParsePytestCounts("2 skipped, 1 xfailed in 0.01s", &c));
  EXPECT_EQ(c.skipped, 2);
  EXPECT_EQ(c.xfailed, 1);
  ASSERT_TRUE(ParsePytestCounts("======================= 1 skipped, 3 deselected in 0.00s =======================", &c));
  EXPECT_EQ(c.total(), 1);
  ASSERT_TRUE(ParsePytestCounts("============================ no tests ran in 0.01s =============================", &c));
  EXPECT_EQ(c.total(), 0);
  ASSERT_TRUE(ParsePytestCounts("==== 3 passed, 2 warnings in 75.20s (0:01:15) ====", &c));
  EXPECT_EQ(c.passed, 3);
  // Not pytest's: words it never prints, no time, a sentence that happens to say "passed".
  EXPECT_FALSE(ParsePytestCounts("3 passed the check in 2s", &c));
  EXPECT_FALSE(ParsePytestCounts("=== 2 failed, 1 passed ===", &c));
  EXPECT_FALSE(ParsePytestCounts("=================================== FAILURES ===================================", &c));
}

TEST(PytestReader, DefaultRunTakesEachFailureFromItsELinesNotTheCutSummary) {
  TestReport r = Read("pytest7_default.log");
  EXPECT_EQ(r.counts.failed, 2);
  EXPECT_EQ(r.counts.errors, 1);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.counts.passed, 1);
  const TestCase* fp8 = Find(r, "test_kernels.py::test_fp8_addmm");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->end, TestEnd::kFailed);
  // The short summary printed `NotImplementedError: "addmm_cuda" no...`; the E line is whole.
  EXPECT_EQ(fp8->message, "NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'");
  const TestCase* tol = Find(r, "test_kernels.py::test_bf16_tolerance");
  ASSERT_NE(tol, nullptr);
  EXPECT_EQ(tol->message, "AssertionError: rel_err=0.031 exceeds tolerance 2e-2");
  const TestCase* err = Find(r, "test_err.py::test_uses_device");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->end, TestEnd::kError);
  EXPECT_EQ(err->message, "RuntimeError: CUDA error: no kernel image is available for execution on the device");
  EXPECT_EQ(r.cases.size(), 3u) << "the default -rfE names no skipped or passed test";
}

TEST(PytestReader, DashRsNamesTheSkipAndItsReason) {
  TestReport r = Read("pytest7_rs.log");
  const TestCase* skip = Find(r, "test_kernels.py:10");
  ASSERT_NE(skip, nullptr);
  EXPECT_EQ(skip->end, TestEnd::kSkipped);
  EXPECT_EQ(skip->message, "NVFP4 GEMM requires compute capability 10.0 (found 9.0)");
  // -rs replaces the default -rfE: the failures come from the FAILURES blocks alone.
  ASSERT_NE(Find(r, "test_fp8_addmm"), nullptr);
  EXPECT_EQ(Find(r, "test_fp8_addmm")->message, "NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'");
}

TEST(PytestReader, VerboseListsEveryTestOnceWithTheWholeSkipReason) {
  TestReport r = Read("pytest7_verbose.log");
  ASSERT_EQ(r.cases.size(), 4u);
  const TestCase* skip = Find(r, "test_kernels.py::test_nvfp4_gemm");
  ASSERT_NE(skip, nullptr);
  EXPECT_EQ(skip->end, TestEnd::kSkipped);
  // -v cut it to "NVFP4 GEMM requires comput..."; the SKIPPED line of -rA gives it whole.
  EXPECT_EQ(skip->message, "NVFP4 GEMM requires compute capability 10.0 (found 9.0)");
  ASSERT_NE(Find(r, "test_kernels.py::test_fp16_gemm"), nullptr);
  EXPECT_EQ(Find(r, "test_kernels.py::test_fp16_gemm")->end, TestEnd::kPassed);
  EXPECT_EQ(Find(r, "test_kernels.py::test_bf16_tolerance")->end, TestEnd::kFailed);
}

TEST(PytestReader, NativeTracebacksGiveTheFinalExceptionLine) {
  TestReport r = Read("pytest7_native.log");
  const TestCase* fp8 = Find(r, "test_kernels.py::test_fp8_addmm");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->message, "NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'");
  EXPECT_EQ(r.summary, "2 failed, 1 passed, 1 skipped in 0.01s");
}

TEST(PytestReader, QuietRunWithXfailAndParametrizedSkips) {
  TestReport r = Read("pytest7_q_xfail.log");
  EXPECT_EQ(r.counts.skipped, 2);
  EXPECT_EQ(r.counts.xfailed, 1);
  const TestCase* xf = Find(r, "test_xf.py::test_x");
  ASSERT_NE(xf, nullptr);
  EXPECT_EQ(xf->end, TestEnd::kXfailed);
  EXPECT_EQ(xf->message, "known bad on hopper");
  int skips = 0;
  for (const TestCase& c : r.cases) skips += c.end == TestEnd::kSkipped;
  EXPECT_EQ(skips, 2);
}

TEST(PytestReader, OnlySkippedAndNothingRun) {
  TestReport only = Read("pytest7_only_skip.log");
  EXPECT_EQ(only.counts.skipped, 1);
  EXPECT_TRUE(only.cases.empty()) << "without -rs pytest names no skipped test";
  TestReport none = Read("pytest7_no_tests.log");
  EXPECT_EQ(none.counts.total(), 0);
  TestReport desel = Read("pytest7_deselected.log");
  EXPECT_EQ(desel.counts.total(), 0);
}

TEST(PytestReader, ALogWithoutPytestIsNotAReport) {
  PytestReader r;
  for (const char* l : {"RuntimeError: boom", "FAILED to open the device", "==== done ====", "E   not pytest"}) r.Observe(l);
  EXPECT_FALSE(r.complete());
  EXPECT_TRUE(r.Report().cases.empty());
}

TEST(PytestReader, StaysBoundedOnAHugeReport) {
  PytestReader r;
  r.Observe("=========================== short test summary info ============================");
  for (int i = 0; i < 3000; ++i)
    r.Observe("FAILED tests/t.py::test_" + std::to_string(i) + " - RuntimeError: " + std::string(5000, 'x'));
  r.Observe("==== 3000 failed in 1.00s ====");
  TestReport rep = r.Report();
  EXPECT_EQ(rep.cases.size(), kMaxCases);
  EXPECT_EQ(rep.dropped, 3000 - kMaxCases);
  EXPECT_EQ(rep.counts.failed, 3000);
  for (const TestCase& c : rep.cases) EXPECT_LE(c.message.size(), kMaxCaseMessage);
}

}  // namespace
}  // namespace gauntlet::classifier

namespace gauntlet::classifier {
namespace {

// pytest 8's own failure demo (doc/en/example/assertion/failure_demo.py, as its regendoc output
// prints it): class-qualified node ids, a summary message that is the bare assert, a block header
// "TestFailing.test_simple", and the type only on the location line.
TEST(PytestReader, Pytest8ClassTestsTakeTheTypeFromTheLocationLine) {
  const char* lines[] = {
      "============================= test session starts ==============================",
      "platform linux -- Python 3.x.y, pytest-8.x.y, pluggy-1.x.y",
      "collected 44 items",
      "",
      "failure_demo.py FF                                                   [100%]",
      "",
      "=================================== FAILURES ===================================",
      "___________________________ TestFailing.test_simple ____________________________",
      "",
      "self = <failure_demo.TestFailing object at 0xdeadbeef0001>",
      "",
      "    def test_simple(self):",
      ">       assert f() == g()",
      "E       assert 42 == 43",
      "E        +  where 42 = <function TestFailing.test_simple.<locals>.f at 0xdeadbeef0003>()",
      "",
      "failure_demo.py:41: AssertionError",
      "_________________________ test_generative[3-6] _________________________",
      "",
      ">       assert param1 * 2 < param2",
      "E       assert (3 * 2) < 6",
      "",
      "failure_demo.py:22: AssertionError",
      "=========================== short test summary info ============================",
      "FAILED failure_demo.py::TestFailing::test_simple - assert 42 == 43",
      "FAILED failure_demo.py::test_generative[3-6] - assert (3 * 2) < 6",
      "============================== 2 failed in 0.12s ===============================",
  };
  PytestReader r;
  for (const char* l : lines) r.Observe(l);
  ASSERT_TRUE(r.complete());
  TestReport rep = r.Report();
  ASSERT_EQ(rep.cases.size(), 2u);
  EXPECT_EQ(rep.cases[0].name, "failure_demo.py::TestFailing::test_simple");
  EXPECT_EQ(rep.cases[0].message, "AssertionError: assert 42 == 43");
  EXPECT_EQ(rep.cases[1].name, "failure_demo.py::test_generative[3-6]");
  EXPECT_EQ(rep.cases[1].message, "AssertionError: assert (3 * 2) < 6");
}

}  // namespace
}  // namespace gauntlet::classifier
