// Exit codes of gauntlet-kernels (documented in docs/KERNELS.md; suites and the worker rely on them).
#pragma once

namespace gauntlet::kernels::exit_code {
constexpr int kPassed = 0;        // gemm: output within tolerance; preflight: node healthy; list: ok
constexpr int kError = 1;         // a CUDA/cuBLAS error or crash-like failure while running
constexpr int kUsage = 2;         // bad flags or arguments
constexpr int kUnsupported = 3;   // gemm: backend has no image for this GPU or refuses the shape
constexpr int kWrongOutput = 4;   // gemm: ran, but the output failed the fp64 comparison
constexpr int kNoGpu = 5;         // no usable CUDA device (no driver, no GPU)
constexpr int kUnhealthy = 6;     // preflight: the node should not take trials
}  // namespace gauntlet::kernels::exit_code
