// One-time weight repack for the `mma` and `gemv` backends (the kind of offline step Marlin-style
// kernels take): W padded to [Npad, Kpad/2] and its scales to plain row-major [Npad, Kpad/16]
// whatever the input layout, zeros in the padding, so the kernels need no bounds checks on W.
// Within every 8-element group (one 32-bit word) the nibbles are reordered to elements
// 0,2,4,6,1,3,5,7, so that dev::dequant8 turns a word into natural-order bf16 pairs cheaply.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend.hpp"

namespace gauntlet::kernels {

struct RepackedWeights {
  uint8_t* w = nullptr;
  uint8_t* s = nullptr;
  int Npad = 0, Kpad = 0;
  RepackedWeights() = default;
  RepackedWeights(const RepackedWeights&) = delete;
  RepackedWeights& operator=(const RepackedWeights&) = delete;
  ~RepackedWeights();
};

// n_align and k_align are the kernel's tile sizes (k_align a multiple of 32).
// v2_bits: words in dev::pack8_v2's bit layout (for dev::dequant8_v2) instead of the nibble order.
void repack_for_mma(const GemmArgs& a, int n_align, int k_align, RepackedWeights& out, bool v2_bits = false);
cudaError_t repack_probe();

}  // namespace gauntlet::kernels
