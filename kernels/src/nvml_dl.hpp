// NVML through dlopen("libnvidia-ml.so.1") at run time: no link-time dependency, and a node
// without the library still runs the tool (health fields then say "unavailable").
#pragma once
#include <optional>
#include <string>

namespace gauntlet::kernels::nvml {

struct Health {
  bool available = false;
  std::string error;                          // why NVML could not answer
  std::string driver;                         // "580.159.04"
  std::optional<long long> ecc_uncorrected_volatile, ecc_uncorrected_aggregate, ecc_corrected_volatile;
  std::optional<bool> ecc_enabled;
  std::optional<unsigned> retired_pages_sbe, retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failure;
};

// Health of the device with this UUID ("GPU-..."); fields NVML does not support stay empty.
Health query(const std::string& uuid);

}  // namespace gauntlet::kernels::nvml
