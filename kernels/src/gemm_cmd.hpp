// `gauntlet-kernels gemm`: run one backend on one shape, check it against the fp64 CPU
// reference, time it, print one JSON line, and return the exit code (exit_codes.hpp).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace gauntlet::kernels {

struct GemmOptions {
  std::string backend;
  int M = 0, N = 0, K = 0;
  uint64_t seed = 1;
  int iters = 20, warmup = 3;
  std::string scale_layout = "plain";  // plain | swizzled
  std::string fault;                   // "" | scale-layout
  std::string scale_signs = "positive";  // positive | mixed (every third block scale negative)
  std::string mma_path = "auto";       // auto | wgmma | sync
  // flush: each timed run alone, after an L2 flush; rotate: back-to-back runs over rotated input
  // sets from a CUDA graph (time per run = replay time / runs).
  std::string timing = "flush";
  int rotate_launches = 32;  // rotate: launches per graph replay (at least; rounded to whole rounds)
  long long check_budget = 1LL << 31;  // fp64 MACs the CPU reference may spend (rows are sampled past it)
};

int run_gemm(const GemmOptions& o, nlohmann::json& out);

}  // namespace gauntlet::kernels
