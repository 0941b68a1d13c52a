// Expected performance of known GPU classes, for preflight's judgement. Contract: lookup by the
// CUDA device name; unknown GPUs get no entry and are judged on errors alone.
#pragma once
#include <optional>
#include <string>

namespace gauntlet::kernels {

struct GpuClass {
  const char* match;        // substring of the device name, e.g. "H200"
  double copy_gbps;         // expected device-to-device copy, bytes read + written per second / 1e9
  double bf16_tflops;       // expected dense bf16 GEMM (cuBLAS, 8192^3, random data)
  const char* source;       // where the number comes from
};

std::optional<GpuClass> find_gpu_class(const std::string& device_name);
// A node passes when it reaches this fraction of the expected numbers.
constexpr double kHealthyFraction = 0.6;

}  // namespace gauntlet::kernels
