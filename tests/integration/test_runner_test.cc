// Test-runner results end to end (issue 29): a REAL pytest (Debian's python3-pytest, run as
// /usr/bin/python3 -m pytest) and a REAL GoogleTest program run as command stages by a real worker
// against a real daemon on loopback; the per-test verdicts are stored and served
// (GET /api/v1/trials/{id} `tests`, `gauntlet logs N --tests`). The pytest file
// (tests/fixtures/test_runners/test_kernels.py) skips one test "requires compute capability 10.0",
// raises NotImplementedError in one, fails a tolerance assert in one and passes one; the GoogleTest
// program (gtest_kernels.cc) skips, fails an EXPECT_LT, passes and throws.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_fixture.h"
#include "ctest_project.h"
#include "tests/support/harness.h"
#include "workers/junit_file.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

const char* kPython = "/usr/bin/python3";

bool HavePytest() {
  return access(kPython, X_OK) == 0 && std::system("/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1") == 0;
}

std::string FixtureDir() { return SourceDir() + "/tests/fixtures/test_runners"; }
std::string KernelsFile() { return FixtureDir() + "/test_kernels.py"; }

// A pytest stage over the fixture file: `-k {select}` picks tests, -ra names every test that did not
// pass; with `junit` the stage also writes and names a JUnit file.
json PytestSuite(const std::string& name, bool junit) {
  json argv = {kPython, "-m", "pytest", "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", FixtureDir(), "-ra",
               "-k", "{select}", KernelsFile()};
  if (junit) argv.push_back("--junitxml={workdir}/junit.xml");
  json stage = {{"name", "pytest"}, {"kind", "command"}, {"timeout_s", 120}, {"argv", argv},
                {"env", {{"PYTHONDONTWRITEBYTECODE", "1"}}}};
  if (junit) stage["junit"] = "{workdir}/junit.xml";
  return {{"name", name}, {"parameters", {{"select", {"test_", "nvfp4"}}}}, {"stages", {stage}}};
}

class TestRunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::filesystem::create_directories(dir_->path() + "/suites");
    d_ = new Daemon(dir_->path(), dir_->path() + "/suites");
    worker_ = StartWorker(dir_->path(), d_->url(), "cpu-node", json::object()).release();
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete d_;
    delete dir_;
  }
  void Put(const json& suite) {
    net::Client c(d_->url(), "");
    auto r = c.Send("PUT", "/api/v1/suites/" + suite["name"].get<std::string>(), suite.dump());
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
  }
  // Runs the suite with `parameters` and returns the one trial's full JSON.
  json RunOne(const std::string& suite, const json& parameters) {
    json s = d_->PostJson("/api/v1/sweeps", {{"suite", suite}, {"parameters", parameters}, {"reuse", false}}, 201);
    d_->WaitSweep(s["id"], std::chrono::seconds(120));
    json items = d_->GetJson("/api/v1/trials?sweep=" + s["id"].dump())["items"];
    EXPECT_EQ(items.size(), 1u);
    return items.empty() ? json() : d_->GetJson("/api/v1/trials/" + items[0]["id"].dump());
  }
  // The case called `name`; console node ids are relative to the stage's working folder
  // ("../../src/tests/test_kernels.py::test_x"), so a name that ends in "/" + `name` matches too.
  static const json* Case(const json& trial, const std::string& name) {
    for (const json& c : trial["tests"]["cases"]) {
      const std::string n = c.value("name", "");
      if (n == name || n.ends_with("/" + name)) return &c;
    }
    return nullptr;
  }
  // The case's field, or "<no case NAME>" when the trial has no such case (the test then fails, readably).
  static json Field(const json& trial, const std::string& name, const std::string& field) {
    const json* c = Case(trial, name);
    return c ? c->value(field, json()) : json("<no case " + name + ">");
  }
  static TempDir* dir_;
  static Daemon* d_;
  static Child* worker_;
};
TempDir* TestRunnerTest::dir_ = nullptr;
Daemon* TestRunnerTest::d_ = nullptr;
Child* TestRunnerTest::worker_ = nullptr;

