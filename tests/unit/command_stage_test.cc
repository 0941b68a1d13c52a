// The command stage's judgement with scripted processes (tests/support/fake_process_runner.h): how
// a program's output, exit and result file become the stage's verdict, signature and metrics, and
// that the stage's process never outlives it. The real fork/exec path is covered by the
// integration tests (fleet_test, bringup_test).
#include "workers/command_stage.h"
#include "workers/test_outcomes.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "workers/result_file.h"

#include "tests/support/fake_process_runner.h"
#include "tests/support/harness.h"

namespace gauntlet {
using proc::ProcessSpec;
using classifier::ClassifyText;
using classifier::Classification;
using classifier::ExitInfo;
namespace {
using nlohmann::json;

class CommandStageTest : public ::testing::Test {
 protected:
  CommandStageTest() {
    ctx.trial = 42;
    ctx.node_name = "n1";
    ctx.workdir = dir.path();
    ctx.log = &log;
    ctx.processes = &runner;
  }
  worker::StageOutcome Run(const json& stage) { return worker::RunCommandStage(ctx, stage, {}); }
  std::string Log() { return log.Peek(1 << 20).second; }

  test::TempDir dir;
  worker::LogSink log;
  test::FakeProcessRunner runner;
  worker::TrialContext ctx;
};

// The stdout metrics line is advisory: its verdict counts only when it is a verdict's name; any
// other text leaves the verdict unset (the exit status and the log decide), never a default one.
TEST(ReadMetrics, AStdoutLinesVerdictIsParsedOrLeftUnset) {
  test::TempDir dir;
  const std::string none = dir.path() + "/absent.json";
  worker::StageOutcome out;
  std::optional<Verdict> v;
  std::string detail;
  EXPECT_EQ(worker::ReadMetrics(none, R"({"metrics": {"x": 1}, "verdict": "oom", "detail": "d"})", &out, &v, &detail), "");
  EXPECT_EQ(v, Verdict::kOom);
  EXPECT_EQ(detail, "d");
  v.reset();
  EXPECT_EQ(worker::ReadMetrics(none, R"({"metrics": {"x": 1}, "verdict": "fine"})", &out, &v, &detail), "");
  EXPECT_FALSE(v.has_value());
  // A result file's unknown verdict is an error the stage reports (ABrokenResultFileFailsTheStageWithTheReason).
  std::ofstream(dir.path() + "/r.json") << R"({"verdict": "Passed"})";
  EXPECT_NE(worker::ReadMetrics(dir.path() + "/r.json", "", &out, &v, &detail).find("'Passed' is not one of"), std::string::npos);
  EXPECT_FALSE(v.has_value());
}

TEST_F(CommandStageTest, TracebackAndExitOneIsCrashedWithTheClassifiersSignature) {
  const std::string out =
      "loading\nTraceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\n    main()\n"
      "  File \"/app/run.py\", line 2, in main\n    raise RuntimeError(\"CUTLASS kernel failed: Error Internal\")\n"
      "RuntimeError: CUTLASS kernel failed: Error Internal\n";
  test::FakeProgram p;
  p.output = {out.substr(0, 20), out.substr(20)};  // a line split across reads must not matter
  p.exit_code = 1;
  runner.Add("gemm", p);

  worker::StageOutcome o = Run({{"name", "kernel"}, {"argv", {"gemm"}}});

  ExitInfo ei;
  ei.exit_code = 1;
  const Classification expected = ClassifyText(out, ei);
  EXPECT_EQ(o.verdict, Verdict::kCrashed);
  EXPECT_EQ(o.signature, expected.signature);
  EXPECT_EQ(o.signature.rfind("crashed:RuntimeError:", 0), 0u) << o.signature;
  EXPECT_EQ(o.evidence, "RuntimeError: CUTLASS kernel failed: Error Internal");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(Log().find(out), std::string::npos) << "the whole output reaches the trial log";
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(CommandStageTest, ResultFileVerdictIsHonouredOverTheExitStatus) {
  test::FakeProgram p;
  p.exit_code = 0;
  p.on_start = [](const ProcessSpec& spec) {
    std::ofstream(spec.env.at("GAUNTLET_RESULT_FILE"))
        << R"({"verdict": "wrong_output", "detail": "max error 0.5 over tolerance 0.01", "metrics": {"max_err": 0.5}})";
  };
  runner.Add("check", p);

  worker::StageOutcome o = Run({{"name", "accuracy"}, {"argv", {"check"}}});

  EXPECT_EQ(o.verdict, Verdict::kWrongOutput);
  EXPECT_EQ(o.signature, "wrong_output:accuracy");
  EXPECT_EQ(o.evidence, "max error 0.5 over tolerance 0.01");
  EXPECT_EQ(o.metrics["max_err"]["value"], 0.5);
}

TEST_F(CommandStageTest, AResultFileCannotClaimTheSchedulersVerdicts) {
  test::FakeProgram p;
  p.exit_code = 3;
  p.on_start = [](const ProcessSpec& spec) {
    std::ofstream(spec.env.at("GAUNTLET_RESULT_FILE")) << R"({"verdict": "skipped"})";
  };
  runner.Add("sly", p);

  worker::StageOutcome o = Run({{"name", "s"}, {"argv", {"sly"}}});

  EXPECT_EQ(o.verdict, Verdict::kCrashed) << "a file naming a verdict it may not is a broken file";
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_NE(o.evidence.find("'skipped' is not one of"), std::string::npos) << o.evidence;
}

// A result file that cannot be read never turns a run into a pass, whatever the exit status: the
// stage fails and its evidence says what was wrong with the file.
TEST_F(CommandStageTest, ABrokenResultFileFailsTheStageWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"{\"verdict\": \"passed\", \"detail\": \"\xff\xfe\"}", "not valid JSON (or not UTF-8)"},
      {"{\"verdict\": \"passed\", ", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {"{\"verdict\": \"fine\"}", "'fine' is not one of"},
      {"{\"verdict\": 1}", "verdict is not a string"},
  };
  for (const auto& [text, why] : broken) {
    test::FakeProgram p;
    p.exit_code = 0;
    p.on_start = [text = text](const ProcessSpec& spec) { std::ofstream(spec.env.at("GAUNTLET_RESULT_FILE")) << text; };
    runner.Add("broken", p);
    worker::StageOutcome o = Run({{"name", "s"}, {"argv", {"broken"}}});
    EXPECT_EQ(o.verdict, Verdict::kCrashed) << text;
    EXPECT_EQ(o.signature, "crashed:bad_result_file") << text;
    EXPECT_NE(o.evidence.find(why), std::string::npos) << text << " -> " << o.evidence;
  }
}

// Issue 31: the stage writes GAUNTLET_RESULT_FILE, so it may put anything at that name. A link to
// /dev/zero or a 1 GiB sparse file filled the worker's memory, a FIFO wedged it past every timeout,
// a link to a JSON file outside the workdir turned exit 1 into passed. Each is refused, at once,
// with the reason in the evidence; real files, links and FIFOs on disk.
TEST_F(CommandStageTest, AResultFileThatIsNotABoundedRegularFileInTheWorkdirFailsTheStage) {
  test::TempDir outside;
  const std::string foreign = outside.path() + "/passed.json";
  std::ofstream(foreign) << R"({"verdict": "passed", "detail": "not this stage's"})";
  struct Case {
    std::string name;
    std::function<void(const std::string&)> make;
    int exit_code;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"link to /dev/zero", [](const std::string& f) { ASSERT_EQ(symlink("/dev/zero", f.c_str()), 0); }, 0,
       "is a symbolic link"},
      {"FIFO with no writer", [](const std::string& f) { ASSERT_EQ(mkfifo(f.c_str(), 0600), 0); }, 0, "is a FIFO"},
      {"1 GiB sparse file",
       [](const std::string& f) {
         std::ofstream(f) << "{";
         ASSERT_EQ(truncate(f.c_str(), off_t{1} << 30), 0);
       },
       0, "over the limit of 1048576 bytes"},
      {"link to a JSON file outside the workdir",
       [&](const std::string& f) { ASSERT_EQ(symlink(foreign.c_str(), f.c_str()), 0); }, 1, "is a symbolic link"},
      {"a directory", [](const std::string& f) { ASSERT_EQ(mkdir(f.c_str(), 0700), 0); }, 0, "is a directory"},
  };
  for (const auto& c : cases) {
    test::FakeProgram p;
    p.exit_code = c.exit_code;
    p.on_start = [&c](const ProcessSpec& spec) { c.make(spec.env.at("GAUNTLET_RESULT_FILE")); };
    runner.Add("writer", p);
    worker::StageOutcome o = Run({{"name", "s"}, {"argv", {"writer"}}});
    EXPECT_NE(o.verdict, Verdict::kPassed) << c.name;
    if (c.exit_code == 0) EXPECT_EQ(o.signature, "crashed:bad_result_file") << c.name;
    EXPECT_NE(o.evidence.find(c.why), std::string::npos) << c.name << " -> " << o.evidence;
    std::error_code ec;
    std::filesystem::remove_all(dir.path() + "/s.result.json", ec);
  }
  // A file at the limit is read; one byte over is refused.
  worker::StageOutcome out;
  std::optional<Verdict> v;
  std::string detail;
  const std::string at_limit = dir.path() + "/limit.json";
  std::string text = R"({"verdict": "passed", "detail": ")";
  text += std::string(worker::kResultFileMaxBytes - text.size() - 2, 'x') + "\"}";
  std::ofstream(at_limit) << text;
  EXPECT_EQ(worker::ReadMetrics(at_limit, "", &out, &v, &detail, dir.path()), "");
  EXPECT_EQ(v, Verdict::kPassed);
  std::ofstream(at_limit, std::ios::app) << " ";
  EXPECT_NE(worker::ReadMetrics(at_limit, "", &out, &v, &detail, dir.path()).find("over the limit"), std::string::npos);
  // A file of the right kind but outside the workdir (a stage name with a slash, say) is refused.
  EXPECT_NE(worker::ReadMetrics(foreign, "", &out, &v, &detail, dir.path()).find("not inside the trial's workdir"),
            std::string::npos);
}

