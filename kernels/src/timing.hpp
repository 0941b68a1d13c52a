// Kernel timing with CUDA events: warm-up, L2 flushed before every timed run (outside the timed
// window), outputs poisoned, median of many runs. Contract: returns per-run milliseconds.
//
// The flush reads 2x L2 of a buffer, so L2 ends up holding only clean lines of it. Why not write:
// a memset flush leaves L2 full of dirty lines, and the timed kernel then pays for writing them
// back to memory as its own reads evict them (~50 MB of writes inside a 40 us gemv on the H200).
// GK_FLUSH=write selects the write flush again, for comparisons.
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
  void flush(cudaStream_t s);  // reads (or writes) 2x L2 worth of memory, evicting everything useful

 private:
  void* buf_ = nullptr;
  int* sink_ = nullptr;
  size_t bytes_ = 0;
  bool write_ = false;
};

// before(): untimed per-run setup (fresh inputs, poison); run(): the timed work.
std::vector<float> time_runs(int warmup, int iters, cudaStream_t s, L2Flusher& flusher,
                             const std::function<void()>& before, const std::function<void()>& run);
// launches back-to-back calls run(0) .. run(launches - 1), captured once into a CUDA graph, then
// replayed: warmup untimed replays, then iters replays each after before() and an L2 flush (outside
// the events). Returns milliseconds per launch (replay time / launches) for each timed replay.
// run() must only enqueue work on `s` (no synchronisation, nothing the capture refuses).
std::vector<float> time_graph(int warmup, int iters, cudaStream_t s, L2Flusher& flusher,
                              const std::function<void()>& before, int launches, const std::function<void(int)>& run);
TimingStats summarize(std::vector<float> ms);

}  // namespace gauntlet::kernels
