// The kernel recorder on a real GPU (issue 30): libgauntlet_kernrec.so loaded by the CUDA driver
// through CUDA_INJECTION64_PATH into `gauntlet-kernels gemm`, which must leave one complete record
// naming the kernel it launched; a process that never initialises CUDA leaves none. Skips visibly
// ("no CUDA device") without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpu_env.hpp"

namespace {
namespace fs = std::filesystem;

std::string Env(const char* k) {
  const char* v = std::getenv(k);
  return v ? v : "";
}

// Runs `cmd` through the shell with the recorder's variables; returns the exit status.
int RunRecorded(const std::string& dir, const std::string& cmd) {
  const std::string full = "CUDA_INJECTION64_PATH='" + Env("GAUNTLET_KERNREC_LIB") + "' GAUNTLET_KERNREC_DIR='" + dir +
                           "' " + cmd + " >/dev/null 2>&1";
  const int st = std::system(full.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::vector<std::string> Records(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("kernrec.", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".txt") {
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
  }
  return out;
}

std::string FreshDir(const std::string& name) {
  const std::string d = fs::temp_directory_path().string() + "/kernrec-gpu-" + std::to_string(getpid()) + "-" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(KernelRecorderGpu, RecordsTheKernelsAProcessLaunches) {
  SKIP_WITHOUT_GPU();
  ASSERT_FALSE(Env("GAUNTLET_KERNREC_LIB").empty());
  const std::string dir = FreshDir("gemm");
  ASSERT_EQ(RunRecorded(dir, "'" + Env("GAUNTLET_KERNELS_BIN") +
                                 "' gemm --backend reference --shape 16x256x256 --iters 3 --warmup 1"),
            0);
  const auto recs = Records(dir);
  ASSERT_EQ(recs.size(), 1u);
  const std::string& r = recs[0];
  EXPECT_NE(r.find("kernrec 1\n"), std::string::npos) << r;
  EXPECT_NE(r.find("state complete\n"), std::string::npos) << r;
  EXPECT_NE(r.find("cupti ok\n"), std::string::npos) << r;
  EXPECT_NE(r.find("dropped 0\n"), std::string::npos) << r;
  EXPECT_NE(r.find("reference_kernel("), std::string::npos) << "demangled name of the launched kernel:\n" << r;
}

TEST(KernelRecorderGpu, AProcessThatNeverUsesCudaIsUnaffected) {
  SKIP_WITHOUT_GPU();
  const std::string dir = FreshDir("list");
  ASSERT_EQ(RunRecorded(dir, "'" + Env("GAUNTLET_KERNELS_BIN") + "' list"), 0);
  EXPECT_TRUE(Records(dir).empty());
}

}  // namespace
