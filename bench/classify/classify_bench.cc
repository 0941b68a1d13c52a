// gauntlet-classify-bench: writes a deterministic ~100 MB SGLang/vLLM-style server log (multi-rank,
// with near-miss warnings and a rank failure at the end) to a temp file, classifies it with
// ClassifyFile (1 MiB chunks), and prints {"bytes","lines","seconds","mb_per_s","lines_per_s",
// "peak_rss_kb","verdict",...}. --candidates P makes P % of the lines near misses that reach the
// rules (exception-looking lines, tolerance reports that pass, ptxas info, fallbacks at WARNING).
// The generator uses only the public API, so the same source times any classifier version.
// Usage: gauntlet-classify-bench [--mb N] [--candidates P] [--file PATH (kept)]
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "classifier/classifier.h"

namespace {

// Deterministic pseudo-random numbers (xorshift), so every run classifies the same bytes.
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint32_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 11);
  }
  uint32_t Below(uint32_t n) { return Next() % n; }
};

// Lines that reach the rules' predicates and must decide nothing (healthy-run noise).
constexpr const char* kNearMisses[] = {
    "WARNING 06-01 12:00:00 [topk_topp_sampler.py:58] FlashInfer is not available. Falling back to the PyTorch-native "
    "implementation of top-p & top-k sampling.\n",
    "W0601 12:00:00.123000 4242 torch/_dynamo/convert_frame.py:900] RuntimeError: recompiling, cache limit hit\n",
    "check gemm_fp8[128x128x128]: max_abs_diff=1.2e-04 tol=1.0e-02 PASS\n",
    "ptxas info    : Used 128 registers, 384 bytes cmem[0]\n",
    "INFO 06-01 12:00:00 [gpu_model_runner.py:1532] Model loading took 15.6 GiB; results differ from fp32 by < 1e-3\n",
    "tests/kernels/test_moe.py::test_fused_moe[64-128-fp16] PASSED                  [ 42%]\n",
};

void AppendLine(std::string& out, Rng& r, uint64_t i, uint32_t candidates_pct) {
  if (candidates_pct > 0 && r.Below(100) < candidates_pct) {
    out += kNearMisses[r.Below(sizeof kNearMisses / sizeof kNearMisses[0])];
    return;
  }
  char buf[512];
  const int sec = static_cast<int>((i / 40) % 60), min = static_cast<int>((i / 2400) % 60);
  const int tp = static_cast<int>(r.Below(8));
  switch (r.Below(20)) {
    case 0:
      std::snprintf(buf, sizeof buf,
                    "[2025-06-01 12:%02d:%02d TP%d] Prefill batch. #new-seq: %u, #new-token: %u, #cached-token: %u, "
                    "token usage: 0.%02u, #running-req: %u, #queue-req: %u\n",
                    min, sec, tp, 1 + r.Below(8), 128 * (1 + r.Below(32)), r.Below(4096), r.Below(100),
                    r.Below(64), r.Below(16));
      break;
    case 1:
      std::snprintf(buf, sizeof buf,
                    "INFO:     127.0.0.1:%u - \"POST /v1/completions HTTP/1.1\" 200 OK\n", 30000 + r.Below(30000));
      break;
    case 2:
      std::snprintf(buf, sizeof buf,
                    "INFO 06-01 12:%02d:%02d [loggers.py:116] Engine 000: Avg prompt throughput: %u.%u tokens/s, "
                    "Avg generation throughput: %u.%u tokens/s, Running: %u reqs, Waiting: 0 reqs, GPU KV cache "
                    "usage: %u.%u%%, Prefix cache hit rate: %u.%u%%\n",
                    min, sec, r.Below(20000), r.Below(10), r.Below(9000), r.Below(10), r.Below(64), r.Below(100),
                    r.Below(10), r.Below(100), r.Below(10));
      break;
    case 3:
      std::snprintf(buf, sizeof buf, "node%u:%u:%u [%d] NCCL INFO Channel %02u/0 : %d[%d] -> %d[%d] via P2P/CUMEM\n",
                    r.Below(4), 4000 + tp, 4100 + r.Below(50), tp, r.Below(24), tp, tp, (tp + 1) % 8, (tp + 1) % 8);
      break;
    case 4:
      if (r.Below(200) == 0) {
        // Near misses: advisory lines that mention refusals but must not decide anything.
        std::snprintf(buf, sizeof buf,
                      "[2025-06-01 12:%02d:%02d TP%d] WARNING: FlashInfer MLA is not supported on this GPU "
                      "architecture, falling back to triton\n",
                      min, sec, tp);
        break;
      }
      [[fallthrough]];
    default:
      std::snprintf(buf, sizeof buf,
                    "[2025-06-01 12:%02d:%02d TP%d] Decode batch. #running-req: %u, #token: %u, token usage: "
                    "0.%02u, cuda graph: True, gen throughput (token/s): %u.%02u, #queue-req: %u\n",
                    min, sec, tp, 1 + r.Below(64), 1000 + r.Below(90000), r.Below(100), 100 + r.Below(5000),
                    r.Below(100), r.Below(8));
  }
  out += buf;
}

constexpr const char* kFailure =
    "[2025-06-01 13:00:01 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2561, in run_scheduler_process\n"
    "    scheduler.event_loop_overlap()\n"
    "  File \"/sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/layer.py\", line 812, in forward\n"
    "    return self.quant_method.apply(self, x, topk_output)\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "[rank0]:[E0601 13:10:01.000000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=88123, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000) ran for "
    "600012 milliseconds before timing out.\n";

long PeakRssKb() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mb = 100;
  uint32_t candidates = 0;
  std::string path;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) mb = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--candidates" && i + 1 < argc) candidates = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--file" && i + 1 < argc) { path = argv[++i]; keep = true; }
    else { std::fprintf(stderr, "usage: %s [--mb N] [--candidates P] [--file PATH]\n", argv[0]); return 2; }
  }
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/gauntlet-classify-bench-" + std::to_string(getpid()) + ".log";
  }
  const uint64_t target = mb * 1000 * 1000;
  uint64_t lines = 0;
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) { std::perror(path.c_str()); return 2; }
    Rng r;
    std::string block;
    uint64_t written = 0, line = 0;
    while (written < target) {
      block.clear();
      while (block.size() < (1 << 20)) AppendLine(block, r, line++, candidates);
      std::fwrite(block.data(), 1, block.size(), f);
      written += block.size();
    }
    std::fputs(kFailure, f);
    std::fclose(f);
    lines = line + 8;  // kFailure's lines
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fclose(f);

  gauntlet::classifier::ExitInfo exit;
  exit.exit_code = 1;
  auto t0 = std::chrono::steady_clock::now();
  gauntlet::classifier::Classification c = gauntlet::classifier::ClassifyFile(path, exit);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!keep) std::remove(path.c_str());

  nlohmann::json out = {{"bench", "classify"},
                        {"bytes", bytes},
                        {"lines", lines},
                        {"candidates_pct", candidates},
                        {"seconds", secs},
                        {"mb_per_s", bytes / 1e6 / secs},
                        {"lines_per_s", static_cast<double>(lines) / secs},
                        {"peak_rss_kb", PeakRssKb()},
                        {"verdict", gauntlet::Name(c.verdict)},
                        {"signature", c.signature}};
  std::printf("%s\n", out.dump().c_str());
  return c.verdict == gauntlet::Verdict::kCrashed ? 0 : 1;
}
