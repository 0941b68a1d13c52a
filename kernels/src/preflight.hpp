// `gauntlet-kernels preflight`: is this node fit to take trials? Measures device-to-device copy
// bandwidth and cuBLAS bf16 TFLOP/s, reads ECC/retired-page/row-remap state through NVML, and
// judges them against the GPU's expected class. Returns the exit code (exit_codes.hpp).
#pragma once
#include <nlohmann/json.hpp>

namespace gauntlet::kernels {

struct PreflightOptions {
  int gemm_size = 8192;     // M = N = K of the bf16 GEMM
  size_t copy_mib = 1024;   // bytes per copy
  int iters = 10;
  bool skip_perf = false;   // errors only (fast)
};

int run_preflight(const PreflightOptions& o, nlohmann::json& out);

}  // namespace gauntlet::kernels
