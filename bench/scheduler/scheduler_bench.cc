// Scheduler bench: how long Scheduler::TryLease takes to choose the next trial with ~100,000 trials
// queued across 100 sweeps and 1,000 nodes of mixed architectures and GPU counts, with pruning on.
// Fake clock, fake store (no SQLite), one thread: this measures the scheduler's own work, which the
// daemon does under its one mutex for every lease request.
//
//   gauntlet-scheduler-bench [--sweeps 100] [--trials-per-sweep 1000] [--nodes 1000] [--calls 50000] [--seed 1]
//
// Two phases over the same state, each `calls` TryLease calls on random nodes, with a trial
// finishing before every call once the fleet is busy:
//   steady   every finished trial passed (no pruning);
//   pruning  about one finished trial in eight ends unsupported or crashed in a gated stage, so
//            pruning skips queued trials while leases go on (Report timings are printed too).
// The queue is topped up with fresh sweeps so it stays near its starting size. Prints JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet {
namespace {
using nlohmann::json;
using Clk = std::chrono::steady_clock;

using test::FakeClock;

// Never has a reusable result (reuse is a store lookup, not scheduler work) and records nothing.
struct FakeStore : test::FakeSchedulerStore {
  FakeStore() { record = false; }
};

struct Arch {
  const char* gpu;
  int major, minor;
};
// sm_80 nodes: hardware no sweep asks for, so every call from them scans every sweep and finds nothing.
const Arch kArchs[] = {{"NVIDIA H200", 9, 0}, {"NVIDIA B200", 10, 0}, {"NVIDIA RTX PRO 6000 Blackwell", 12, 0},
                       {"NVIDIA A100", 8, 0}};
const char* kArchNames[] = {"sm_90", "sm_100", "sm_120"};
const char* kMoe[] = {"flashinfer_cutlass", "flashinfer_trtllm", "flashinfer_cutedsl", "triton"};
const char* kGemm[] = {"flashinfer_cutlass", "flashinfer_cudnn", "flashinfer_trtllm"};

// Thread CPU time as well as wall time: on a shared VM the wall-clock tail is mostly the thread
// being descheduled, which CPU time leaves out; the two together tell work from waiting.
double ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct Stats {
  std::vector<double> us, cpu_us;
  void Add(double wall, double cpu) {
    us.push_back(wall);
    cpu_us.push_back(cpu);
  }
  static json Summary(std::vector<double> v) {
    if (v.empty()) return json{{"calls", 0}};
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))]; };
    double sum = 0;
    for (double x : v) sum += x;
    return {{"calls", v.size()}, {"mean_us", sum / v.size()}, {"p50_us", q(0.50)}, {"p99_us", q(0.99)},
            {"p999_us", q(0.999)}, {"max_us", v.back()}};
  }
  json Json() const { return {{"wall", Summary(us)}, {"thread_cpu", Summary(cpu_us)}}; }
};

int Arg(int argc, char** argv, const char* name, int def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], name)) return atoi(argv[i + 1]);
  return def;
}

}  // namespace
}  // namespace gauntlet

namespace gauntlet {
namespace {

// The bench's state: the scheduler over fake seams, its fleet and sweeps, and the leases held.
struct Bench {
  int n_nodes, per_sweep, calls;
  std::mt19937_64 rng;
  FakeClock clock;
  FakeStore store;
  std::unique_ptr<daemon::Scheduler> s;
  int64_t next_trial = 1, next_sweep = 1;
  size_t queued_start = 0;
  std::vector<std::string> active;  // leases held
  int64_t prune_events = 0, granted = 0, empty = 0;
  Stats report_prune, report_plain;

  Bench(int nodes, int per, int n_calls, uint64_t seed) : n_nodes(nodes), per_sweep(per), calls(n_calls), rng(seed) {
    daemon::SchedulerOptions opts;
    opts.lease_ttl_ms = int64_t{1} << 40;  // leases end by report here, never by expiry
    opts.offline_after_ms = int64_t{1} << 40;
    opts.quarantine_after = 1 << 30;
    s = std::make_unique<daemon::Scheduler>(clock, store, opts);
    active.reserve(16384);
  }

  // Nodes: mostly 8-GPU boxes, some 1/2/4-GPU workstations; a tenth are sm_80, which nobody targets.
  void AddNodes() {
    const int gpu_counts[] = {8, 8, 8, 4, 2, 1};
    for (int i = 0; i < n_nodes; ++i) {
      daemon::TrackedNode n;
      n.id = i + 1;
      n.name = "node-" + std::to_string(i);
      const Arch& a = kArchs[i % 10 == 9 ? 3 : i % 3];
      const int g = gpu_counts[rng() % 6];
      for (int k = 0; k < g; ++k)
        n.inv.gpus.push_back({k, a.gpu, "GPU-" + std::to_string(i) + "-" + std::to_string(k), a.major, a.minor, 97887});
      s->UpsertNode(std::move(n));
    }
  }

