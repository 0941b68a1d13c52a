// CPU quantizer, relayout and dequantizer for NVFP4 (the format lives in nvfp4.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gauntlet/kernels/host.hpp"

namespace gauntlet::kernels {
using namespace nvfp4;

uint16_t f32_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);  // nearest even
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_f32(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

float Nvfp4Matrix::at(int r, int c) const {
  const uint8_t byte = packed[static_cast<size_t>(r) * packed_row_bytes(cols) + c / 2];
  const uint8_t code = (c & 1) ? byte >> 4 : byte & 0xF;
  const float s = e4m3_decode(scales[scale_index(layout, r, c / kBlock, rows, cols)]);
  return e2m1_decode(code) * s * global_scale;
}

Nvfp4Matrix quantize_cpu(const std::vector<float>& w, int rows, int cols, ScaleLayout layout) {
  Nvfp4Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.layout = layout;
  float amax = 0.0f;
  for (float v : w) amax = std::max(amax, std::fabs(v));
  m.global_scale = global_scale_for(amax);
  const size_t rb = packed_row_bytes(cols);
  m.packed.assign(static_cast<size_t>(rows) * rb, 0);
  m.scales.assign(scale_bytes(layout, rows, cols), 0);
  for (int r = 0; r < rows; ++r) {
    for (int b = 0; b < scale_cols(cols); ++b) {
      const int k0 = b * kBlock, k1 = std::min(cols, k0 + kBlock);
      float bmax = 0.0f;
      for (int k = k0; k < k1; ++k) bmax = std::max(bmax, std::fabs(w[static_cast<size_t>(r) * cols + k]));
      const uint8_t sc = block_scale_code(bmax, m.global_scale);
      m.scales[scale_index(layout, r, b, rows, cols)] = sc;
      const float bs = e4m3_decode(sc);
      for (int k = k0; k < k1; ++k) {
        const uint8_t q = quantize_element(w[static_cast<size_t>(r) * cols + k], bs, m.global_scale);
        m.packed[r * rb + k / 2] |= (k & 1) ? static_cast<uint8_t>(q << 4) : q;
      }
    }
  }
  return m;
}

std::vector<uint8_t> relayout_scales(const std::vector<uint8_t>& s, ScaleLayout from, ScaleLayout to,
                                     int rows, int cols) {
  std::vector<uint8_t> out(scale_bytes(to, rows, cols), 0);
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < scale_cols(cols); ++b)
      out[scale_index(to, r, b, rows, cols)] = s[scale_index(from, r, b, rows, cols)];
  return out;
}

std::vector<float> dequantize_cpu(const Nvfp4Matrix& m) {
  std::vector<float> out(static_cast<size_t>(m.rows) * m.cols);
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c) out[static_cast<size_t>(r) * m.cols + c] = m.at(r, c);
  return out;
}

}  // namespace gauntlet::kernels
