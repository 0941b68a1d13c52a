// Deterministic inputs, the fp64 CPU reference GEMM and the tolerance-aware comparison.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>
#include <algorithm>

#include "gauntlet/kernels/host.hpp"

namespace gauntlet::kernels {

namespace {
// splitmix64: tiny, well mixed, and the same everywhere (std::normal_distribution is not).
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<float> random_normal(size_t n, uint64_t seed, float stddev) {
  std::vector<float> out(n);
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (size_t i = 0; i < n; i += 2) {  // Box-Muller, both outputs used
    const double u1 = (static_cast<double>(splitmix(s) >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(splitmix(s) >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)) * stddev;
    out[i] = static_cast<float>(r * std::cos(2 * M_PI * u2));
    if (i + 1 < n) out[i + 1] = static_cast<float>(r * std::sin(2 * M_PI * u2));
  }
  return out;
}

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = f32_to_bf16(x[i]);
  return out;
}

std::vector<double> bf16_to_double(const std::vector<uint16_t>& a) {
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = bf16_to_f32(a[i]);
  return out;
}

std::vector<double> reference_gemm_fp64(const std::vector<double>& a, int M, const Nvfp4Matrix& w, int threads) {
  const int N = w.rows, K = w.cols;
  std::vector<double> c(static_cast<size_t>(M) * N, 0.0);
  auto work = [&](int n_begin, int n_end) {
    std::vector<double> wr(K);
    for (int n = n_begin; n < n_end; ++n) {
      // e2m1 * e4m3 * global scale, each exact in double.
      for (int k = 0; k < K; ++k) {
        const uint8_t byte = w.packed[static_cast<size_t>(n) * nvfp4::packed_row_bytes(K) + k / 2];
        const uint8_t code = (k & 1) ? byte >> 4 : byte & 0xF;
        const double s = nvfp4::e4m3_decode(w.scales[nvfp4::scale_index(w.layout, n, k / nvfp4::kBlock, N, K)]);
        wr[k] = static_cast<double>(nvfp4::e2m1_decode(code)) * s * static_cast<double>(w.global_scale);
      }
      for (int m = 0; m < M; ++m) {
        const double* ar = &a[static_cast<size_t>(m) * K];
        double acc = 0.0;
        for (int k = 0; k < K; ++k) acc += ar[k] * wr[k];
        c[static_cast<size_t>(m) * N + n] = acc;
      }
    }
  };
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min(threads, N / 64 + 1));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, static_cast<int>(static_cast<long>(N) * t / threads),
                                                      static_cast<int>(static_cast<long>(N) * (t + 1) / threads));
  for (auto& th : pool) th.join();
  return c;
}

std::vector<double> reference_gemm_fp64(const std::vector<uint16_t>& a_bf16, const Nvfp4Matrix& w, int M) {
  return reference_gemm_fp64(bf16_to_double(a_bf16), M, w, 1);
}

Comparison compare(const std::vector<uint16_t>& out_bf16, const std::vector<double>& ref, int M, int N,
                   double rel_tol, double elem_rtol, double elem_atol_rms) {
  Comparison r;
  double num = 0, den = 0;
  for (double v : ref) den += v * v;
  const double rms = std::sqrt(den / std::max<size_t>(1, ref.size()));
  const double atol = elem_atol_rms * rms;
  std::ostringstream first;
  int shown = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const size_t i = static_cast<size_t>(m) * N + n;
      const double got = bf16_to_f32(out_bf16[i]), want = ref[i];
      const bool finite = std::isfinite(got);
      const double d = finite ? std::fabs(got - want) : INFINITY;
      if (!finite) ++r.nonfinite;
      else num += d * d;
      if (finite && d > r.max_abs_err) r.max_abs_err = d;
      if (!finite || d > atol + elem_rtol * std::fabs(want)) {
        ++r.mismatches;
        if (shown < 8) {
          char buf[128];
          std::snprintf(buf, sizeof buf, "%s(%d,%d) got %.6g want %.6g", shown ? "; " : "", m, n, got, want);
          first << buf;
          ++shown;
        }
      }
    }
  r.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (r.nonfinite) r.rel_err = INFINITY;
  r.first_mismatches = first.str();
  r.passed = r.nonfinite == 0 && r.rel_err <= rel_tol && r.mismatches == 0;
  return r;
}

}  // namespace gauntlet::kernels
