// GPU NVFP4 quantizer and dequantizer. Contract: quantize_gpu produces exactly the bytes that
// quantize_cpu produces for the same input and global scale (same nvfp4.hpp functions).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gauntlet/kernels/nvfp4.hpp"

namespace gauntlet::kernels {

// amax of |x| over n elements into *amax_out (device float); enqueued on `stream`.
void amax_gpu(const float* x, size_t n, float* amax_out, cudaStream_t stream);
void amax_gpu(const __nv_bfloat16* x, size_t n, float* amax_out, cudaStream_t stream);

// Quantize x[rows, cols] with the global scale read from *gs_dev (device). cols % 16 == 0.
// packed: rows*cols/2 bytes; scales: nvfp4::scale_bytes(layout, rows, cols) bytes (zeroed first).
void quantize_gpu(const float* x, int rows, int cols, const float* gs_dev, nvfp4::ScaleLayout layout,
                  uint8_t* packed, uint8_t* scales, cudaStream_t stream);
void quantize_gpu(const __nv_bfloat16* x, int rows, int cols, const float* gs_dev, nvfp4::ScaleLayout layout,
                  uint8_t* packed, uint8_t* scales, cudaStream_t stream);
// gs = amax / (6 * 448) from the amax on the device.
void global_scale_gpu(const float* amax_dev, float* gs_dev, cudaStream_t stream);

// W -> bf16 e2m1*scale (exact; the global scale is left to the caller, e.g. as a GEMM alpha).
void dequantize_gpu(const uint8_t* packed, const uint8_t* scales, nvfp4::ScaleLayout layout, int rows,
                    int cols, __nv_bfloat16* out, cudaStream_t stream);

// Test input: sets the sign bit of every third scale byte (index % 3 == 1) of n bytes, so a run
// checks that a backend honours negative block scales (the quantizer never makes them).
void negate_some_scales_gpu(uint8_t* scales, size_t n, cudaStream_t stream);

cudaError_t quantize_probe();

}  // namespace gauntlet::kernels
