// Host-side NVFP4 tensors, the CPU quantizer, the fp64 reference GEMM and the tolerance-aware
// comparison. Contract: pure C++ (no CUDA needed), deterministic for a given seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/kernels/nvfp4.hpp"

namespace gauntlet::kernels {

// bf16 as raw bits on the host; round-to-nearest-even from float, NaN kept quiet.
uint16_t f32_to_bf16(float x);
float bf16_to_f32(uint16_t b);

// Weights W[N, K] in NVFP4.
struct Nvfp4Matrix {
  int rows = 0, cols = 0;                // N, K
  nvfp4::ScaleLayout layout = nvfp4::ScaleLayout::plain;
  float global_scale = 1.0f;             // decode multiplier: w = e2m1 * e4m3 * global_scale
  std::vector<uint8_t> packed;           // rows * ceil(K/2) bytes, low nibble first
  std::vector<uint8_t> scales;           // nvfp4::scale_bytes(layout, rows, cols) bytes
  float at(int r, int c) const;          // decoded value
};

// Quantize a row-major float matrix (round to nearest even, saturate at +-6).
Nvfp4Matrix quantize_cpu(const std::vector<float>& w, int rows, int cols, nvfp4::ScaleLayout layout);
// The same scales stored in the other layout (padding entries are zero).
std::vector<uint8_t> relayout_scales(const std::vector<uint8_t>& s, nvfp4::ScaleLayout from,
                                     nvfp4::ScaleLayout to, int rows, int cols);
std::vector<float> dequantize_cpu(const Nvfp4Matrix& m);

// Deterministic inputs: normal(0,1) scaled, via a fixed generator so every platform agrees.
std::vector<float> random_normal(size_t n, uint64_t seed, float stddev = 1.0f);
std::vector<uint16_t> to_bf16(const std::vector<float>& x);

// C[M,N] = A[M,K] x W[N,K]^T (decoded NVFP4), accumulated in fp64, W decoded one row at a time
// (no N*K buffer) and rows of W split over `threads` threads (0: hardware concurrency).
std::vector<double> reference_gemm_fp64(const std::vector<double>& a, int M, const Nvfp4Matrix& w,
                                        int threads = 1);
std::vector<double> reference_gemm_fp64(const std::vector<uint16_t>& a_bf16, const Nvfp4Matrix& w, int M);
std::vector<double> bf16_to_double(const std::vector<uint16_t>& a);

struct Comparison {
  double rel_err = 0;       // ||out - ref||_2 / ||ref||_2
  double max_abs_err = 0;
  size_t mismatches = 0;    // elements outside atol + rtol * |ref| (NaN counts)
  size_t nonfinite = 0;
  bool passed = false;
  std::string first_mismatches;  // up to 8 "(r,c) got x want y" entries
};
// out is bf16; passes when rel_err <= rel_tol, there is no NaN/Inf, and no element is off by
// more than atol + rtol*|ref| (atol is relative to the output's RMS, so the check scales).
Comparison compare(const std::vector<uint16_t>& out_bf16, const std::vector<double>& ref, int M, int N,
                   double rel_tol, double elem_rtol = 0.02, double elem_atol_rms = 0.05);

}  // namespace gauntlet::kernels