TEST_F(TestRunnerTest, PytestJUnitFileJudgesEveryCase) {
  if (!HavePytest()) GTEST_SKIP() << "python3-pytest is not installed (scripts/install-test-deps.sh installs it)";
  Put(PytestSuite("pytest-junit", true));
  json t = RunOne("pytest-junit", {{"select", "test_"}});
  ASSERT_TRUE(t.is_object());
  // The worst case decides: a tolerance assert (wrong_output) over a refusal and a skip.
  EXPECT_EQ(t["verdict"], "wrong_output") << t.dump();
  EXPECT_EQ(t["signature"], "wrong_output:AssertionError:rel_err=<n> exceeds tolerance <n>e-<n>@test_kernels.py")
      << t.dump();
  const json& tests = t["tests"];
  EXPECT_EQ(tests["total"], 4) << tests.dump();
  EXPECT_EQ(tests["counts"], json({{"passed", 1}, {"unsupported", 2}, {"wrong_output", 1}})) << tests.dump();
  const json* skip = Case(t, "test_kernels.test_nvfp4_gemm");
  ASSERT_NE(skip, nullptr) << tests.dump();
  EXPECT_EQ((*skip)["verdict"], "unsupported");
  EXPECT_EQ((*skip)["outcome"], "skipped");
  EXPECT_EQ((*skip)["signature"], "unsupported:skipped:NVFP4 GEMM requires compute capability <n> (found <n>)");
  EXPECT_NE((*skip)["evidence"].get<std::string>().find("requires compute capability 10.0"), std::string::npos);
  const json* fp8 = Case(t, "test_kernels.test_fp8_addmm");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ((*fp8)["verdict"], "unsupported") << fp8->dump();
  EXPECT_EQ((*fp8)["signature"], "unsupported:dtype");
  EXPECT_EQ(Field(t, "test_kernels.test_bf16_tolerance", "verdict"), "wrong_output");
  EXPECT_EQ(Field(t, "test_kernels.test_fp16_gemm", "verdict"), "passed");
  EXPECT_EQ(Field(t, "test_kernels.test_fp16_gemm", "stage"), "pytest");
  // The stage's entry in the result carries the runner's own counts.
  EXPECT_EQ(t["result"]["stages"][0]["tests"]["runner_counts"]["skipped"], 1) << t["result"].dump();

  // The CLI prints them, the ones that did not pass first.
  Out o = RunProgram(*dir_, {GauntletBin(), "logs", t["id"].dump(), "--tests", "--server", d_->url()});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("4 tests (1 passed, 2 unsupported, 1 wrong_output)"), std::string::npos) << o.out;
  EXPECT_LT(o.out.find("test_kernels.test_fp8_addmm"), o.out.find("test_kernels.test_fp16_gemm")) << o.out;
  // And the log says it too, for `gauntlet logs N`.
  Out log = RunProgram(*dir_, {GauntletBin(), "logs", t["id"].dump(), "--server", d_->url()});
  EXPECT_NE(log.out.find("=== stage pytest tests (junit): 1 passed, 2 unsupported, 1 wrong_output"), std::string::npos)
      << log.out;
}

TEST_F(TestRunnerTest, PytestConsoleAloneIsReadTheSameWay) {
  if (!HavePytest()) GTEST_SKIP() << "python3-pytest is not installed (scripts/install-test-deps.sh installs it)";
  Put(PytestSuite("pytest-console", false));
  json t = RunOne("pytest-console", {{"select", "test_"}});
  EXPECT_EQ(t["verdict"], "wrong_output") << t.dump();
  EXPECT_EQ(Field(t, "test_kernels.py::test_fp8_addmm", "verdict"), "unsupported") << t["tests"].dump();
  EXPECT_EQ(Field(t, "test_kernels.py::test_bf16_tolerance", "verdict"), "wrong_output");
  const json* skip = Case(t, "test_kernels.py:10");
  ASSERT_NE(skip, nullptr) << t["tests"].dump();
  EXPECT_EQ((*skip)["verdict"], "unsupported");
  // The issue's first finding: pytest exits 0 having only skipped; that is not a pass.
  json only = RunOne("pytest-console", {{"select", "nvfp4"}});
  EXPECT_EQ(only["verdict"], "unsupported") << only.dump();
  EXPECT_EQ(only["signature"], "unsupported:skipped:NVFP4 GEMM requires compute capability <n> (found <n>)");
  EXPECT_EQ(only["result"]["stages"][0]["exit_code"], 0);
}

