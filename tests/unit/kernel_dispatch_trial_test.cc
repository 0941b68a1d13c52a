// The worker's side of the kernel recorder (issue 30) through RunTrial, over the fakes of its two
// seams: which stages get CUDA_INJECTION64_PATH, and what a trial reports once its processes wrote
// their records. The scripted processes write record files where the real recorder would
// ($GAUNTLET_KERNREC_DIR), copied from tests/fixtures/kernrec/ (the recorder's own format).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/trial_rig.h"
#include "workers/kernel_recording.h"
#include "workers/trial_runner.h"

namespace gauntlet {
namespace {
using nlohmann::json;

const json kDispatch = {{"backend", {{"flash", "pytorch_flash::|flash_fwd"}, {"efficient", "fmha_cutlassF"}}}};

class KernelDispatchTrialTest : public ::testing::Test, protected test::TrialRig {
 protected:
  KernelDispatchTrialTest() { env.kernel_recorder = "/opt/gauntlet/bin/libgauntlet_kernrec.so"; }
  static json Grant(int64_t trial, json stage, const std::string& backend, json gpus = json::array({0})) {
    return TrialRig::Grant(trial, {stage}, {{"backend", backend}}, gpus);
  }
  static json Stage(bool with_dispatch = true) {
    json s = {{"name", "sdpa"}, {"kind", "command"}, {"argv", {"sdpa"}}, {"timeout_s", 10}};
    if (with_dispatch) s["dispatch"] = kDispatch;
    return s;
  }
  // A program that passes and leaves these fixture records where the recorder would.
  void Program(const std::vector<std::string>& fixtures) {
    test::FakeProgram p;
    p.output = {"ok\n"};
    p.on_start = [fixtures](const proc::ProcessSpec& spec) {
      auto it = spec.env.find("GAUNTLET_KERNREC_DIR");
      if (it == spec.env.end()) return;
      int pid = 100;
      for (auto& f : fixtures) {
        std::ifstream in(test::SourceDir() + "/tests/fixtures/kernrec/" + f);
        std::ofstream(it->second + "/kernrec." + std::to_string(pid++) + ".txt") << in.rdbuf();
      }
    };
    runner.Add("sdpa", p);
  }
  proc::ProcessSpec Started() {
    auto all = runner.started();
    EXPECT_FALSE(all.empty());
    return all.empty() ? proc::ProcessSpec{} : all.back();
  }
};

TEST_F(KernelDispatchTrialTest, APassOnTheWrongKernelsIsAFallbackNamingTheFamilyThatRan) {
  Program({"sdpa-flags-fp32-flash.txt"});
  worker::RunTrial(env, Grant(1, Stage(), "flash"));
  EXPECT_EQ(Started().env.at("CUDA_INJECTION64_PATH"), env.kernel_recorder);
  const json r = daemon.report("L1");
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["verdict"], "fallback");
  EXPECT_EQ(r["signature"], "fallback:fmha_cutlassF (memory-efficient)");
  EXPECT_EQ(r["failing_stage"], "sdpa");
  EXPECT_NE(r["evidence"].get<std::string>().find("backend=flash expects kernels matching"), std::string::npos);
  EXPECT_EQ(r["stages"][0]["dispatch"]["status"], "fallback");
  EXPECT_EQ(r["kernels"]["complete"], true);
  EXPECT_EQ(r["kernels"]["top"][0]["family"], "fmha_cutlassF (memory-efficient)");
  EXPECT_NE(daemon.log("L1").find("gauntlet: dispatch: backend=flash"), std::string::npos) << daemon.log("L1");
}

TEST_F(KernelDispatchTrialTest, TheAskedKernelsVerifyThePass) {
  Program({"sdpa-forced-flash-bf16.txt"});
  worker::RunTrial(env, Grant(2, Stage(), "flash"));
  const json r = daemon.report("L2");
  EXPECT_EQ(r["verdict"], "passed");
  EXPECT_EQ(r["stages"][0]["dispatch"]["status"], "verified");
  EXPECT_NE(daemon.log("L2").find("gauntlet: dispatch verified"), std::string::npos);
}

TEST_F(KernelDispatchTrialTest, AnIncompleteOrMissingRecordLeavesThePassUnverified) {
  Program({"killed-mid-run.txt"});
  worker::RunTrial(env, Grant(3, Stage(), "flash"));
  json r = daemon.report("L3");
  EXPECT_EQ(r["verdict"], "passed");
  EXPECT_EQ(r["stages"][0]["dispatch"]["status"], "unverified");
  EXPECT_EQ(r["kernels"]["complete"], false);
  EXPECT_NE(daemon.log("L3").find("dispatch unverified"), std::string::npos);
  Program({});  // CUDA never initialised under the recorder: no file at all
  worker::RunTrial(env, Grant(4, Stage(), "flash"));
  r = daemon.report("L4");
  EXPECT_EQ(r["verdict"], "passed");
  EXPECT_EQ(r["stages"][0]["dispatch"]["status"], "unverified");
  EXPECT_EQ(r["kernels"]["processes"], 0);
}

TEST_F(KernelDispatchTrialTest, AFailedStageKeepsItsOwnVerdictAndIsNotJudgedOnItsKernels) {
  test::FakeProgram p;
  p.output = {"Traceback (most recent call last):\n", "RuntimeError: No available kernel. Aborting execution.\n"};
  p.exit_code = 1;
  p.on_start = [](const proc::ProcessSpec& spec) {  // it launched a few kernels before refusing
    std::ifstream in(test::SourceDir() + "/tests/fixtures/kernrec/eager-attention.txt");
    std::ofstream(spec.env.at("GAUNTLET_KERNREC_DIR") + "/kernrec.9.txt") << in.rdbuf();
  };
  runner.Add("sdpa", p);
  worker::RunTrial(env, Grant(5, Stage(), "flash"));
  const json r = daemon.report("L5");
  EXPECT_NE(r["verdict"], "fallback");
  EXPECT_NE(r["verdict"], "passed");
  EXPECT_FALSE(r["stages"][0].contains("dispatch")) << r["stages"][0].dump();
  EXPECT_EQ(r["kernels"]["processes"], 1) << "its kernels are still recorded";
}

TEST_F(KernelDispatchTrialTest, NoRecorderNoGpuOrTurnedOffRunsTheStageUnrecorded) {
  Program({"sdpa-flags-fp32-flash.txt"});
  json off = Stage();
  off["record_kernels"] = false;
  worker::RunTrial(env, Grant(6, off, "flash"));
  EXPECT_EQ(Started().env.count("CUDA_INJECTION64_PATH"), 0u);
  EXPECT_FALSE(daemon.report("L6").contains("kernels"));
  EXPECT_EQ(daemon.report("L6")["verdict"], "passed");

  worker::RunTrial(env, Grant(7, Stage(), "flash", json::array()));  // a CPU trial
  EXPECT_EQ(Started().env.count("CUDA_INJECTION64_PATH"), 0u);
  EXPECT_EQ(daemon.report("L7")["verdict"], "passed");

  env.kernel_recorder.clear();  // a node without CUPTI or the library
  worker::RunTrial(env, Grant(8, Stage(), "flash"));
  EXPECT_EQ(Started().env.count("CUDA_INJECTION64_PATH"), 0u);
  EXPECT_EQ(daemon.report("L8")["verdict"], "passed");
  EXPECT_FALSE(daemon.report("L8").contains("kernels"));
  // The stage's dispatch expectation was not checked, and each of these says so, with why: a pass
  // here is not a verified one.
  for (const char* lease : {"L6", "L7", "L8"}) {
    const json d = daemon.report(lease)["stages"][0]["dispatch"];
    EXPECT_EQ(d.value("status", ""), "unverified") << lease << ": " << daemon.report(lease).dump();
    EXPECT_NE(d.value("reason", "").find("records no kernels"), std::string::npos) << d.dump();
  }
  EXPECT_NE(daemon.report("L6")["stages"][0]["dispatch"].value("reason", "").find("record_kernels: false"), std::string::npos);
  EXPECT_NE(daemon.report("L8")["stages"][0]["dispatch"].value("reason", "").find("no kernel recorder"), std::string::npos);
}

TEST(KernelRecorderCapability, ANodeWithoutTheLibrarySaysSo) {
  test::TempDir d;
  worker::KernelRecorder r = worker::FindKernelRecorder(d.path(), true);
  EXPECT_TRUE(r.library.empty());
  EXPECT_NE(r.description.find("unavailable: no libgauntlet_kernrec.so"), std::string::npos) << r.description;
  r = worker::FindKernelRecorder(d.path(), false);
  EXPECT_TRUE(r.library.empty());
  EXPECT_EQ(r.description, "unavailable: no GPUs");
}

}  // namespace
}  // namespace gauntlet