// With a trial user, only a file that user wrote is the trial's: one its neighbour or the worker
// wrote into its folder is refused with who wrote it (docs/DECISIONS.md "A stage is not the worker").
TEST_F(CommandStageTest, AResultFileWrittenByAnotherUserIsRefused) {
  const std::string file = dir.path() + "/run.result.json";
  std::ofstream(file) << R"({"verdict": "passed"})";
  worker::StageOutcome out;
  std::optional<Verdict> v;
  std::string detail;
  const uid_t me = geteuid();
  EXPECT_EQ(worker::ReadMetrics(file, "", &out, &v, &detail, dir.path(), me), "");
  EXPECT_EQ(v, Verdict::kPassed);
  v.reset();
  const std::string refused = worker::ReadMetrics(file, "", &out, &v, &detail, dir.path(), me + 1);
  EXPECT_NE(refused.find("was written by user " + std::to_string(me) + ", not by this trial's user (" +
                         std::to_string(me + 1) + ")"),
            std::string::npos)
      << refused;
  EXPECT_FALSE(v.has_value());
}

TEST_F(CommandStageTest, MetricsComeFromTheLastJsonLine) {
  test::FakeProgram p;
  p.output = {"warming up\n{\"metrics\": {\"gflops\": 1}}\n", "{\"metrics\": {\"gflops\": 12.5, ",
              "\"tflops\": {\"value\": 2, \"unit\": \"TFLOP/s\"}}}\r\n"};
  runner.Add("bench", p);

  worker::StageOutcome o = Run({{"name", "perf"}, {"argv", {"bench"}}});

  EXPECT_EQ(o.verdict, Verdict::kPassed);
  EXPECT_TRUE(o.signature.empty());
  EXPECT_EQ(o.metrics["gflops"]["value"], 12.5);
  EXPECT_EQ(o.metrics["tflops"]["unit"], "TFLOP/s");
}

