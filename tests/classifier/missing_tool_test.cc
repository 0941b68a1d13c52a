// A program or test runner the node lacks, as the program that looked for it words it (classifier/
// missing_tool_rule.cc): CPython's -m, dash, bash and env(1). The node's infra_error, naming what is
// missing; the same words elsewhere in a line are nothing.
#include <gtest/gtest.h>

#include "classifier/classifier.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {
Classification JudgeMissing(const std::string& log, int exit_code) { return ClassifyText(log, ExitCode(exit_code)); }
}  // namespace

TEST(MissingTool, ARunnerOrProgramTheNodeLacksIsItsInfraErrorNamingIt) {
  struct Case {
    const char* log;
    int exit;
    const char* signature;
  } cases[] = {
      // python3 -m pytest on a node without pytest (runpy, through Modules/main.c).
      {"/usr/bin/python3: No module named pytest\n", 1, "infra_error:runner_missing:pytest"},
      {"/opt/conda/bin/python3.11: Error while finding module specification for 'torch.distributed.run' "
       "(ModuleNotFoundError: No module named 'torch')\n",
       1, "infra_error:runner_missing:torch"},
      // dash and bash, when a script's command is not on PATH.
      {"+ ctest --output-on-failure\nsh: 1: ctest: not found\n", 127, "infra_error:program_not_found:ctest"},
      {"/bin/sh: 1: exec: nvcc: not found\n", 127, "infra_error:program_not_found:nvcc"},
      {"bash: line 1: pytest: command not found\n", 127, "infra_error:program_not_found:pytest"},
      // A shebang's env(1), in the C and in a UTF-8 locale.
      {"/usr/bin/env: 'python3': No such file or directory\n", 127, "infra_error:program_not_found:python3"},
      {"/usr/bin/env: \xe2\x80\x98python\xe2\x80\x99: No such file or directory\n", 127, "infra_error:program_not_found:python"},
      // CTest in a build folder another trial's user made its Testing/ in: no test ran.
      {"Test project /tmp/b\nCMake Error: Cannot open file for write: /tmp/b/Testing/Temporary/LastTest.log.tmp\n"
       "CMake Error: : System Error: Permission denied\nProblem opening file: /tmp/b/Testing/Temporary/LastTest.log\n"
       "Cannot create log file: LastTest.log\nErrors while running CTest\n",
       8, "infra_error:runner_cannot_write:ctest"},
  };
  for (const Case& c : cases) {
    const Classification r = JudgeMissing(c.log, c.exit);
    EXPECT_EQ(r.verdict, Verdict::kInfraError) << c.log << ToJson(r).dump();
    EXPECT_EQ(r.signature, c.signature) << c.log << ToJson(r).dump();
  }
}

TEST(MissingTool, TheSameWordsElsewhereAreNoMissingTool) {
  for (const char* log : {
           // A missing module inside a program is the program's own matter (a traceback judges it).
           "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    import foo\n"
           "ModuleNotFoundError: No module named 'foo'\n",
           // A file, not a program, that is not there.
           "cat: /data/input.bin: No such file or directory\n",
           "error: config key 'backend' not found\n",
       }) {
    const Classification r = JudgeMissing(log, 1);
    EXPECT_EQ(r.signature.find("program_not_found"), std::string::npos) << log << ToJson(r).dump();
    EXPECT_EQ(r.signature.find("runner_missing"), std::string::npos) << log << ToJson(r).dump();
  }
  // A helper a script ran printed it harmlessly; the program's own failure after it decides.
  const Classification later = JudgeMissing(
      "sh: 1: git: not found\nTraceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
      "    main()\nRuntimeError: CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx\n", 1);
  EXPECT_NE(later.verdict, Verdict::kInfraError) << ToJson(later).dump();
  EXPECT_EQ(later.signature.find("program_not_found"), std::string::npos) << ToJson(later).dump();
}
