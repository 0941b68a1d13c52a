// Versions of the tool and what it runs on (see versions.hpp).
#include "versions.hpp"

#include <cuda_runtime.h>

#include "cublas_dl.hpp"
#include "device_info.hpp"

#ifndef GAUNTLET_VERSION
#define GAUNTLET_VERSION "dev"
#endif

namespace gauntlet::kernels {

nlohmann::json versions() {
  int drv = 0;
  cudaDriverGetVersion(&drv);  // 0 without a driver
  const DeviceInfo d = query_device();
  nlohmann::json j = {{"gauntlet_kernels", GAUNTLET_VERSION},
                      {"cuda_runtime_built", CUDART_VERSION},
                      {"cuda_driver", drv},
                      {"cublas", cublas::version() ? nlohmann::json(cublas::version()) : nlohmann::json(nullptr)},
                      {"gpu", d.no_gpu ? nlohmann::json(nullptr) : nlohmann::json(d.name)},
                      {"arch", d.no_gpu ? nlohmann::json(nullptr) : nlohmann::json(d.arch)}};
  return j;
}

}  // namespace gauntlet::kernels