TEST_F(CommandStageTest, AMissingProgramIsTheNodesInfraErrorNamingIt) {
  worker::StageOutcome o = Run({{"name", "s"}, {"argv", {"no-such-tool"}}});

  // The node lacks it: not the configuration's crash, and the trial runs elsewhere.
  EXPECT_EQ(o.verdict, Verdict::kInfraError);
  EXPECT_EQ(o.signature, "infra_error:program_not_found:no-such-tool");
  EXPECT_NE(o.evidence.find("no-such-tool"), std::string::npos);
  EXPECT_NE(Log().find("gauntlet: " + o.evidence), std::string::npos);
}

TEST_F(CommandStageTest, AStageThatOutlivesItsTimeoutIsStoppedAndTimedOut) {
  test::FakeProgram p;
  p.output = {"step 1\n"};
  p.until_stopped = true;
  runner.Add("hang", p);

  worker::StageOutcome o = Run({{"name", "soak"}, {"argv", {"hang"}}, {"timeout_s", 0}});

  EXPECT_EQ(o.verdict, Verdict::kTimeout);
  EXPECT_EQ(o.signature, "timeout:soak");
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(CommandStageTest, AStopRequestCancelsTheStageAndStopsItsProcess) {
  test::FakeProgram p;
  p.until_stopped = true;
  runner.Add("serve-forever", p);
  ctx.should_stop = [] { return true; };

  worker::StageOutcome o = Run({{"name", "s"}, {"argv", {"serve-forever"}}});

  EXPECT_EQ(o.verdict, Verdict::kCancelled);
  EXPECT_EQ(o.signature, "cancelled:stopped");
  EXPECT_EQ(runner.stopped(), 1);
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(CommandStageTest, ArgvAndEnvironmentCarryTheConfigAndTheTrial) {
  runner.Add("gemm", {});
  ctx.config = {{"backend", "cutlass"}};
  ctx.gpus = {3};
  ctx.pass_env = {};

  Run({{"name", "k"}, {"argv", {"gemm", "--backend={backend}", "--trial={trial_id}"}}, {"env", {{"MODE", "{backend}-x"}}}});

  ASSERT_EQ(runner.started().size(), 1u);
  const ProcessSpec spec = runner.started()[0];
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"gemm", "--backend=cutlass", "--trial=42"}));
  EXPECT_EQ(spec.cwd, dir.path());
  EXPECT_EQ(spec.env.at("GAUNTLET_PARAM_BACKEND"), "cutlass");
  EXPECT_EQ(spec.env.at("CUDA_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(spec.env.at("GAUNTLET_TRIAL_ID"), "42");
  EXPECT_EQ(spec.env.at("GAUNTLET_RESULT_FILE"), dir.path() + "/k.result.json");
  EXPECT_EQ(spec.env.at("MODE"), "cutlass-x");
}

}  // namespace
}  // namespace gauntlet

