// The fixture server's failure modes classify as its docstring promises (the integration test of
// daemon + worker relies on these verdicts and signatures).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "classifier/classifier.h"

namespace {

struct CommandResult {
  std::string output;
  int exit_code = -1;
};

CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

bool HavePython() { return RunCommand("python3 -c 'print(1)' 2>/dev/null").output == "1\n"; }

const std::string kServer = std::string(GAUNTLET_CLASSIFIER_FIXTURES) + "/openai_server.py";

gauntlet::classifier::Classification ClassifyMode(const std::string& mode) {
  CommandResult r = RunCommand("python3 " + kServer + " --port 0 --mode " + mode + " 2>&1");
  gauntlet::classifier::ExitInfo exit;
  exit.exit_code = r.exit_code;
  return gauntlet::classifier::ClassifyText(r.output, exit);
}

}  // namespace

TEST(FixtureModes, LoadFailuresClassifyAsDocumented) {
  if (!HavePython()) GTEST_SKIP() << "python3 not available";
  auto crash = ClassifyMode("crash_on_load");
  EXPECT_EQ(crash.verdict, gauntlet::Verdict::kCrashed);
  EXPECT_EQ(crash.signature, "crashed:KeyError:'model.layers.<n>.self_attn.qkv_proj.weight_scale'@weight_utils.py");
  auto refuse = ClassifyMode("refuse_arch");
  EXPECT_EQ(refuse.verdict, gauntlet::Verdict::kUnsupported);
  EXPECT_EQ(refuse.signature,
            "unsupported:RuntimeError:FlashInfer TRTLLM-gen fused MoE is only supported on SM100 and SM103 "
            "(compute capability <n>.x), got SM90@core.py");
  auto oom = ClassifyMode("oom");
  EXPECT_EQ(oom.verdict, gauntlet::Verdict::kOom);
  EXPECT_EQ(oom.signature, "oom:cuda");
}

TEST(FixtureModes, CrashOnRequestTracebackClassifies) {
  if (!HavePython()) GTEST_SKIP() << "python3 not available";
  CommandResult r = RunCommand("python3 -c \"import sys; sys.path.insert(0, '" + std::string(GAUNTLET_CLASSIFIER_FIXTURES) +
                     "'); import openai_server as s; sys.stdout.write(s.stamped(s.CRASH_ON_REQUEST))\"");
  gauntlet::classifier::ExitInfo exit;
  exit.exit_code = 1;
  auto c = gauntlet::classifier::ClassifyText(r.output, exit);
  EXPECT_EQ(c.verdict, gauntlet::Verdict::kCrashed);
  EXPECT_EQ(c.signature, "crashed:illegal_memory_access");
}
