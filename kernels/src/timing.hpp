// Kernel timing with CUDA events: warm-up, L2 flushed before every timed run (outside the timed
// window), outputs poisoned, median of many runs. Contract: returns per-run milliseconds.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace gauntlet::kernels {

struct TimingStats {
  double p50 = 0, min = 0, p90 = 0;
  int runs = 0;
};

class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  ~L2Flusher();
  void flush(cudaStream_t s);  // writes 2x L2 worth of memory, evicting everything useful

 private:
  void* buf_ = nullptr;
  size_t bytes_ = 0;
};

// before(): untimed per-run setup (fresh inputs, poison); run(): the timed work.
std::vector<float> time_runs(int warmup, int iters, cudaStream_t s, L2Flusher& flusher,
                             const std::function<void()>& before, const std::function<void()>& run);
TimingStats summarize(std::vector<float> ms);

}  // namespace gauntlet::kernels
