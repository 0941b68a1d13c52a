// `mma` backend, wgmma v3 ("RS": A from registers, sm_90a only), the default wgmma kernel.
// C^T = W x A^T: the dequantized weights are wgmma's A operand, built in registers, so they never
// go through shared memory; the activations are its B operand, streamed into shared memory.
// Contract: prepare repacks W once (owned by the object, freed with it); run only launches.
// Not thread-safe; one object per stream.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.hpp"

namespace gauntlet::kernels {

class WgmmaRs {
 public:
  WgmmaRs() = default;
  WgmmaRs(const WgmmaRs&) = delete;
  WgmmaRs& operator=(const WgmmaRs&) = delete;
  ~WgmmaRs();
  // cudaSuccess when this GPU has the kernels' images (sm_90a).
  static cudaError_t probe();
  // mb: 64-row weight blocks per consumer warpgroup (1: CTA tile 128x256, 2: 256x128; see kernel).
  void prepare(const GemmArgs& a, int mb = 2);
  void run(const GemmArgs& a) const;

 private:
  uint8_t* pk_ = nullptr;  // [ntiles][kt][chunk]: see mma_wgmma_rs.cu
  int ntiles_ = 0, kt_ = 0;
  int mb_ = 2;
};

}  // namespace gauntlet::kernels