// Real CTest, as kernel projects run their test programs (docs/CLASSIFIER.md "Test runners"): a pass,
// a program that checks its result against a reference and prints the mismatch, and one that needs
// hardware this machine lacks and skips through SKIP_RETURN_CODE (CTest: "***Skipped", yet "100%
// tests passed"). Built here with CMake and the C compiler the build uses.
TEST_F(TestRunnerTest, CtestReportsJudgeKernelPrograms) {
  if (!HaveCtest()) GTEST_SKIP() << "cmake/ctest is not installed";
  const std::string src = dir_->path() + "/ctest-src", bin = dir_->path() + "/ctest-build";
  ASSERT_TRUE(BuildCtestProject(src, bin));
  json stage = {{"name", "ctest"}, {"kind", "command"}, {"timeout_s", 120},
                {"argv", {"ctest", "--test-dir", bin, "-R", "{case}", "--output-on-failure"}}};
  Put({{"name", "ctest-kernels"}, {"parameters", {{"case", {"^ok$", "^wrong$", "^needs_sm100$", "."}}}}, {"stages", {stage}}});
  json ok = RunOne("ctest-kernels", {{"case", "^ok$"}});
  EXPECT_EQ(ok["verdict"], "passed") << ok.dump();
  json wrong = RunOne("ctest-kernels", {{"case", "^wrong$"}});
  EXPECT_EQ(wrong["verdict"], "wrong_output") << wrong.dump();
  EXPECT_EQ(wrong["basis"], "runner");
  json skip = RunOne("ctest-kernels", {{"case", "^needs_sm100$"}});
  EXPECT_EQ(skip["verdict"], "unsupported") << skip.dump();  // "100% tests passed", exit 0: a skip all the same
  EXPECT_EQ(skip["result"]["stages"][0]["exit_code"], 0);
  json all = RunOne("ctest-kernels", {{"case", "."}});
  EXPECT_EQ(all["verdict"], "wrong_output") << all.dump();  // the worst case decides
  EXPECT_EQ(all["tests"]["total"], 3) << all["tests"].dump();
}

// pytest -ra with a JUnit file, as kernel projects run it: a non-strict xfail that passes on this
// machine (pytest's XPASS, whose reason names an arch) is a pass, not an arch refusal.
TEST_F(TestRunnerTest, AnXpassIsAPass) {
  if (!HavePytest()) GTEST_SKIP() << "python3-pytest is not installed (scripts/install-test-deps.sh installs it)";
  const std::string file = dir_->path() + "/test_xpass.py";
  std::ofstream(file) << "import pytest\n\n@pytest.mark.xfail(reason=\"wrong on sm_90 before the fix (requires sm_100)\", strict=False)\n"
                         "def test_matmul():\n    assert 2 + 2 == 4\n\ndef test_add():\n    assert 1 + 1 == 2\n";
  json stage = {{"name", "pytest"}, {"kind", "command"}, {"timeout_s", 120},
                {"argv", {kPython, "-m", "pytest", "-p", "no:cacheprovider", "-c", "/dev/null", "-ra", file,
                          "--junitxml={workdir}/junit.xml", "-k", "{select}"}},
                {"junit", "{workdir}/junit.xml"}, {"env", {{"PYTHONDONTWRITEBYTECODE", "1"}}}};
  Put({{"name", "pytest-xpass"}, {"parameters", {{"select", {"test_"}}}}, {"stages", {stage}}});
  json t = RunOne("pytest-xpass", {{"select", "test_"}});
  EXPECT_EQ(t["verdict"], "passed") << t.dump();
}

TEST_F(TestRunnerTest, GoogleTestXmlJudgesEveryCase) {
  json stage = {{"name", "gtest"}, {"kind", "command"}, {"timeout_s", 60},
                {"argv", {GAUNTLET_GTEST_FIXTURE, "--gtest_output=xml:{workdir}/gtest.xml", "--gtest_filter={filter}"}},
                {"junit", "{workdir}/gtest.xml"}};
  Put({{"name", "gtest-kernels"}, {"parameters", {{"filter", {"*", "Nope*"}}}}, {"stages", {stage}}});
  json t = RunOne("gtest-kernels", {{"filter", "*"}});
  EXPECT_EQ(t["verdict"], "wrong_output") << t.dump();
  EXPECT_EQ(t["tests"]["total"], 4) << t["tests"].dump();
  EXPECT_EQ(Field(t, "Nvfp4Gemm.RequiresSm100", "verdict"), "unsupported");
  EXPECT_EQ(Field(t, "Bf16Gemm.WithinTolerance", "verdict"), "wrong_output");
  EXPECT_EQ(Field(t, "Fp16Gemm.Matches", "verdict"), "passed");
  EXPECT_EQ(Field(t, "Fp8Gemm.Throws", "signature"), "unsupported:no_kernel_image");
  EXPECT_EQ(Case(t, "Fp8Gemm.DISABLED_Later"), nullptr) << "a disabled test did not run";
  // A filter that matches nothing: GoogleTest exits 0 with "0 tests"; never a pass.
  json none = RunOne("gtest-kernels", {{"filter", "Nope*"}});
  EXPECT_EQ(none["verdict"], "crashed") << none.dump();
  EXPECT_EQ(none["signature"], "crashed:no_tests");
}

