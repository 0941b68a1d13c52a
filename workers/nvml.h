// NVML loaded at run time (dlopen "libnvidia-ml.so.1"): GPU discovery and health without a
// link-time dependency, so one worker binary runs on GPU and CPU-only hosts alike.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/hardware.h"

namespace gauntlet::worker {

// One GPU's use at one moment. A plain value.
struct NvmlGpuState {
  int index = 0;
  std::vector<unsigned> pids;   // compute processes using the GPU
  uint64_t used_mb = 0;
};

// An initialised NVML, owned by whoever Open gave it to; shuts NVML down on destruction. Its
// queries are const and NVML is documented thread-safe, so one instance may serve several threads.
class Nvml {
 public:
  // Loads and initializes NVML; nullopt (with `why`) on a host without it.
  static std::optional<Nvml> Open(std::string* why);
  Nvml(Nvml&&) noexcept;
  ~Nvml();
  // Every GPU: index, name, uuid, compute capability, memory.
  std::vector<Gpu> Gpus() const;
  std::string DriverVersion() const;  // "580.159.04"; empty if NVML cannot say
  std::string CudaVersion() const;  // "13.0" from the driver
  // The processes and memory in use on one GPU now.
  std::optional<NvmlGpuState> State(int index) const;

 private:
  Nvml() = default;
  struct Fns;
  void* lib_ = nullptr;
  Fns* fns_ = nullptr;
};

// The inventory of this host: NVML if present (else CPU-only), plus labels; driver/cuda from NVML.
// *note (when given) says what was found, for the worker's start-up line, or why NVML is absent.
Inventory DiscoverInventory(std::string* note);

}  // namespace gauntlet::worker
