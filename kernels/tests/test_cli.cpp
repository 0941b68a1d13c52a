// gauntlet-kernels' JSON and exit codes where it needs no GPU: list, usage errors, and gemm /
// preflight on a machine without a GPU (exit 5, verdict infra_error, result file written). On a
// machine with a GPU the no-GPU expectations are skipped visibly and a tiny gemm must pass.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using json = nlohmann::json;

namespace {
struct Result {
  int code = -1;
  std::string out;
};

Result run(const std::string& args, const std::string& env = "") {
  const char* bin = std::getenv("GAUNTLET_KERNELS_BIN");
  EXPECT_NE(bin, nullptr) << "GAUNTLET_KERNELS_BIN not set (ctest sets it)";
  Result r;
  const std::string cmd = env + " " + std::string(bin ? bin : "gauntlet-kernels") + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
}  // namespace

TEST(Cli, ListNamesEveryBackendAndItsArchs) {
  const Result r = run("list");
  ASSERT_EQ(r.code, 0) << r.out;
  const json j = json::parse(r.out);
  std::map<std::string, std::string> archs;
  for (const auto& b : j.at("backends")) archs[b.at("name")] = b.at("archs");
  for (const char* n : {"reference", "dequant_cublas", "mma", "gemv", "sm120_native"}) EXPECT_TRUE(archs.count(n)) << n;
  EXPECT_EQ(archs["sm120_native"], "sm_120a");
  EXPECT_NE(archs["mma"].find("sm_90a"), std::string::npos);
  EXPECT_NE(archs["mma"].find("sm_80"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("gemm --backend mma --m 1").code, 2);                        // missing flags
  EXPECT_EQ(run("frobnicate").code, 2);
  const Result r = run("gemm --backend mma --m 4 --n 4 --k 10");             // K not a multiple of 16
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(json::parse(r.out).at("verdict"), "error");
  EXPECT_EQ(run("gemm --backend mma --m 4 --n 4 --k 16 --scale-layout diagonal").code, 2);
  EXPECT_EQ(run("gemm --backend mma --m 4 --n 4 --k 16 --scale-signs negative").code, 2);
  const Result t = run("gemm --backend gemv --m 4 --n 4 --k 16 --timing sometimes");
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(json::parse(t.out).value("detail", "").find("--timing"), std::string::npos) << t.out;
  EXPECT_EQ(run("gemm --backend gemv --m 4 --n 4 --k 16 --timing rotate --rotate-launches 0").code, 2);
}

TEST(Cli, GemmWithoutGpuExitsFiveAndWritesResultFile) {
  const std::string rf = ::testing::TempDir() + "gk_result.json";
  std::remove(rf.c_str());
  const Result r = run("gemm --backend reference --m 3 --n 5 --k 32 --iters 2", "GAUNTLET_RESULT_FILE=" + rf);
  const json j = json::parse(r.out);
  if (r.code != 5) {
    // A GPU is present: then the same tiny problem must pass.
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(j.at("verdict"), "passed");
    GTEST_SKIP() << "a GPU is present (" << j.value("gpu", "?") << "): no-GPU exit code not exercised";
  }
  EXPECT_EQ(j.at("verdict"), "infra_error");
  EXPECT_NE(j.at("detail").get<std::string>().find("no GPU"), std::string::npos);
  std::ifstream f(rf);
  ASSERT_TRUE(f.good()) << "result file not written";
  const json rj = json::parse(f);
  EXPECT_EQ(rj.at("verdict"), "infra_error");
  EXPECT_TRUE(rj.contains("metrics"));
  EXPECT_TRUE(rj.contains("detail"));
}

TEST(Cli, PreflightWithoutGpuSaysSo) {
  const Result r = run("preflight --errors-only");
  const json j = json::parse(r.out);
  if (r.code != 5) GTEST_SKIP() << "a GPU is present: preflight answered " << r.code;
  EXPECT_EQ(j.at("healthy"), false);
  EXPECT_EQ(j.at("no_gpu"), true);
}