  // Sweeps: moe x gemm x a model parameter, over one to three arch targets, 1/2/4/8 GPUs each.
  void AddSweep() {
    daemon::SweepInfo info;
    info.id = next_sweep++;
    info.priority = info.id % 10 == 0 ? 1 : 0;
    info.gate_on = {{"gemm", {"fp4_gemm_backend"}}, {"moe", {"moe_runner_backend"}},
                    {"serve", {"moe_runner_backend", "fp4_gemm_backend"}}};
    const int n_targets = 1 + static_cast<int>(rng() % 3);
    std::vector<Need> needs;
    for (int t = 0; t < n_targets; ++t) {
      Need nd;
      nd.gpus = 1 << (rng() % 4);
      nd.arch = {kArchNames[(info.id + t) % 3]};
      needs.push_back(nd);
    }
    const int models = std::max(1, (per_sweep + 12 * n_targets - 1) / (12 * n_targets));  // then cut at per_sweep
    std::vector<daemon::QueuedTrial> trials;
    trials.reserve(per_sweep);
    for (int m = 0; m < models && static_cast<int>(trials.size()) < per_sweep; ++m)
      for (auto* moe : kMoe)
        for (auto* gemm : kGemm)
          for (int t = 0; t < n_targets; ++t) {
            if (static_cast<int>(trials.size()) >= per_sweep) break;
            daemon::QueuedTrial q;
            q.id = next_trial++;
            q.sweep = info.id;
            q.suite_id = 1;
            q.target = t;
            q.need = needs[t];
            q.config = {{"moe_runner_backend", moe}, {"fp4_gemm_backend", gemm}, {"model", "m" + std::to_string(m)}};
            q.config_key = ConfigKey(q.config);
            q.cost_s = 60 + static_cast<double>(rng() % 600);
            trials.push_back(std::move(q));
          }
    s->AddSweep(info, std::move(trials));
  }

  // Reports one held lease: with `pruning`, one in sixteen unsupported and one in sixteen crashed.
  void FinishOne(bool pruning) {
    if (active.empty()) return;
    const size_t i = rng() % active.size();
    std::string lease = active[i];
    active[i] = active.back();
    active.pop_back();
    store::ResultRow r;
    const unsigned roll = static_cast<unsigned>(rng() % 16);
    if (pruning && roll < 1) {
      r.verdict = Verdict::kUnsupported;
      r.failing_stage = rng() % 2 ? "gemm" : "moe";
      r.signature = "unsupported:arch_gate";
    } else if (pruning && roll < 2) {
      r.verdict = Verdict::kCrashed;
      r.failing_stage = "serve";
      r.signature = "crashed:RuntimeError:Error Internal@runtime.py";
    } else {
      r.verdict = Verdict::kPassed;
    }
    const size_t before = store.skipped;
    const double c0 = ThreadCpuUs();
    auto t0 = Clk::now();
    auto out = s->Report(lease, r);
    const double us = std::chrono::duration<double, std::micro>(Clk::now() - t0).count();
    const double cpu = ThreadCpuUs() - c0;
    if (!out.ok()) {
      fprintf(stderr, "report failed: %s\n", out.status().message().c_str());
      exit(1);
    }
    (static_cast<size_t>(store.skipped) != before ? (++prune_events, report_prune) : report_plain).Add(us, cpu);
  }

  // `calls` TryLease calls on random nodes, a trial finishing before about every other one.
  Stats Phase(bool pruning) {
    Stats st;
    for (int c = 0; c < calls; ++c) {
      // Keep the queue near its starting size; finish a trial before each call once leases pile up.
      while (s->queued() + per_sweep <= queued_start) AddSweep();
      if (active.size() > 2000 || rng() % 2) FinishOne(pruning);
      clock.now += 1;
      const int64_t node = 1 + static_cast<int64_t>(rng() % n_nodes);
      const daemon::TrackedNode* n = s->Node(node);
      std::vector<int> free;
      for (auto& g : n->inv.gpus)
        if (!n->busy_gpus.count(g.index)) free.push_back(g.index);
      const double c0 = ThreadCpuUs();
      auto t0 = Clk::now();
      auto g = s->TryLease(node, free);
      const double wall = std::chrono::duration<double, std::micro>(Clk::now() - t0).count();
      st.Add(wall, ThreadCpuUs() - c0);
      if (!g.ok()) {
        fprintf(stderr, "lease failed: %s\n", g.status().message().c_str());
        exit(1);
      }
      if (*g) {
        active.push_back((*g)->lease);
        ++granted;
      } else {
        ++empty;
      }
    }
    return st;
  }
};

}  // namespace
}  // namespace gauntlet

int main(int argc, char** argv) {
  using namespace gauntlet;
  const int n_sweeps = Arg(argc, argv, "--sweeps", 100);
  Bench b(Arg(argc, argv, "--nodes", 1000), Arg(argc, argv, "--trials-per-sweep", 1000), Arg(argc, argv, "--calls", 50000),
          Arg(argc, argv, "--seed", 1));
  b.AddNodes();
  for (int i = 0; i < n_sweeps; ++i) b.AddSweep();
  b.queued_start = b.s->queued();
  Stats steady = b.Phase(false);
  const int64_t skipped_before = b.store.skipped;
  Stats pruning = b.Phase(true);
  json out = {{"bench", "scheduler"},
              {"nodes", b.n_nodes},
              {"sweeps_at_start", n_sweeps},
              {"sweeps_added", b.next_sweep - 1},
              {"queued_at_start", b.queued_start},
              {"queued_at_end", b.s->queued()},
              {"leases_held_at_end", b.active.size()},
              {"grants", b.granted},
              {"empty_answers", b.empty},
              {"try_lease_steady", steady.Json()},
              {"try_lease_with_pruning", pruning.Json()},
              {"prune_events", b.prune_events},
              {"trials_skipped", b.store.skipped - skipped_before},
              {"report_that_pruned", b.report_prune.Json()},
              {"report_other", b.report_plain.Json()}};
  printf("%s\n", out.dump(2).c_str());
  // The target (issue 7): the choice of the next trial under 1 ms. Judged on p99 of wall time.
  const bool ok = steady.Json()["wall"]["p99_us"].get<double>() < 1000 &&
                  pruning.Json()["wall"]["p99_us"].get<double>() < 1000;
  return ok ? 0 : 1;
}
