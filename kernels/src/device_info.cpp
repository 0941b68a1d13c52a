// Device discovery through the CUDA runtime (statically linked).
#include "device_info.hpp"

#include <cuda_runtime.h>

#include <cstdio>

namespace gauntlet::kernels {

DeviceInfo query_device() {
  DeviceInfo d;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    d.why = e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                             : "no CUDA device";
    cudaGetLastError();
    return d;
  }
  cudaDeviceProp p{};
  if (cudaGetDevice(&d.index) != cudaSuccess || cudaGetDeviceProperties(&p, d.index) != cudaSuccess) {
    d.why = "cudaGetDeviceProperties failed";
    return d;
  }
  d.no_gpu = false;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  d.sms = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.memory_bytes = p.totalGlobalMem;
  char u[64];
  const unsigned char* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(u, sizeof u, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  d.uuid = u;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  return d;
}

}  // namespace gauntlet::kernels
