// GPU NVFP4 quantizer (amax, global scale, per-16 block scales, E2M1 codes) and dequantizer.
#include "cuda_check.hpp"
#include "quantize.cuh"

namespace gauntlet::kernels {
using namespace nvfp4;

namespace {

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__global__ void amax_kernel(const T* x, size_t n, float* out) {
  float m = 0.0f;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(to_f(x[i])));
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  // Non-negative floats order like their bit patterns, so an integer max is a float max.
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<unsigned*>(out), __float_as_uint(m));
}

__global__ void global_scale_kernel(const float* amax, float* gs) { *gs = global_scale_for(*amax); }

// One thread per 16-element block: the same arithmetic as quantize_cpu, in the same order.
template <typename T>
__global__ void quantize_kernel(const T* x, int rows, int cols, const float* gs_dev, ScaleLayout layout,
                                uint8_t* packed, uint8_t* scales) {
  const int nb = cols / kBlock;
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (idx >= size_t(rows) * nb) return;
  const int r = int(idx / nb), b = int(idx % nb);
  const float gs = *gs_dev;
  const T* src = x + size_t(r) * cols + b * kBlock;
  float v[kBlock];
  float bmax = 0.0f;
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
    v[i] = to_f(src[i]);
    bmax = fmaxf(bmax, fabsf(v[i]));
  }
  const uint8_t sc = block_scale_code(bmax, gs);
  scales[scale_index(layout, r, b, rows, cols)] = sc;
  const float bs = e4m3_decode(sc);
  uint32_t lo = 0, hi = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) lo |= uint32_t(quantize_element(v[i], bs, gs)) << (4 * i);
#pragma unroll
  for (int i = 0; i < 8; ++i) hi |= uint32_t(quantize_element(v[8 + i], bs, gs)) << (4 * i);
  uint2* dst = reinterpret_cast<uint2*>(packed + size_t(r) * (cols / 2) + b * (kBlock / 2));
  *dst = make_uint2(lo, hi);  // 8 bytes, little endian: element 0 in the low nibble of byte 0
}

__global__ void dequantize_kernel(const uint8_t* packed, const uint8_t* scales, ScaleLayout layout, int rows,
                                  int cols, __nv_bfloat16* out) {
  const size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;  // one thread per byte
  const size_t nbytes = size_t(rows) * (cols / 2);
  if (idx >= nbytes) return;
  const int r = int(idx / (cols / 2)), c = int(idx % (cols / 2)) * 2;
  const uint8_t byte = packed[idx];
  const float s = e4m3_decode(scales[scale_index(layout, r, c / kBlock, rows, cols)]);
  // e2m1 * e4m3 has at most 6 significant bits: exact in bf16.
  out[size_t(r) * cols + c] = __float2bfloat16_rn(e2m1_decode(byte & 0xF) * s);
  out[size_t(r) * cols + c + 1] = __float2bfloat16_rn(e2m1_decode(byte >> 4) * s);
}

template <typename T>
void amax_impl(const T* x, size_t n, float* out, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), s));
  amax_kernel<<<1024, 256, 0, s>>>(x, n, out);
  CUDA_CHECK_LAUNCH();
}

template <typename T>
void quantize_impl(const T* x, int rows, int cols, const float* gs, ScaleLayout layout, uint8_t* packed,
                   uint8_t* scales, cudaStream_t s) {
  if (cols % kBlock) throw std::invalid_argument("quantize_gpu: cols must be a multiple of 16");
  CUDA_CHECK(cudaMemsetAsync(scales, 0, scale_bytes(layout, rows, cols), s));
  const size_t blocks = size_t(rows) * (cols / kBlock);
  if (blocks == 0) return;
  quantize_kernel<<<unsigned((blocks + 255) / 256), 256, 0, s>>>(x, rows, cols, gs, layout, packed, scales);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void amax_gpu(const float* x, size_t n, float* o, cudaStream_t s) { amax_impl(x, n, o, s); }
void amax_gpu(const __nv_bfloat16* x, size_t n, float* o, cudaStream_t s) { amax_impl(x, n, o, s); }
void quantize_gpu(const float* x, int r, int c, const float* gs, ScaleLayout l, uint8_t* p, uint8_t* sc,
                  cudaStream_t s) { quantize_impl(x, r, c, gs, l, p, sc, s); }
void quantize_gpu(const __nv_bfloat16* x, int r, int c, const float* gs, ScaleLayout l, uint8_t* p,
                  uint8_t* sc, cudaStream_t s) { quantize_impl(x, r, c, gs, l, p, sc, s); }

void global_scale_gpu(const float* amax, float* gs, cudaStream_t s) {
  global_scale_kernel<<<1, 1, 0, s>>>(amax, gs);
  CUDA_CHECK_LAUNCH();
}

void dequantize_gpu(const uint8_t* packed, const uint8_t* scales, ScaleLayout layout, int rows, int cols,
                    __nv_bfloat16* out, cudaStream_t s) {
  const size_t nbytes = size_t(rows) * (cols / 2);
  if (nbytes == 0) return;
  dequantize_kernel<<<unsigned((nbytes + 255) / 256), 256, 0, s>>>(packed, scales, layout, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

__global__ void negate_some_scales_kernel(uint8_t* scales, size_t n) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n && i % 3 == 1) scales[i] |= 0x80;
}

void negate_some_scales_gpu(uint8_t* scales, size_t n, cudaStream_t s) {
  if (n == 0) return;
  negate_some_scales_kernel<<<unsigned((n + 255) / 256), 256, 0, s>>>(scales, n);
  CUDA_CHECK_LAUNCH();
}

cudaError_t quantize_probe() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, dequantize_kernel);
}

}  // namespace gauntlet::kernels
