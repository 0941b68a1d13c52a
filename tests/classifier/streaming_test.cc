// Streaming behaviour: chunking independence, long lines, unterminated last lines, bounded state.
#include <gtest/gtest.h>

#include <random>

#include "classifier/classifier.h"

using namespace gauntlet;
using namespace gauntlet::classifier;

namespace {

const char* kLog =
    "[2025-06-01 12:00:00 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=12.34 GB\r\n"
    "[2025-06-01 12:00:01 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
    "  File \"/sgl/python/sglang/srt/managers/scheduler.py\", line 2561, in run_scheduler_process\n"
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)\n"
    "  File \"/sgl/python/sglang/srt/layers/quantization/modelopt_quant.py\", line 911, in apply\n"
    "    out = cutlass_fp4_gemm(x, w, scale)\n"
    "RuntimeError: Error Internal\n"
    "[2025-06-01 12:00:02] Received sigquit from a child process. It usually means the child failed.\n";

Classification Chunked(std::string_view text, const std::vector<size_t>& sizes, const ExitInfo& exit) {
  Classifier c;
  size_t i = 0, k = 0;
  while (i < text.size()) {
    size_t n = sizes[k++ % sizes.size()];
    c.Feed(text.substr(i, n));
    i += n;
  }
  return c.Finish(exit);
}

}  // namespace

TEST(Streaming, SameResultWhateverTheChunking) {
  ExitInfo exit;
  exit.exit_code = 1;
  const Classification whole = ClassifyText(kLog, exit);
  EXPECT_EQ(whole.signature, "crashed:RuntimeError:Error Internal@modelopt_quant.py");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<size_t> sizes;
    for (int j = 0; j < 16; ++j) sizes.push_back(1 + rng() % 40);
    Classification got = Chunked(kLog, sizes, exit);
    ASSERT_EQ(got.verdict, whole.verdict);
    ASSERT_EQ(got.signature, whole.signature);
    ASSERT_EQ(got.evidence, whole.evidence);
  }
}

TEST(Streaming, UnterminatedLastLineCountsAndFinishIsRepeatable) {
  Classifier c;
  c.Feed("loading\nRuntimeError: CUDA error: no kernel image is available for execution on the device");
  ExitInfo exit;
  exit.exit_code = 1;
  EXPECT_EQ(c.Finish(exit).signature, "unsupported:no_kernel_image");
  EXPECT_EQ(c.Finish(exit).signature, "unsupported:no_kernel_image");
  // Feeding more after Finish continues the same line.
  c.Feed(" (more)\n");
  EXPECT_EQ(c.Finish(exit).signature, "unsupported:no_kernel_image");
}

TEST(Streaming, HugeLinesAreCutNotBuffered) {
  std::string huge(5 << 20, 'x');  // 5 MiB without a newline
  Classifier c;
  for (size_t i = 0; i < huge.size(); i += 65536) c.Feed(std::string_view(huge).substr(i, 65536));
  c.Feed("\nSegmentation fault (core dumped)\n");
  ExitInfo exit;
  exit.exit_code = 139;
  Classification r = c.Finish(exit);
  EXPECT_EQ(r.signature, "crashed:signal:SIGSEGV");
  EXPECT_EQ(r.evidence, "Segmentation fault (core dumped)");
}

TEST(Streaming, ManyRanksStayBounded) {
  std::string log;
  for (int r = 0; r < 5000; ++r)
    log += "[rank" + std::to_string(r) + "]: NCCL WARN Call to ibv_create_qp failed with error Cannot allocate\n";
  ExitInfo exit;
  exit.exit_code = 1;
  Classification c = ClassifyText(log, exit);
  EXPECT_EQ(c.verdict, Verdict::kCrashed);
  EXPECT_NE(c.evidence.find("[rank0]"), std::string::npos);  // the first rank to fail
}

TEST(Streaming, InvalidUtf8InEvidenceIsSanitized) {
  ExitInfo exit;
  exit.exit_code = 1;
  Classification c = ClassifyText("RuntimeError: CUDA error: an illegal memory access \xff\xfe was encountered\n", exit);
  EXPECT_EQ(c.signature, "crashed:illegal_memory_access");
  EXPECT_NO_THROW(ToJson(c).dump());
}
