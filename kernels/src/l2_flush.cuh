// Reading a buffer through L2 to evict it (timing.cpp's L2Flusher). Contract: launches on `s`,
// reads all `bytes` of `buf` (a multiple of 16), writes `sink` only in the impossible case that
// keeps the reads from being optimised away.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace gauntlet::kernels {

void l2_read_flush(const void* buf, size_t bytes, int* sink, cudaStream_t s);

}  // namespace gauntlet::kernels