TEST_F(TestRunnerTest, AMissingOrSymlinkedJUnitFileFailsTheStage) {
  auto stage = [](const std::string& script) {
    return json{{"name", "run"}, {"kind", "command"}, {"timeout_s", 30}, {"argv", {"sh", "-c", script}},
                {"junit", "{workdir}/junit.xml"}};
  };
  Put({{"name", "junit-missing"}, {"parameters", {{"x", {"1"}}}}, {"stages", {stage("echo ran")}}});
  json t = RunOne("junit-missing", {{"x", "1"}});
  EXPECT_EQ(t["verdict"], "crashed") << t.dump();
  EXPECT_EQ(t["signature"], "crashed:junit_unreadable");
  EXPECT_NE(t["result"]["evidence"].get<std::string>().find("junit.xml: missing"), std::string::npos) << t.dump();
  Put({{"name", "junit-link"}, {"parameters", {{"x", {"1"}}}},
       {"stages", {stage("ln -s " + KernelsFile() + " \"$GAUNTLET_WORKDIR/junit.xml\"")}}});
  json l = RunOne("junit-link", {{"x", "1"}});
  EXPECT_EQ(l["signature"], "crashed:junit_unreadable") << l.dump();
  EXPECT_NE(l["result"]["evidence"].get<std::string>().find("symlink"), std::string::npos) << l.dump();
  Put({{"name", "junit-garbled"}, {"parameters", {{"x", {"1"}}}},
       {"stages", {stage("printf '<testsuites><testcase name=' > \"$GAUNTLET_WORKDIR/junit.xml\"")}}});
  json g = RunOne("junit-garbled", {{"x", "1"}});
  EXPECT_EQ(g["signature"], "crashed:junit_unreadable") << g.dump();
  EXPECT_NE(g["result"]["evidence"].get<std::string>().find("not well-formed XML"), std::string::npos) << g.dump();
}

TEST_F(TestRunnerTest, ABadJUnitFieldIsRefusedAtRegistration) {
  net::Client c(d_->url(), "");
  for (const json& bad : {json(5), json(""), json("{nope}/junit.xml")}) {
    json suite = {{"name", "bad-junit"}, {"parameters", {{"x", {"1"}}}},
                  {"stages", {{{"name", "s"}, {"kind", "command"}, {"argv", {"true"}}, {"junit", bad}}}}};
    auto r = c.Send("PUT", "/api/v1/suites/bad-junit", suite.dump());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 422) << bad.dump() << ": " << r->body;
    EXPECT_EQ(json::parse(r->body)["field"], "stages[0].junit") << r->body;
  }
  // A server stage has no test runner's file.
  json server = {{"name", "bad-junit"}, {"parameters", {{"x", {"1"}}}},
                 {"stages", {{{"name", "s"}, {"kind", "server"}, {"argv", {"true", "{port}"}}, {"junit", "a.xml"}}}}};
  auto r = c.Send("PUT", "/api/v1/suites/bad-junit", server.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 422) << r->body;
}

TEST(JUnitFile, RefusesWhatIsNotARegularFileOrTooBig) {
  TempDir dir;
  const std::string p = dir.path() + "/j.xml";
  EXPECT_NE(worker::ReadJUnitFile(p).status().message().find("missing"), std::string::npos);
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  EXPECT_NE(worker::ReadJUnitFile(p).status().message().find("not a regular file"), std::string::npos) << "a FIFO never hangs it";
  std::filesystem::remove(p);
  std::filesystem::create_directory(p);
  EXPECT_FALSE(worker::ReadJUnitFile(p).ok());
  std::filesystem::remove(p);
  {
    std::ofstream f(p);
    f << "<testsuite>";
    f << std::string(worker::kMaxJUnitBytes, ' ');
    f << "</testsuite>";
  }
  EXPECT_NE(worker::ReadJUnitFile(p).status().message().find("larger than 16 MiB"), std::string::npos);
  {
    std::ofstream f(p, std::ios::trunc);
    f << "<testsuite><testcase classname=\"a\" name=\"b\"/></testsuite>";
  }
  auto ok = worker::ReadJUnitFile(p);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->cases.size(), 1u);
}

}  // namespace
}  // namespace gauntlet::test
