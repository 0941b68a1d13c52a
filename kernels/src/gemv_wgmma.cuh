// gemv v4 ("wgmma", Hopper sm_90a only): the decode GEMV (M <= 16) with the dequantized weights
// as wgmma's register A operand and the activations as its shared-memory B operand (n8 or n16),
// fed by a producer warp (bulk copies of the weights, cp.async of the activations), and split
// over CTAs stream-K style so every SM gets the same number of K steps whatever N is.
// Contract: prepare repacks W once and sizes the split for the current device (owns both
// buffers, freed with the object); run only launches on a.stream and writes every element of C.
// Not thread-safe; one object per stream.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.hpp"

namespace gauntlet::kernels {

class GemvWgmma {
 public:
  GemvWgmma() = default;
  GemvWgmma(const GemvWgmma&) = delete;
  GemvWgmma& operator=(const GemvWgmma&) = delete;
  ~GemvWgmma();
  // cudaSuccess when this GPU has the kernels' images (sm_90a, so Hopper only).
  static cudaError_t probe();
  // mb: 64-row weight blocks per consumer warpgroup (1 or 2; a CTA's group is 128 * mb rows).
  // ctas_per_sm: 0 = as many as fit (GK_GEMV_CTAS overrides for benchmarking).
  void prepare(const GemmArgs& a, int mb = 1, int ctas_per_sm = 0);
  void run(const GemmArgs& a) const;

 private:
  uint8_t* pk_ = nullptr;      // [group][step][tile of the group][1152 bytes]: see gemv_wgmma.cu
  float* ws_ = nullptr;        // partial sums of groups split between CTAs, zero between launches
  unsigned* cnt_ = nullptr;    // per group: K steps added so far, zero between launches
  int groups_ = 0, steps_ = 0, grid_ = 0, mb_ = 1, nb_ = 16, stages_ = 0, na_ = 2;
};

}  // namespace gauntlet::kernels
