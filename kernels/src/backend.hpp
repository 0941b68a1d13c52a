// The GEMM backend interface: C[M,N] (bf16) = A[M,K] (bf16) x W[N,K]^T (NVFP4) * global_scale.
// Contract: prepare() may do one-time weight work (not timed, like a checkpoint repack); run() is
// what gets timed and must write every element of C. probe() checks, without launching, that this
// GPU has an image of the backend's kernels and returns the CUDA error text when it does not.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gauntlet/kernels/nvfp4.hpp"

namespace gauntlet::kernels {

struct GemmArgs {
  int M = 0, N = 0, K = 0;
  const __nv_bfloat16* A = nullptr;  // [M, K] row-major
  const uint8_t* Wq = nullptr;       // [N, K/2] packed E2M1
  const uint8_t* Ws = nullptr;       // E4M3 scales in `layout`
  nvfp4::ScaleLayout layout = nvfp4::ScaleLayout::plain;
  float global_scale = 1.0f;
  __nv_bfloat16* C = nullptr;        // [M, N] row-major
  cudaStream_t stream = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "" when this shape is accepted, else why not.
  virtual std::string check_shape(int M, int N, int K) const { return ""; }
  // cudaSuccess when the kernels have an image for the current device.
  virtual cudaError_t probe() const = 0;
  virtual void prepare(const GemmArgs& a) {}
  virtual void run(const GemmArgs& a) = 0;
  // True when the backend also quantizes A to NVFP4 (W4A4); the reference then uses quantized A.
  virtual bool quantizes_activations() const { return false; }
  // Which code path runs, where a backend has several (the `mma` backend: wgmma or mma.sync).
  virtual std::string variant() const { return ""; }
  // Bytes a kernel must move at least (for GB/s): A, W, scales, C once each.
  virtual double min_bytes(int M, int N, int K) const {
    return 2.0 * M * K + N * (K / 2.0) + N * (K / 16.0) + 2.0 * M * N;
  }
};

struct BackendInfo {
  std::string name;
  std::string archs;        // the CUDA architectures its kernels were compiled for
  std::string description;
};

std::vector<BackendInfo> list_backends();
std::unique_ptr<Backend> make_backend(const std::string& name, const std::string& mma_path = "auto");

// Factories, one per backend file.
std::unique_ptr<Backend> make_reference_backend();
std::unique_ptr<Backend> make_dequant_cublas_backend();
std::unique_ptr<Backend> make_mma_wgmma_backend();
std::unique_ptr<Backend> make_mma_sync_backend();
std::unique_ptr<Backend> make_gemv_backend();
std::unique_ptr<Backend> make_gemv_v1_backend();  // GK_GEMV_IMPL=v1 (comparisons only)
std::unique_ptr<Backend> make_sm120_native_backend();

}  // namespace gauntlet::kernels
