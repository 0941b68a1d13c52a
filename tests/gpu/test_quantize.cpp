// The GPU quantizer writes exactly the bytes of the CPU quantizer (both layouts, odd sizes), and
// the GPU dequantizer matches the CPU decode.
#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gauntlet/kernels/host.hpp"
#include "gpu_env.hpp"
#include "quantize.cuh"

using namespace gauntlet::kernels;
using gauntlet::nvfp4::ScaleLayout;

TEST(GpuQuantizer, MatchesCpuBitForBit) {
  SKIP_WITHOUT_GPU();
  for (auto [rows, cols] : {std::pair{1, 16}, {37, 208}, {130, 1040}}) {
    for (ScaleLayout layout : {ScaleLayout::plain, ScaleLayout::swizzled}) {
      auto w = random_normal(size_t(rows) * cols, 1234 + rows);
      w[0] = 0.0f;                          // edge values in the data
      if (w.size() > 40) w[33] = 1e4f, w[34] = -1e-8f;
      const Nvfp4Matrix cpu = quantize_cpu(w, rows, cols, layout);
      DeviceBuffer<float> x(w.size()), gs(2);
      DeviceBuffer<uint8_t> p(cpu.packed.size()), s(cpu.scales.size());
      CUDA_CHECK(cudaMemcpy(x.get(), w.data(), x.bytes(), cudaMemcpyHostToDevice));
      amax_gpu(x.get(), x.size(), gs.get() + 1, nullptr);
      global_scale_gpu(gs.get() + 1, gs.get(), nullptr);
      quantize_gpu(x.get(), rows, cols, gs.get(), layout, p.get(), s.get(), nullptr);
      std::vector<uint8_t> gp(p.size()), gsc(s.size());
      float g = 0;
      CUDA_CHECK(cudaMemcpy(gp.data(), p.get(), p.size(), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(gsc.data(), s.get(), s.size(), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(&g, gs.get(), sizeof g, cudaMemcpyDeviceToHost));
      EXPECT_EQ(g, cpu.global_scale);
      EXPECT_EQ(gp, cpu.packed) << rows << "x" << cols;
      EXPECT_EQ(gsc, cpu.scales) << rows << "x" << cols;

      DeviceBuffer<__nv_bfloat16> d(size_t(rows) * cols);
      dequantize_gpu(p.get(), s.get(), layout, rows, cols, d.get(), nullptr);
      std::vector<uint16_t> hd(d.size());
      CUDA_CHECK(cudaMemcpy(hd.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
          {
            const uint8_t byte = cpu.packed[size_t(r) * cols / 2 + c / 2];
            const float want = gauntlet::nvfp4::e2m1_decode((c & 1) ? byte >> 4 : byte & 0xF) *
                               gauntlet::nvfp4::e4m3_decode(
                                   cpu.scales[gauntlet::nvfp4::scale_index(layout, r, c / 16, rows, cols)]);
            ASSERT_EQ(bf16_to_f32(hd[size_t(r) * cols + c]), want) << r << "," << c;
          }
    }
  }
}
