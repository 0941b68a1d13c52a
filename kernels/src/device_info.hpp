// What the tool says about the GPU it runs on. Contract: no_gpu is true (and nothing else is
// filled) when the CUDA runtime finds no usable device, e.g. no driver on a CPU-only node.
#pragma once
#include <string>

namespace gauntlet::kernels {

struct DeviceInfo {
  bool no_gpu = true;
  std::string why;        // the CUDA error when no_gpu
  int index = 0;
  std::string name;       // "NVIDIA H200"
  std::string arch;       // "sm_90"
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  size_t l2_bytes = 0;
  size_t memory_bytes = 0;
  std::string uuid;       // "GPU-xxxxxxxx-...", as NVML spells it
  int driver_version = 0, runtime_version = 0;
};

DeviceInfo query_device();

}  // namespace gauntlet::kernels
