// CUDA-event timing helpers (see timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cuda_check.hpp"
#include "l2_flush.cuh"

namespace gauntlet::kernels {

L2Flusher::L2Flusher(size_t l2_bytes) : bytes_(std::max<size_t>(2 * l2_bytes, 64u << 20)) {
  const char* mode = std::getenv("GK_FLUSH");
  write_ = mode && std::string(mode) == "write";
  CUDA_CHECK(cudaMalloc(&buf_, bytes_));
  CUDA_CHECK(cudaMalloc(&sink_, sizeof(int)));
  CUDA_CHECK(cudaMemset(buf_, 0, bytes_));
}
L2Flusher::~L2Flusher() {
  if (buf_) cudaFree(buf_);
  if (sink_) cudaFree(sink_);
}
void L2Flusher::flush(cudaStream_t s) {
  if (write_) CUDA_CHECK(cudaMemsetAsync(buf_, 0, bytes_, s));
  else l2_read_flush(buf_, bytes_, sink_, s);
}

std::vector<float> time_runs(int warmup, int iters, cudaStream_t s, L2Flusher& flusher,
                             const std::function<void()>& before, const std::function<void()>& run) {
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  try {
    for (int i = 0; i < warmup; ++i) {
      before();
      run();
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < iters; ++i) {
      before();
      flusher.flush(s);
      CUDA_CHECK(cudaEventRecord(e0, s));
      run();
      CUDA_CHECK(cudaEventRecord(e1, s));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
  } catch (...) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    throw;
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  return ms;
}

std::vector<float> time_graph(int warmup, int iters, cudaStream_t s, L2Flusher& flusher,
                              const std::function<void()>& before, int launches, const std::function<void(int)>& run) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  try {
    for (int i = 0; i < launches; ++i) run(i);
  } catch (...) {
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(inst);
  std::vector<float> ms;
  try {
    ms = time_runs(warmup, iters, s, flusher, before, [&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); });
  } catch (...) {
    cudaGraphExecDestroy(exec);
    throw;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  for (float& t : ms) t /= float(launches);
  return ms;
}

TimingStats summarize(std::vector<float> ms) {
  TimingStats t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  t.runs = int(ms.size());
  t.min = ms.front();
  t.p50 = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  t.p90 = ms[std::min(ms.size() - 1, size_t(ms.size() * 0.9))];
  return t;
}

}  // namespace gauntlet::kernels
