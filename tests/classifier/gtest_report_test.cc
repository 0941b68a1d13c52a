// GoogleTest's console report read by GtestReader, on output captured from real GoogleTest 1.12.1
// runs of tests/fixtures/test_runners/gtest_kernels.cc (GTEST_SKIP, a failed EXPECT_LT, a pass, a
// thrown exception, a DISABLED_ test) and of a parametrized suite.
#include <gtest/gtest.h>

#include "classifier/gtest_report.h"
#include "test_runner_fixture.h"

namespace gauntlet::classifier {
namespace {
using testing_fixture::Lines;
using testing_fixture::RunnerFixture;

TestReport ReadGtestReport(const std::string& name) {
  GtestReader r;
  for (const std::string& l : Lines(RunnerFixture(name))) r.Observe(l);
  EXPECT_TRUE(r.complete()) << name;
  return r.Report();
}

TEST(GtestReader, EachTestWithItsReasonOrMessage) {
  TestReport r = ReadGtestReport("gtest_mixed.log");
  ASSERT_EQ(r.cases.size(), 4u) << "the summary's listing repeats names; each test counts once";
  EXPECT_EQ(r.cases[0].name, "Nvfp4Gemm.RequiresSm100");
  EXPECT_EQ(r.cases[0].end, TestEnd::kSkipped);
  EXPECT_EQ(r.cases[0].message, "NVFP4 GEMM requires compute capability 10.0 (found 9.0)");
  EXPECT_EQ(r.cases[1].name, "Bf16Gemm.WithinTolerance");
  EXPECT_EQ(r.cases[1].end, TestEnd::kFailed);
  EXPECT_TRUE(r.cases[1].assertion);
  EXPECT_EQ(r.cases[1].message, "Expected: (rel_err) < (2e-2), actual: 0.031 vs 0.02");
  EXPECT_EQ(r.cases[2].end, TestEnd::kPassed);
  EXPECT_EQ(r.cases[3].name, "Fp8Gemm.Throws");
  EXPECT_EQ(r.cases[3].end, TestEnd::kError) << "a thrown exception is not a failed assertion";
  EXPECT_FALSE(r.cases[3].assertion);
  EXPECT_NE(r.cases[3].message.find("no kernel image is available"), std::string::npos);
  EXPECT_EQ(r.counts.passed, 1);
  EXPECT_EQ(r.counts.failed, 1);
  EXPECT_EQ(r.counts.errors, 1);
  EXPECT_EQ(r.counts.skipped, 1);
  EXPECT_EQ(r.summary, "4 tests from 4 test suites ran.");
}

TEST(GtestReader, ParametrizedNamesLoseTheirParameterNote) {
  TestReport r = ReadGtestReport("gtest_param.log");
  bool found = false;
  for (const TestCase& c : r.cases)
    if (c.name == "Tiles/P.Tile/1") {
      found = true;
      EXPECT_EQ(c.end, TestEnd::kFailed);
      EXPECT_EQ(c.message, "Expected equality of these values:");
    }
  EXPECT_TRUE(found);
}

TEST(GtestReader, ZeroTestsAndOnlySkips) {
  TestReport zero = ReadGtestReport("gtest_zero.log");
  EXPECT_EQ(zero.counts.total(), 0);
  EXPECT_TRUE(zero.cases.empty());
  TestReport skip = ReadGtestReport("gtest_only_skip.log");
  ASSERT_EQ(skip.cases.size(), 1u);
  EXPECT_EQ(skip.cases[0].end, TestEnd::kSkipped);
}

TEST(GtestReader, ATestStillRunningWhenTheOutputEndsIsAnError) {
  GtestReader r;
  for (const char* l : {"[==========] Running 1 test from 1 test suite.", "[ RUN      ] Gemm.Launch", "launching..."})
    r.Observe(l);
  EXPECT_FALSE(r.complete());
  TestReport rep = r.Report();
  ASSERT_EQ(rep.cases.size(), 1u);
  EXPECT_EQ(rep.cases[0].name, "Gemm.Launch");
  EXPECT_EQ(rep.cases[0].end, TestEnd::kError);
}

}  // namespace
}  // namespace gauntlet::classifier
