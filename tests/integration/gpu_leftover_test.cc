// The GPU half of "no process outlives its trial" (issue 19), label `gpu`: a real worker that
// discovers the GPU through NVML runs a trial whose setsid grandchild allocates GPU memory with
// PyTorch and stays; the trial passes. Measured on the H200 before containment: the grandchild kept
// 21 GiB after its trial and the next trial got the GPU 3 s later. Now the grandchild must be gone
// when its trial is done, and the next trial must find the GPU free — or the worker must have
// held the GPU back, saying why. Skips visibly without NVML or PyTorch.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/support/harness.h"
#include "workers/nvml.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

TEST(GpuLeftover, TheNextTrialFindsTheGpuFreeOrHeldBack) {
  std::string why;
  auto nvml = worker::Nvml::Open(&why);
  if (!nvml || nvml->Gpus().empty()) GTEST_SKIP() << "SKIP: no GPU here (" << why << ")";
  if (system("python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "SKIP: python3 cannot use the GPU through PyTorch";
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/gpu_suites");
  std::vector<std::string> argv = {GauntletBin(), "worker", "--server", d.url(), "--name", "gpu", "--workdir",
                                   dir.path() + "/work", "--preflight", "off", "--wait-s", "5", "--max-trials", "1",
                                   "--kill-grace-ms", "1000", "--pass-env", "LD_LIBRARY_PATH", "--pass-env", "PATH"};
  Child w(argv, dir.path() + "/worker.log");
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == 1; })) << w.Log();
  const std::string gdir = dir.path() + "/gc";
  json leave = d.PostJson("/api/v1/sweeps", {{"suite", "gpu-leftover"}, {"parameters", {{"step", {"leave"}}, {"dir", {gdir}}}}},
                          201);
  json done = d.WaitSweep(leave["id"], std::chrono::seconds(200));
  ASSERT_EQ(done["by_verdict"]["passed"], 1) << done.dump() << "\n" << w.Log();
  pid_t holder = 0;
  std::ifstream(gdir + "/holder.pid") >> holder;
  ASSERT_GT(holder, 0);
  std::cout << "holder pid " << holder << "; after its trial: " << (kill(holder, 0) == 0 ? "ALIVE" : "gone") << "\n";
  EXPECT_TRUE(WaitFor([&] { return kill(holder, 0) != 0; }, std::chrono::seconds(10)))
      << "the setsid grandchild outlived its trial";

  json check = d.PostJson("/api/v1/sweeps", {{"suite", "gpu-leftover"}, {"parameters", {{"step", {"check"}}, {"dir", {gdir}}}}},
                          201);
  const bool ran = WaitFor([&] { return d.GetJson("/api/v1/sweeps/" + check["id"].dump())["finished"].get<bool>(); },
                           std::chrono::seconds(120));
  std::string seen;
  std::getline(std::ifstream(gdir + "/check.txt"), seen, '\0');
  std::cout << "the next trial saw on its GPU: [" << seen << "]\n";
  if (ran) {
    json c = d.GetJson("/api/v1/sweeps/" + check["id"].dump());
    EXPECT_EQ(c["by_verdict"]["passed"], 1) << "the next trial found a process on its GPU: " << seen << "\n" << w.Log();
  } else {
    EXPECT_NE(w.Log().find("holding GPU"), std::string::npos) << "neither run nor held back:\n" << w.Log();
  }
  std::istringstream log(w.Log());
  for (std::string l; std::getline(log, l);)
    if (l.find("GPU") != std::string::npos || l.find("contained") != std::string::npos) std::cout << "worker: " << l << "\n";
  auto state = nvml->State(0);
  if (state) std::cout << "GPU 0 at the end: " << state->pids.size() << " process(es), " << state->used_mb << " MiB used\n";
}

}  // namespace
}  // namespace gauntlet::test