namespace gauntlet {
namespace {
// A test keeps its name across suite versions: the bundle folder a pushed suite runs from (its hash)
// is cut from the front of a pytest JUnit classname or node id, and nothing else is.
TEST(StableCaseName, TheSuiteFolderIsCutFromATestsName) {
  const std::string dir = "/var/lib/gauntlet/work/bundles/53eac84c9f";
  EXPECT_EQ(worker::StableCaseName("bundles.53eac84c9f.test_kernels.test_tolerance", dir), "test_kernels.test_tolerance");
  EXPECT_EQ(worker::StableCaseName("bundles/53eac84c9f/test_kernels.py::test_tolerance", dir), "test_kernels.py::test_tolerance");
  EXPECT_EQ(worker::StableCaseName("53eac84c9f.test_kernels.test_tolerance", dir), "test_kernels.test_tolerance");
  EXPECT_EQ(worker::StableCaseName("test_kernels.test_tolerance", dir), "test_kernels.test_tolerance");
  EXPECT_EQ(worker::StableCaseName("VecAdd.Small", dir), "VecAdd.Small");
  EXPECT_EQ(worker::StableCaseName("bundles.other.test_x", dir), "bundles.other.test_x");
  EXPECT_EQ(worker::StableCaseName("bundles.53eac84c9f.", dir), "bundles.53eac84c9f.");  // nothing left: kept whole
  EXPECT_EQ(worker::StableCaseName("x", ""), "x");
}
}  // namespace
}  // namespace gauntlet
