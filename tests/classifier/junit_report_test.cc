// JUnit XML as real pytest 7.2.1 (--junitxml), GoogleTest 1.12.1 (--gtest_output=xml) and ctest
// 3.25 (--output-junit) wrote it for the fixtures in tests/fixtures/test_runners/, and broken files.
#include <gtest/gtest.h>

#include "classifier/junit_report.h"
#include "test_runner_fixture.h"

namespace gauntlet::classifier {
namespace {
using testing_fixture::RunnerFixture;

TEST(JUnitReport, Pytest) {
  auto r = ParseJUnitXml(RunnerFixture("pytest7_junit.xml"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 4u);
  EXPECT_EQ(r->cases[0].name, "test_kernels.test_nvfp4_gemm");
  EXPECT_EQ(r->cases[0].end, TestEnd::kSkipped);
  EXPECT_EQ(r->cases[0].message, "NVFP4 GEMM requires compute capability 10.0 (found 9.0)");
  EXPECT_EQ(r->cases[1].end, TestEnd::kFailed);
  EXPECT_EQ(r->cases[1].message, "NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'");
  EXPECT_NE(r->cases[1].detail.find("E       NotImplementedError"), std::string::npos);
  EXPECT_EQ(r->cases[2].message, "AssertionError: rel_err=0.031 exceeds tolerance 2e-2");
  EXPECT_EQ(r->cases[3].end, TestEnd::kPassed);
  EXPECT_EQ(r->counts.total(), 4);
}

TEST(JUnitReport, GoogleTestDropsTheLocationLineAndTheDisabledTest) {
  auto r = ParseJUnitXml(RunnerFixture("gtest_junit.xml"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 4u) << "DISABLED_Later did not run and is not a case";
  EXPECT_EQ(r->cases[0].name, "Nvfp4Gemm.RequiresSm100");
  EXPECT_EQ(r->cases[0].message, "NVFP4 GEMM requires compute capability 10.0 (found 9.0)");
  EXPECT_EQ(r->cases[1].name, "Bf16Gemm.WithinTolerance");
  EXPECT_TRUE(r->cases[1].assertion);
  EXPECT_EQ(r->cases[1].message, "Expected: (rel_err) < (2e-2), actual: 0.031 vs 0.02");
  EXPECT_EQ(r->cases[3].end, TestEnd::kError);
  EXPECT_FALSE(r->cases[3].assertion);
}

TEST(JUnitReport, CtestKeepsTheTestsOutput) {
  auto r = ParseJUnitXml(RunnerFixture("ctest_junit.xml"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 3u);
  EXPECT_EQ(r->cases[0].name, "passes");
  EXPECT_EQ(r->cases[1].end, TestEnd::kFailed);
  EXPECT_FALSE(r->cases[1].assertion);
  EXPECT_NE(r->cases[1].detail.find("an illegal memory access was encountered"), std::string::npos);
  EXPECT_EQ(r->cases[2].end, TestEnd::kSkipped);
  EXPECT_NE(r->cases[2].detail.find("requires sm_100"), std::string::npos);
}

TEST(JUnitReport, BrokenFilesSayWhatIsWrong) {
  auto cut = ParseJUnitXml("<testsuites><testsuite><testcase name=\"a\">");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("not well-formed XML"), std::string::npos);
  auto html = ParseJUnitXml("<html><body>502 Bad Gateway</body></html>");
  ASSERT_FALSE(html.ok());
  EXPECT_NE(html.status().message().find("<html>"), std::string::npos);
  EXPECT_FALSE(ParseJUnitXml("").ok());
}

TEST(JUnitReport, AnExternalEntityIsNeverRead) {
  // pugixml skips the DOCTYPE and leaves an entity it does not know as text: no file is opened.
  auto r = ParseJUnitXml(
      "<!DOCTYPE t [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><testsuite><testcase name=\"a\">"
      "<skipped message=\"&x;\"/></testcase></testsuite>");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_EQ(r->cases[0].message, "&x;");
}

TEST(JUnitReport, AnEmptySuiteHasNoCases) {
  auto r = ParseJUnitXml("<?xml version=\"1.0\"?><testsuites tests=\"0\"><testsuite name=\"pytest\" tests=\"0\"/></testsuites>");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cases.empty());
  EXPECT_EQ(r->counts.total(), 0);
}

TEST(JUnitReport, NestedSuitesAndTheCaseCap) {
  std::string xml = "<testsuites><testsuite name=\"outer\"><testsuite name=\"inner\">";
  for (int i = 0; i < 1500; ++i) xml += "<testcase classname=\"k\" name=\"t" + std::to_string(i) + "\"/>";
  xml += "</testsuite></testsuite></testsuites>";
  auto r = ParseJUnitXml(xml);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cases.size(), kMaxCases);
  EXPECT_EQ(r->dropped, 500u);
  EXPECT_EQ(r->counts.passed, 1500);
  EXPECT_EQ(r->cases[0].name, "k.t0");
}

}  // namespace
}  // namespace gauntlet::classifier
