// Node preflight (see preflight.hpp).
#include "preflight.hpp"

#include <cuda_bf16.h>

#include "cublas_dl.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "exit_codes.hpp"
#include "gen.cuh"
#include "gpu_classes.hpp"
#include "nvml_dl.hpp"
#include "result_file.hpp"
#include "timing.hpp"

namespace gauntlet::kernels {
namespace {
using json = nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Copy bandwidth: bytes read + bytes written per second, median of iters.
double measure_copy_gbps(size_t bytes, int iters, L2Flusher& fl, cudaStream_t s) {
  DeviceBuffer<uint8_t> src(bytes), dst(bytes);
  CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5A, bytes, s));
  auto ms = time_runs(2, iters, s, fl, [] {}, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * bytes / (summarize(ms).p50 * 1e-3) * 1e-9;
}

double measure_gemm_tflops(int n, int iters, L2Flusher& fl, cudaStream_t s) {
  const auto& api = cublas::api();
  if (!api.error.empty()) throw std::runtime_error(api.error);
  DeviceBuffer<__nv_bfloat16> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  fill_normal_gpu(a.get(), a.size(), 11, s);  // random data: zeros run faster than real work
  fill_normal_gpu(b.get(), b.size(), 12, s);
  cublasHandle_t h;
  cublas::check(api.create(&h), "cublasCreate");
  try {
    cublas::check(api.set_stream(h, s), "cublasSetStream");
    auto ms = time_runs(3, iters, s, fl, [] {}, [&] { cublas::gemm_bf16_nt(h, n, n, n, 1.0f, a.get(), b.get(), c.get()); });
    api.destroy(h);
    return 2.0 * n * n * double(n) / (summarize(ms).p50 * 1e-3) * 1e-12;
  } catch (...) {
    api.destroy(h);
    throw;
  }
}
}  // namespace

int run_preflight(const PreflightOptions& o, json& out) {
  const DeviceInfo dev = query_device();
  out = json::object();
  if (dev.no_gpu) {
    out = {{"healthy", false}, {"gpu", nullptr}, {"reason", "no GPU: " + dev.why}, {"no_gpu", true}};
    write_result_file("infra_error", json::object(), "no GPU: " + dev.why);
    return exit_code::kNoGpu;
  }
  out["gpu"] = dev.name;
  out["arch"] = dev.arch;
  out["uuid"] = dev.uuid;
  out["memory_mb"] = dev.memory_bytes >> 20;
  out["sms"] = dev.sms;
  out["cuda_driver"] = dev.driver_version;
  out["cuda_runtime"] = dev.runtime_version;
  std::vector<std::string> problems;

  const nvml::Health h = nvml::query(dev.uuid);
  json health = {{"nvml", h.available}};
  if (!h.available) health["nvml_error"] = h.error;
  health["driver"] = h.driver.empty() ? json(nullptr) : json(h.driver);
  health["ecc_enabled"] = opt(h.ecc_enabled);
  health["ecc_uncorrected_volatile"] = opt(h.ecc_uncorrected_volatile);
  health["ecc_uncorrected_aggregate"] = opt(h.ecc_uncorrected_aggregate);
  health["ecc_corrected_volatile"] = opt(h.ecc_corrected_volatile);
  health["retired_pages_sbe"] = opt(h.retired_pages_sbe);
  health["retired_pages_dbe"] = opt(h.retired_pages_dbe);
  health["retired_pages_pending"] = opt(h.retired_pages_pending);
  health["remapped_rows_correctable"] = opt(h.remapped_rows_correctable);
  health["remapped_rows_uncorrectable"] = opt(h.remapped_rows_uncorrectable);
  health["remap_pending"] = opt(h.remap_pending);
  health["remap_failure"] = opt(h.remap_failure);
  out["health"] = health;
  // Errors that make results untrustworthy since the driver loaded, or a memory repair pending.
  if (h.ecc_uncorrected_volatile.value_or(0) > 0) problems.push_back("uncorrected ECC errors since driver load");
  if (h.retired_pages_pending.value_or(false)) problems.push_back("page retirement pending (reset needed)");
  if (h.remap_pending.value_or(false)) problems.push_back("row remapping pending (reset needed)");
  if (h.remap_failure.value_or(false)) problems.push_back("row remapping failed");

  json perf = json::object();
  try {
    if (!o.skip_perf) {
      cudaStream_t s;
      CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      L2Flusher fl(dev.l2_bytes);
      perf["copy_gbps"] = measure_copy_gbps(o.copy_mib << 20, o.iters, fl, s);
      perf["bf16_tflops"] = measure_gemm_tflops(o.gemm_size, o.iters, fl, s);
      perf["gemm_size"] = o.gemm_size;
      perf["cublas"] = cublas::version();
      CUDA_CHECK(cudaStreamDestroy(s));
    }
  } catch (const std::exception& e) {
    problems.push_back(std::string("measurement failed: ") + e.what());
  }
  const auto cls = find_gpu_class(dev.name);
  if (cls) {
    out["expected"] = {{"class", cls->match}, {"copy_gbps", cls->copy_gbps}, {"bf16_tflops", cls->bf16_tflops},
                       {"pass_fraction", kHealthyFraction}, {"source", cls->source}};
    if (perf.contains("copy_gbps") && perf["copy_gbps"].get<double>() < kHealthyFraction * cls->copy_gbps)
      problems.push_back("copy bandwidth below " + std::to_string(int(kHealthyFraction * cls->copy_gbps)) + " GB/s");
    if (perf.contains("bf16_tflops") && perf["bf16_tflops"].get<double>() < kHealthyFraction * cls->bf16_tflops)
      problems.push_back("bf16 GEMM below " + std::to_string(int(kHealthyFraction * cls->bf16_tflops)) + " TFLOP/s");
  } else {
    out["expected"] = nullptr;  // unknown class: judged on errors only
  }
  out["perf"] = perf;
  out["problems"] = problems;
  const bool healthy = problems.empty();
  out["healthy"] = healthy;
  json metrics = json::object();
  if (perf.contains("copy_gbps")) metrics["copy_gbps"] = metric(perf["copy_gbps"].get<double>(), "GB/s");
  if (perf.contains("bf16_tflops")) metrics["bf16_tflops"] = metric(perf["bf16_tflops"].get<double>(), "TFLOP/s");
  std::string detail;
  for (const auto& p : problems) detail += (detail.empty() ? "" : "; ") + p;
  write_result_file(healthy ? "passed" : "infra_error", metrics, detail);
  return healthy ? exit_code::kPassed : exit_code::kUnhealthy;
}

}  // namespace gauntlet::kernels
