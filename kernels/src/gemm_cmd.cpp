// `gauntlet-kernels gemm` (see gemm_cmd.hpp). Flow: validate -> find the GPU -> backend accepts
// the shape and has a kernel image (else `unsupported`) -> random inputs on the GPU, quantized on
// the GPU -> poisoned output, one run, fp64 check on the CPU -> timed runs (fresh A, flushed L2,
// poisoned C before each; with --timing rotate, graph replays of back-to-back runs over rotated
// input sets, see time_rotated) -> a second check after timing (catches state that decays with
// reuse).
#include "gemm_cmd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "backend.hpp"
#include "cublas_dl.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "exit_codes.hpp"
#include "gauntlet/kernels/host.hpp"
#include "gen.cuh"
#include "quantize.cuh"
#include "result_file.hpp"
#include "timing.hpp"

namespace gauntlet::kernels {
namespace {
using json = nlohmann::json;
using nvfp4::ScaleLayout;

constexpr double kRelTol = 5e-3;  // bf16 output rounding alone is ~1e-3 (see docs/KERNELS.md)

int finish(json& out, const std::string& verdict, int code, const std::string& detail) {
  out["verdict"] = verdict;
  if (!detail.empty()) out["detail"] = detail;
  json metrics = json::object();
  auto add = [&](const char* key, const char* unit) {
    if (out.contains(key) && out[key].is_number()) metrics[key] = metric(out[key].get<double>(), unit);
  };
  add("tflops", "TFLOP/s");
  add("gbps", "GB/s");
  add("ms_p50", "ms");
  add("rel_err", "");
  add("max_abs_err", "");
  write_result_file(verdict, metrics, detail);
  return code;
}

// Rows the CPU reference checks: all of them when cheap, else first, last and evenly spaced.
std::vector<int> rows_to_check(int M, int N, int K, long long budget) {
  const long long per_row = static_cast<long long>(N) * K;
  const int want = static_cast<int>(std::clamp<long long>(budget / std::max(1LL, per_row), 2, M));
  std::vector<int> rows;
  if (want >= M) {
    for (int m = 0; m < M; ++m) rows.push_back(m);
    return rows;
  }
  for (int i = 0; i < want; ++i) rows.push_back(static_cast<int>(static_cast<long long>(M - 1) * i / (want - 1)));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Check {
  Comparison cmp;
  size_t unwritten = 0;  // poison (NaN) anywhere in C, also in rows the reference skipped
};

// The C elements of `a` that are NaN or Inf: poison left behind (0xFFFF) or a bad value. Copies C
// to the host in full; `c_out` (if given) receives it.
size_t count_non_finite(const GemmArgs& a, std::vector<uint16_t>* c_out = nullptr) {
  std::vector<uint16_t> c(static_cast<size_t>(a.M) * a.N);
  CUDA_CHECK(cudaMemcpy(c.data(), a.C, c.size() * 2, cudaMemcpyDeviceToHost));
  size_t n = 0;
  for (uint16_t v : c) n += (v & 0x7F80) == 0x7F80;
  if (c_out) *c_out = std::move(c);
  return n;
}

Check check_output(const GemmArgs& a, const std::vector<int>& rows, const std::vector<double>& ref) {
  std::vector<uint16_t> c;
  Check r;
  r.unwritten = count_non_finite(a, &c);
  std::vector<uint16_t> sel(rows.size() * static_cast<size_t>(a.N));
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(&sel[i * a.N], &c[static_cast<size_t>(rows[i]) * a.N], a.N * 2);
  r.cmp = compare(sel, ref, static_cast<int>(rows.size()), a.N, kRelTol);
  if (r.unwritten) r.cmp.passed = false;
  return r;
}

std::string describe_failure(const Check& c) {
  std::ostringstream s;
  s << "rel_err " << c.cmp.rel_err << " (tolerance " << kRelTol << "), " << c.cmp.mismatches
    << " elements over the element tolerance";
  if (c.unwritten) s << ", " << c.unwritten << " outputs NaN/Inf (poison not overwritten or non-finite result)";
  if (!c.cmp.first_mismatches.empty()) s << "; first: " << c.cmp.first_mismatches;
  return s.str();
}

// One set of device inputs and output for a shape: A normal(0,1) in bf16; W normal(0,1) quantized
// on the GPU. The scale buffer is sized for either layout so a deliberately misread layout stays in
// bounds. `args` points into the buffers (`told` is the layout the backend is told).
struct InputSet {
  DeviceBuffer<__nv_bfloat16> A, C;
  DeviceBuffer<uint8_t> Wq, Ws;
  DeviceBuffer<float> gs;  // [0] the global scale, [1] amax
  GemmArgs args;
};

std::unique_ptr<InputSet> make_inputs(const GemmOptions& o, ScaleLayout layout, ScaleLayout told, uint64_t seed,
                                      cudaStream_t stream) {
  const int M = o.M, N = o.N, K = o.K;
  auto in = std::make_unique<InputSet>();
  in->A = DeviceBuffer<__nv_bfloat16>(size_t(M) * K);
  in->C = DeviceBuffer<__nv_bfloat16>(size_t(M) * N);
  in->Wq = DeviceBuffer<uint8_t>(size_t(N) * K / 2);
  in->Ws = DeviceBuffer<uint8_t>(std::max(nvfp4::scale_bytes(ScaleLayout::plain, N, K),
                                          nvfp4::scale_bytes(ScaleLayout::swizzled, N, K)));
  in->gs = DeviceBuffer<float>(2);
  {
    DeviceBuffer<float> Wf(size_t(N) * K);
    fill_normal_gpu(Wf.get(), Wf.size(), seed * 2 + 1, stream);
    amax_gpu(Wf.get(), Wf.size(), in->gs.get() + 1, stream);
    global_scale_gpu(in->gs.get() + 1, in->gs.get(), stream);
    CUDA_CHECK(cudaMemsetAsync(in->Ws.get(), 0, in->Ws.bytes(), stream));
    quantize_gpu(Wf.get(), N, K, in->gs.get(), layout, in->Wq.get(), in->Ws.get(), stream);
    if (o.scale_signs == "mixed") negate_some_scales_gpu(in->Ws.get(), nvfp4::scale_bytes(layout, N, K), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));  // Wf is freed here
  }
  fill_normal_gpu(in->A.get(), in->A.size(), seed * 2, stream);
  float gscale = 0;
  CUDA_CHECK(cudaMemcpyAsync(&gscale, in->gs.get(), sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  in->args = GemmArgs{M, N, K, in->A.get(), in->Wq.get(), in->Ws.get(), told, gscale, in->C.get(), stream};
  return in;
}

// Back-to-back launches over rotated input sets, replayed from a CUDA graph (--timing rotate):
// enough sets that each launch's inputs were evicted by the ones between (4x L2, at least 2 sets),
// at least o.rotate_launches launches per replay (a whole number of rounds over the sets). Extra
// sets get their own backend (its own prepared weights).
// Fills `out` with the method's facts; returns per-launch ms for each replay, and in `unwritten`
// the NaN/Inf outputs found in any set after the replays (a launch that did not run leaves poison).
std::vector<float> time_rotated(const GemmOptions& o, const DeviceInfo& dev, Backend& be0, InputSet& set0,
                                ScaleLayout layout, ScaleLayout told, L2Flusher& flusher, json& out,
                                size_t& unwritten) {
  cudaStream_t stream = set0.args.stream;
  const double set_bytes = be0.min_bytes(o.M, o.N, o.K);
  const int nsets = int(std::clamp(std::ceil(4.0 * double(dev.l2_bytes) / set_bytes), 2.0, 16.0));
  std::vector<std::unique_ptr<InputSet>> sets;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<InputSet*> set(1, &set0);
  std::vector<Backend*> bes(1, &be0);
  for (int i = 1; i < nsets; ++i) {
    sets.push_back(make_inputs(o, layout, told, o.seed + 7919 * i, stream));
    backends.push_back(make_backend(o.backend, o.mma_path));
    backends.back()->prepare(sets.back()->args);
    set.push_back(sets.back().get());
    bes.push_back(backends.back().get());
  }
  const int launches = nsets * ((std::max(o.rotate_launches, nsets) + nsets - 1) / nsets);
  out["rotate_sets"] = nsets;
  out["rotate_bytes"] = nsets * set_bytes;
  out["graph_launches"] = launches;
  uint64_t replay = 0;
  auto before = [&] {  // fresh activations in every set, poisoned outputs
    ++replay;
    for (int i = 0; i < nsets; ++i) {
      fill_normal_gpu(set[i]->A.get(), set[i]->A.size(), o.seed * 2 + 1000003 * replay + 31 * i, stream);
      CUDA_CHECK(cudaMemsetAsync(set[i]->C.get(), 0xFF, set[i]->C.bytes(), stream));
    }
  };
  std::vector<float> ms = time_graph(o.warmup, o.iters, stream, flusher, before, launches,
                                     [&](int i) { bes[i % nsets]->run(set[i % nsets]->args); });
  unwritten = 0;
  for (InputSet* s : set) unwritten += count_non_finite(s->args);
  return ms;
}
}  // namespace

int run_gemm(const GemmOptions& o, json& out) {
  out = {{"backend", o.backend}, {"m", o.M}, {"n", o.N}, {"k", o.K}, {"seed", o.seed},
         {"scale_layout", o.scale_layout}, {"scale_signs", o.scale_signs},
         {"fault", o.fault.empty() ? json(nullptr) : json(o.fault)}};
  if (o.M < 1 || o.N < 1 || o.K < 1 || o.K % nvfp4::kBlock)
    return finish(out, "error", exit_code::kUsage, "need M, N, K >= 1 and K a multiple of 16 (one scale block)");
  if (o.scale_layout != "plain" && o.scale_layout != "swizzled")
    return finish(out, "error", exit_code::kUsage, "--scale-layout must be plain or swizzled");
  if (o.scale_signs != "positive" && o.scale_signs != "mixed")
    return finish(out, "error", exit_code::kUsage, "--scale-signs must be positive or mixed");
  if (!o.fault.empty() && o.fault != "scale-layout")
    return finish(out, "error", exit_code::kUsage, "--fault must be scale-layout");
  if (o.iters < 1) return finish(out, "error", exit_code::kUsage, "--iters must be at least 1");
  if (o.timing != "flush" && o.timing != "rotate")
    return finish(out, "error", exit_code::kUsage, "--timing must be flush or rotate");
  if (o.rotate_launches < 1 || o.rotate_launches > 1024)
    return finish(out, "error", exit_code::kUsage, "--rotate-launches must be 1..1024");

  const DeviceInfo dev = query_device();
  if (dev.no_gpu) {
    out["arch"] = nullptr;
    return finish(out, "infra_error", exit_code::kNoGpu, "no GPU: " + dev.why);
  }
  out["arch"] = dev.arch;
  out["gpu"] = dev.name;

  std::unique_ptr<Backend> be;
  try {
    be = make_backend(o.backend, o.mma_path);
  } catch (const std::exception& e) {
    return finish(out, "error", exit_code::kUsage, e.what());
  }
  if (!be) return finish(out, "error", exit_code::kUsage, "unknown backend " + o.backend + " (see `list`)");
  if (o.backend == "dequant_cublas" && !cublas::api().error.empty())
    return finish(out, "infra_error", exit_code::kError, cublas::api().error);
  if (const std::string why = be->check_shape(o.M, o.N, o.K); !why.empty())
    return finish(out, "unsupported", exit_code::kUnsupported, why);
  if (const cudaError_t e = be->probe(); e != cudaSuccess) {
    cudaGetLastError();
    out["cuda_error"] = cudaGetErrorName(e);
    return finish(out, "unsupported", exit_code::kUnsupported,
                  o.backend + " has no kernel image for " + dev.arch + ": " + cudaGetErrorString(e));
  }

  try {
    const int M = o.M, N = o.N, K = o.K;
    const ScaleLayout layout = o.scale_layout == "swizzled" ? ScaleLayout::swizzled : ScaleLayout::plain;
    const ScaleLayout told = o.fault == "scale-layout"
                                 ? (layout == ScaleLayout::plain ? ScaleLayout::swizzled : ScaleLayout::plain)
                                 : layout;
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    std::unique_ptr<InputSet> in0 = make_inputs(o, layout, told, o.seed, stream);
    GemmArgs& args = in0->args;
    Nvfp4Matrix wh;
    wh.rows = N;
    wh.cols = K;
    wh.layout = layout;
    wh.packed.resize(in0->Wq.size());
    wh.scales.resize(nvfp4::scale_bytes(layout, N, K));
    wh.global_scale = args.global_scale;
    CUDA_CHECK(cudaMemcpy(wh.packed.data(), in0->Wq.get(), in0->Wq.size(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(wh.scales.data(), in0->Ws.get(), wh.scales.size(), cudaMemcpyDeviceToHost));
    be->prepare(args);

    // Reference on the checked rows, from the exact bytes the GPU holds.
    const std::vector<int> rows = rows_to_check(M, N, K, o.check_budget);
    auto reference_rows = [&]() {
      std::vector<uint16_t> a_bf(static_cast<size_t>(M) * K);
      CUDA_CHECK(cudaMemcpy(a_bf.data(), args.A, a_bf.size() * 2, cudaMemcpyDeviceToHost));
      std::vector<float> a_f(static_cast<size_t>(M) * K);
      for (size_t i = 0; i < a_f.size(); ++i) a_f[i] = bf16_to_f32(a_bf[i]);
      std::vector<double> a_ref(rows.size() * static_cast<size_t>(K));
      if (be->quantizes_activations()) {
        // W4A4: the backend multiplies NVFP4(A); so must the reference (same quantizer).
        const Nvfp4Matrix aq = quantize_cpu(a_f, M, K, ScaleLayout::plain);
        for (size_t i = 0; i < rows.size(); ++i)
          for (int k = 0; k < K; ++k) a_ref[i * K + k] = aq.at(rows[i], k);
      } else {
        for (size_t i = 0; i < rows.size(); ++i)
          for (int k = 0; k < K; ++k) a_ref[i * K + k] = a_f[static_cast<size_t>(rows[i]) * K + k];
      }
      return reference_gemm_fp64(a_ref, static_cast<int>(rows.size()), wh, 0);
    };
    const std::vector<double> ref = reference_rows();

    auto poison = [&]() { CUDA_CHECK(cudaMemsetAsync(in0->C.get(), 0xFF, in0->C.bytes(), stream)); };  // bf16 NaN
    poison();
    be->run(args);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Check first = check_output(args, rows, ref);

    // Timing: fresh A each run (different seed), L2 flushed, C poisoned; all outside the events.
    L2Flusher flusher(dev.l2_bytes);
    uint64_t run_no = 0;
    auto before = [&]() {
      fill_normal_gpu(in0->A.get(), in0->A.size(), o.seed * 2 + 1000003 * (++run_no), stream);
      poison();
    };
    size_t rotated_unwritten = 0;
    out["timing"] = o.timing;
    const TimingStats t = summarize(
        o.timing == "rotate"
            ? time_rotated(o, dev, *be, *in0, layout, told, flusher, out, rotated_unwritten)
            : time_runs(o.warmup, o.iters, stream, flusher, before, [&] { be->run(args); }));

    // Same inputs as the first check again, after the timed runs.
    fill_normal_gpu(in0->A.get(), in0->A.size(), o.seed * 2, stream);
    poison();
    be->run(args);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Check second = check_output(args, rows, ref);
    CUDA_CHECK(cudaStreamDestroy(stream));

    const Check& worst = !first.cmp.passed ? first : second;
    const double secs = t.p50 * 1e-3;
    out["rel_err"] = std::max(first.cmp.rel_err, second.cmp.rel_err);
    out["max_abs_err"] = std::max(first.cmp.max_abs_err, second.cmp.max_abs_err);
    out["mismatches"] = worst.cmp.mismatches;
    out["checked_rows"] = rows.size();
    out["tolerance"] = kRelTol;
    out["ms_p50"] = t.p50;
    out["ms_min"] = t.min;
    out["ms_p90"] = t.p90;
    out["iters"] = t.runs;
    out["tflops"] = secs > 0 ? 2.0 * M * N * K / secs * 1e-12 : 0.0;
    out["gbps"] = secs > 0 ? be->min_bytes(M, N, K) / secs * 1e-9 : 0.0;
    out["min_bytes"] = be->min_bytes(M, N, K);
    if (const std::string v = be->variant(); !v.empty()) out["variant"] = v;
    if (first.cmp.passed && second.cmp.passed && rotated_unwritten) {
      out["unwritten"] = rotated_unwritten;
      return finish(out, "wrong_output", exit_code::kWrongOutput,
                    std::to_string(rotated_unwritten) + " outputs NaN/Inf after the rotated graph replays");
    }
    if (first.cmp.passed && second.cmp.passed) return finish(out, "passed", exit_code::kPassed, "");
    if (!worst.cmp.first_mismatches.empty()) out["first_mismatches"] = worst.cmp.first_mismatches;
    return finish(out, "wrong_output", exit_code::kWrongOutput, describe_failure(worst));
  } catch (const CudaError& e) {
    out["cuda_error"] = cudaGetErrorName(e.code);
    const bool oom = e.code == cudaErrorMemoryAllocation;
    return finish(out, oom ? "oom" : "crashed", exit_code::kError, e.what());
  } catch (const std::exception& e) {
    return finish(out, "crashed", exit_code::kError, e.what());
  }
}

}  // namespace gauntlet::kernels
