// Test cases judged into verdicts (classifier/test_judge.h), and the classifier's own verdict on a
// log that holds a test runner's report: on output captured from real pytest 7.2.1, GoogleTest
// 1.12.1 and ctest runs (tests/fixtures/test_runners/).
#include <gtest/gtest.h>

#include "classifier/classifier.h"
#include "classifier/junit_report.h"
#include "classifier/test_judge.h"
#include "exits.h"
#include "test_runner_fixture.h"

namespace gauntlet::classifier {
namespace {
using test_exits::ExitCode;
using testing_fixture::RunnerFixture;

const JudgedCase* Find(const TestJudgement& j, const std::string& name) {
  for (const JudgedCase& c : j.cases)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(JudgeTests, EachPytestCaseByWhatItSays) {
  auto r = ParseJUnitXml(RunnerFixture("pytest7_junit.xml"));
  ASSERT_TRUE(r.ok());
  TestJudgement j = JudgeTests(*r);
  const JudgedCase* skip = Find(j, "test_kernels.test_nvfp4_gemm");
  ASSERT_NE(skip, nullptr);
  EXPECT_EQ(skip->verdict, Verdict::kUnsupported);
  EXPECT_EQ(skip->signature, "unsupported:skipped:NVFP4 GEMM requires compute capability <n> (found <n>)");
  EXPECT_NE(skip->evidence.find("requires compute capability 10.0"), std::string::npos);
  const JudgedCase* fp8 = Find(j, "test_kernels.test_fp8_addmm");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->verdict, Verdict::kUnsupported) << fp8->signature;
  EXPECT_EQ(fp8->signature, "unsupported:dtype");
  const JudgedCase* tol = Find(j, "test_kernels.test_bf16_tolerance");
  ASSERT_NE(tol, nullptr);
  EXPECT_EQ(tol->verdict, Verdict::kWrongOutput) << tol->signature;
  EXPECT_EQ(Find(j, "test_kernels.test_fp16_gemm")->verdict, Verdict::kPassed);
  // The worst case decides: a wrong output (severity 3) over a refusal (2).
  EXPECT_EQ(j.overall.verdict, Verdict::kWrongOutput);
  EXPECT_EQ(j.overall.signature, tol->signature);
}

TEST(JudgeTests, GoogleTestAssertionsAreWrongOutputAndExceptionsSayWhatTheyAre) {
  auto r = ParseJUnitXml(RunnerFixture("gtest_junit.xml"));
  ASSERT_TRUE(r.ok());
  TestJudgement j = JudgeTests(*r);
  EXPECT_EQ(Find(j, "Nvfp4Gemm.RequiresSm100")->verdict, Verdict::kUnsupported);
  const JudgedCase* tol = Find(j, "Bf16Gemm.WithinTolerance");
  EXPECT_EQ(tol->verdict, Verdict::kWrongOutput);
  // An error printed beside its tolerance is a mismatch report, whatever assertion carried it
  // (docs/CLASSIFIER.md "Mismatch reports").
  EXPECT_EQ(tol->signature, "wrong_output:mismatch");
  const JudgedCase* thrown = Find(j, "Fp8Gemm.Throws");
  EXPECT_EQ(thrown->verdict, Verdict::kUnsupported);
  EXPECT_EQ(thrown->signature, "unsupported:no_kernel_image");
}

TEST(JudgeTests, CtestFailureIsReadFromTheTestsOutput) {
  auto r = ParseJUnitXml(RunnerFixture("ctest_junit.xml"));
  ASSERT_TRUE(r.ok());
  TestJudgement j = JudgeTests(*r);
  EXPECT_EQ(Find(j, "fails")->verdict, Verdict::kCrashed);
  EXPECT_EQ(Find(j, "fails")->signature, "crashed:illegal_memory_access");
  EXPECT_EQ(Find(j, "skips")->verdict, Verdict::kUnsupported);
  EXPECT_EQ(j.overall.signature, "crashed:illegal_memory_access");
}

TEST(JudgeTests, NoTestsIsAFailureNeverAPass) {
  auto r = ParseJUnitXml("<testsuites tests=\"0\"/>");
  ASSERT_TRUE(r.ok());
  TestJudgement j = JudgeTests(*r);
  EXPECT_EQ(j.overall.verdict, Verdict::kCrashed);
  EXPECT_EQ(j.overall.signature, "crashed:no_tests");
}

TEST(JudgeTests, AllPassedIsPassed) {
  auto r = ParseJUnitXml("<testsuite><testcase classname=\"a\" name=\"b\" time=\"0.5\"/></testsuite>");
  ASSERT_TRUE(r.ok());
  TestJudgement j = JudgeTests(*r);
  EXPECT_EQ(j.overall.verdict, Verdict::kPassed);
  ASSERT_EQ(j.cases.size(), 1u);
  EXPECT_DOUBLE_EQ(j.cases[0].seconds, 0.5);
}

TEST(JudgeTests, TheSuitesRulesApplyToEachCase) {
  auto r = ParseJUnitXml(RunnerFixture("ctest_junit.xml"));
  ASSERT_TRUE(r.ok());
  auto rules = ParseSignatureRules(nlohmann::json::parse(
      R"([{"match": "illegal memory access", "verdict": "oom", "signature": "oom:mine"}])"));
  ASSERT_TRUE(rules.ok());
  TestJudgement j = JudgeTests(*r, *rules);
  EXPECT_EQ(Find(j, "fails")->signature, "oom:mine");
}

// The classifier on a whole stage log: the issue's findings.
TEST(ClassifierTests, PytestThatOnlySkipsIsUnsupportedThoughItExitsZero) {
  const Classification c = ClassifyText(RunnerFixture("pytest7_only_skip.log"), ExitCode(0));
  EXPECT_EQ(c.verdict, Verdict::kUnsupported) << c.signature;
  EXPECT_EQ(c.signature, "unsupported:skipped");
  EXPECT_NE(c.evidence.find("1 skipped"), std::string::npos) << c.evidence;
}

TEST(ClassifierTests, PytestNotImplementedErrorIsNotACrash) {
  // -rs run: skip, NotImplementedError, tolerance assert; the worst is the assert (wrong_output).
  Classification all = ClassifyText(RunnerFixture("pytest7_rs.log"), ExitCode(1));
  EXPECT_EQ(all.verdict, Verdict::kWrongOutput) << all.signature;
  // The issue's second finding: only the refusal failed.
  const std::string log =
      "============================= test session starts ==============================\n"
      "collected 1 item\n\n"
      "test_kernels.py F                                                        [100%]\n\n"
      "=================================== FAILURES ===================================\n"
      "________________________________ test_fp8_addmm ________________________________\n\n"
      "    def test_fp8_addmm():\n"
      ">       raise NotImplementedError(\"\\\"addmm_cuda\\\" not implemented for 'Float8_e5m2'\")\n"
      "E       NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'\n\n"
      "test_kernels.py:14: NotImplementedError\n"
      "=========================== short test summary info ============================\n"
      "FAILED test_kernels.py::test_fp8_addmm - NotImplementedError: \"addmm_cuda\" no...\n"
      "============================== 1 failed in 0.01s ===============================\n";
  Classification c = ClassifyText(log, ExitCode(1));
  EXPECT_EQ(c.verdict, Verdict::kUnsupported) << c.signature;
  EXPECT_EQ(c.signature, "unsupported:dtype") << "the refusal's family, as for the same exception in a script";
  EXPECT_NE(c.evidence.find("test_fp8_addmm"), std::string::npos) << c.evidence;
}

TEST(ClassifierTests, PytestNoTestsRanIsAFailure) {
  Classification c = ClassifyText(RunnerFixture("pytest7_no_tests.log"), ExitCode(5));
  EXPECT_EQ(c.signature, "crashed:no_tests");
  Classification d = ClassifyText(RunnerFixture("pytest7_deselected.log"), ExitCode(5));
  EXPECT_EQ(d.signature, "crashed:no_tests");
}

TEST(ClassifierTests, GoogleTestZeroTestsExitingZeroIsAFailure) {
  Classification c = ClassifyText(RunnerFixture("gtest_zero.log"), ExitCode(0));
  EXPECT_EQ(c.verdict, Verdict::kCrashed);
  EXPECT_EQ(c.signature, "crashed:no_tests");
  Classification s = ClassifyText(RunnerFixture("gtest_only_skip.log"), ExitCode(0));
  EXPECT_EQ(s.verdict, Verdict::kUnsupported) << s.signature;
  Classification m = ClassifyText(RunnerFixture("gtest_mixed.log"), ExitCode(1));
  EXPECT_EQ(m.verdict, Verdict::kWrongOutput) << m.signature;
}

TEST(ClassifierTests, PartlySkippedSuiteIsUnsupportedAndCountsItsPasses) {
  const std::string log =
      "============================= test session starts ==============================\n"
      "collected 4 items\n\n"
      "test_gemm.py ...s                                                        [100%]\n\n"
      "=========================== short test summary info ============================\n"
      "SKIPPED [1] test_gemm.py:41: FP8 block scaling requires sm_100a\n"
      "========================= 3 passed, 1 skipped in 2.10s =========================\n";
  Classifier k;
  k.Feed(log);
  Classification c = k.Finish(ExitCode(0));
  EXPECT_EQ(c.verdict, Verdict::kUnsupported);
  EXPECT_EQ(c.signature, "unsupported:skipped:FP8 block scaling requires sm_100a");
  auto t = k.Tests();
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->counts.passed, 3);
}

TEST(ClassifierTests, APassingRunStaysPassed) {
  const std::string log =
      "============================= test session starts ==============================\n"
      "collected 2 items\n\n"
      "test_gemm.py ..                                                          [100%]\n\n"
      "============================== 2 passed in 0.51s ===============================\n";
  EXPECT_EQ(ClassifyText(log, ExitCode(0)).verdict, Verdict::kPassed);
}

TEST(ClassifierTests, TheReportDoesNotDependOnChunking) {
  const std::string log = RunnerFixture("pytest7_verbose.log");
  const Classification whole = ClassifyText(log, ExitCode(1));
  for (size_t chunk : {1u, 7u, 64u}) {
    Classifier k;
    for (size_t i = 0; i < log.size(); i += chunk) k.Feed(std::string_view(log).substr(i, chunk));
    const Classification c = k.Finish(ExitCode(1));
    EXPECT_EQ(c.verdict, whole.verdict) << chunk;
    EXPECT_EQ(c.signature, whole.signature) << chunk;
  }
}

}  // namespace
}  // namespace gauntlet::classifier

namespace gauntlet::classifier {
namespace {

// A bare assert in pytest (no message): the location line names AssertionError, so it is a wrong
// output, with the test file as the signature's frame.
TEST(JudgeTests, ABareAssertIsWrongOutputInTheTestsFile) {
  TestReport r;
  r.runner = "pytest";
  r.complete = true;
  TestCase c = NamedCase("tests/gemm/test_mm_fp4.py::test_mm_fp4[cudnn]");
  c.end = TestEnd::kFailed;
  c.message = "AssertionError: assert 0.4127 > 0.99";
  AddCase(&r, c);
  r.counts.failed = 1;
  TestJudgement j = JudgeTests(r);
  ASSERT_EQ(j.cases.size(), 1u);
  EXPECT_EQ(j.cases[0].verdict, Verdict::kWrongOutput);
  EXPECT_EQ(j.cases[0].signature, "wrong_output:AssertionError:assert <n> > <n>@test_mm_fp4.py");
}

}  // namespace
}  // namespace gauntlet::classifier
