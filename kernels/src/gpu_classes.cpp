// The expected-class table. Where a number was measured on this project's machines it says so;
// the rest are leads from datasheets (memory bandwidth * ~0.9 for copies, dense bf16 * ~0.75 for
// cuBLAS), deliberately judged at 60% so only a clearly sick node fails.
#include "gpu_classes.hpp"

namespace gauntlet::kernels {

namespace {
// Order matters: more specific names first ("H100 PCIe" before "H100").
const GpuClass kClasses[] = {
    {"H200", 4300, 780, "measured here: 4.3 TB/s copy, 769-798 TFLOP/s (docs/KERNELS.md)"},
    {"H100 PCIe", 1800, 500, "datasheet lead: 2.0 TB/s HBM2e, 756 TFLOP/s dense bf16"},
    {"H100 NVL", 3500, 650, "datasheet lead: 3.9 TB/s, 835 TFLOP/s dense bf16"},
    {"H100", 3000, 700, "datasheet lead: 3.35 TB/s HBM3, 989 TFLOP/s dense bf16"},
    {"H800", 3000, 700, "datasheet lead: as H100 SXM"},
    {"GH200", 3600, 720, "datasheet lead: 4.0 TB/s HBM3, 989 TFLOP/s dense bf16"},
    {"B200", 7000, 1600, "datasheet lead: 8 TB/s HBM3e, 2.25 PFLOP/s dense bf16"},
    {"B300", 7000, 1600, "datasheet lead: 8 TB/s HBM3e"},
    {"GB200", 7000, 1700, "datasheet lead: 8 TB/s HBM3e, 2.5 PFLOP/s dense bf16"},
    {"RTX PRO 6000", 1500, 350, "datasheet lead: 1.8 TB/s GDDR7"},
    {"RTX 5090", 1500, 180, "datasheet lead: 1.8 TB/s GDDR7, fp32-accumulate rate halved"},
    {"A100-SXM4-80GB", 1700, 250, "datasheet lead: 2.0 TB/s HBM2e, 312 TFLOP/s dense bf16"},
    {"A100", 1400, 250, "datasheet lead: 1.6-2.0 TB/s, 312 TFLOP/s dense bf16"},
    {"L40S", 780, 250, "datasheet lead: 864 GB/s GDDR6, 362 TFLOP/s dense bf16"},
    {"L4", 270, 90, "datasheet lead: 300 GB/s GDDR6, 121 TFLOP/s dense bf16"},
};
}  // namespace

std::optional<GpuClass> find_gpu_class(const std::string& name) {
  for (const GpuClass& c : kClasses)
    if (name.find(c.match) != std::string::npos) return c;
  return std::nullopt;
}

}  // namespace gauntlet::kernels
