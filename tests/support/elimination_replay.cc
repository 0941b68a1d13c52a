#include "tests/support/elimination_replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <queue>
#include <set>
#include <stdexcept>

#include "daemon/scheduler.h"
#include "tests/support/scheduler_fakes.h"

namespace gauntlet::test {
using nlohmann::json;

json ReplayResult::ToJson() const {
  json j = {{"trials", trials}, {"runs", runs}, {"gpu_hours", gpu_hours}, {"exhaustive_gpu_hours", exhaustive_gpu_hours},
          {"gpu_hours_fraction", exhaustive_gpu_hours > 0 ? gpu_hours / exhaustive_gpu_hours : 0},
          {"wrong_cells", wrong_cells}, {"flaky_cells_recorded", flaky_cells}, {"skipped", skipped},
          {"hours_to_complete", hours_to_complete}, {"passing_trials", passing_trials},
          {"passing_gpu_hours_fraction", trials > 0 ? static_cast<double>(passing_trials) / static_cast<double>(trials) : 0}};
  if (priced) {
    j["cost"] = cost;
    j["exhaustive_cost"] = exhaustive_cost;
    j["cost_fraction"] = exhaustive_cost > 0 ? cost / exhaustive_cost : 0;
  }
  return j;
}

namespace {

std::vector<Config> Expand(const Grid& g) {
  std::vector<Config> out = {Config{}};
  for (auto& [name, values] : g.params) {
    std::vector<Config> next;
    for (auto& c : out)
      for (auto& v : values) {
        Config d = c;
        d[name] = v;
        next.push_back(std::move(d));
      }
    out = std::move(next);
  }
  return out;
}

daemon::TrackedNode MakeNode(int64_t id, const std::string& arch) {
  daemon::TrackedNode n;
  n.id = id;
  n.name = arch + "-" + std::to_string(id);
  const int cc = std::stoi(arch.substr(3));
  n.inv.gpus.push_back({0, "GPU " + arch, "GPU-" + std::to_string(id), cc / 10, cc % 10, 80000});
  return n;
}

struct Run {
  int64_t end = 0, node = 0;
  std::string lease;
  int64_t trial = 0;
  bool operator>(const Run& o) const { return end != o.end ? end > o.end : node > o.node; }
};

}  // namespace

ReplayResult Replay(const Grid& g, const ReplayOptions& o) {
  FakeClock clock;
  FakeSchedulerStore store;
  daemon::SchedulerOptions so;
  so.lease_ttl_ms = so.offline_after_ms = int64_t{1} << 50;  // the replay never ticks: nothing expires
  daemon::Scheduler s(clock, store, so);
  const int64_t start = clock.now;
  int64_t node_id = 1;
  std::vector<int64_t> nodes;
  for (auto& arch : g.archs)
    for (int i = 0; i < g.nodes_per_arch; ++i) {
      s.UpsertNode(MakeNode(node_id, arch));
      nodes.push_back(node_id++);
    }
  const std::vector<Config> configs = Expand(g);
  std::vector<std::pair<const Config*, int>> of;  // trial id - 1 -> (config, arch index)
  std::vector<daemon::QueuedTrial> trials;
  for (auto& c : configs)
    for (size_t a = 0; a < g.archs.size(); ++a) {
      daemon::QueuedTrial t;
      t.id = static_cast<int64_t>(trials.size()) + 1;
      t.sweep = 1;
      t.target = static_cast<int>(a);
      t.need.gpus = 1;
      t.need.arch = {g.archs[a]};
      t.config = c;
      t.config_key = ConfigKey(c);
      t.cost_s = g.cost_s;
      t.price = g.prices.empty() ? 1.0 : g.prices.at(a);
      trials.push_back(std::move(t));
      of.emplace_back(&c, static_cast<int>(a));
    }
  daemon::SweepInfo info;
  info.id = 1;
  info.prune = o.prune;
  info.reuse = false;
  info.settle_first = o.settle_first;
  info.confirm_failures = o.confirm_failures;
  for (auto& [stage, gate] : g.stages) info.gate_on[stage] = gate;
  ReplayResult res;
  res.trials = static_cast<int64_t>(trials.size());
  res.exhaustive_gpu_hours = static_cast<double>(res.trials) * g.cost_s / 3600;
  res.priced = !g.prices.empty();
  std::vector<double> trial_cost;  // by trial id - 1
  for (auto& t : trials) trial_cost.push_back(daemon::TrialCost(t));
  for (double c : trial_cost) res.exhaustive_cost += c;
  s.AddSweep(info, std::move(trials));

  std::vector<Truth> truth(of.size());
  for (size_t i = 0; i < of.size(); ++i) truth[i] = g.truth(*of[i].first, g.archs[of[i].second]);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> flake(0.0, 1.0);
  std::set<int64_t> idle(nodes.begin(), nodes.end());
  std::priority_queue<Run, std::vector<Run>, std::greater<Run>> running;
  const int64_t cost_ms = static_cast<int64_t>(g.cost_s * 1000);
  for (;;) {
    for (auto it = idle.begin(); it != idle.end();) {
      auto grant = s.TryLease(*it, {0});
      if (!grant.ok() || !*grant) {
        ++it;
        continue;
      }
      running.push({clock.now + cost_ms, *it, (*grant)->lease, (*grant)->trial});
      ++res.runs;
      it = idle.erase(it);
    }
    if (running.empty()) break;
    Run r = running.top();
    running.pop();
    clock.now = r.end;
    const size_t i = static_cast<size_t>(r.trial - 1);
    res.cost += trial_cost[i];
    const Truth& t = truth[i];
    store::ResultRow row;
    if (t.flaky && flake(rng) < o.flaky_fail_rate) {  // each run fails at random, on its own
      row.verdict = Verdict::kCrashed;
      row.failing_stage = g.stages.back().first;
      row.signature = "crashed:NCCL:unhandled_system_error";
    } else {
      row.verdict = ParseVerdict(t.verdict).value();  // the ground truth names a verdict
      row.failing_stage = t.stage;
      row.signature = t.signature;
    }
    // A refused report would leave the replay's counts wrong without saying so.
    if (auto rep = s.Report(r.lease, row); !rep.ok()) throw std::runtime_error("replay: " + rep.status().message());
    idle.insert(r.node);
  }
  res.gpu_hours = static_cast<double>(res.runs) * g.cost_s / 3600;
  res.hours_to_complete = static_cast<double>(clock.now - start) / 3.6e6;
  for (size_t i = 0; i < of.size(); ++i) {
    const int64_t id = static_cast<int64_t>(i) + 1;
    auto v = store.verdicts.find(id);
    const std::string got = v == store.verdicts.end() ? "" : v->second;
    if (got == "skipped") ++res.skipped;
    const bool truly_passes = truth[i].verdict == "passed";
    if (truly_passes) ++res.passing_trials;
    if (got.empty() || (truly_passes ? got != "passed" : got == "passed")) ++res.wrong_cells;
    auto r = store.results.find(id);
    if (truth[i].flaky && r != store.results.end() && r->second.flaky) ++res.flaky_cells;
  }
  return res;
}

json SeededSummary::ToJson() const {
  return {{"seeds", seeds},
          {"wrong_cells", {{"mean", wrong_mean}, {"sd", wrong_sd}, {"mean_upper95", wrong_upper95}, {"p95", wrong_p95},
                           {"max", wrong_max}}},
          {"seeds_with_wrong_cells", {{"count", seeds_with_wrong},
                                      {"fraction", seeds > 0 ? static_cast<double>(seeds_with_wrong) / seeds : 0},
                                      {"upper95", seeds_with_wrong_upper95}}},
          {"gpu_hours_fraction", {{"mean", fraction_mean}, {"min", fraction_min}, {"max", fraction_max}}},
          {"runs_mean", runs_mean}, {"flaky_cells_recorded_mean", flaky_recorded_mean},
          {"hours_to_complete_mean", hours_mean}};
}

SeededSummary ReplaySeeds(const Grid& g, ReplayOptions o, int seeds) {
  SeededSummary s;
  s.seeds = seeds;
  if (seeds <= 0) return s;
  std::vector<int64_t> wrong;
  double sum = 0, sum2 = 0;
  s.fraction_min = 1e300;
  const uint64_t first = o.seed;
  for (int i = 0; i < seeds; ++i) {
    o.seed = first + static_cast<uint64_t>(i);
    const ReplayResult r = Replay(g, o);
    wrong.push_back(r.wrong_cells);
    sum += static_cast<double>(r.wrong_cells);
    sum2 += static_cast<double>(r.wrong_cells) * static_cast<double>(r.wrong_cells);
    s.seeds_with_wrong += r.wrong_cells > 0;
    const double f = r.exhaustive_gpu_hours > 0 ? r.gpu_hours / r.exhaustive_gpu_hours : 0;
    s.fraction_mean += f / seeds;
    s.fraction_min = std::min(s.fraction_min, f);
    s.fraction_max = std::max(s.fraction_max, f);
    s.runs_mean += static_cast<double>(r.runs) / seeds;
    s.flaky_recorded_mean += static_cast<double>(r.flaky_cells) / seeds;
    s.hours_mean += r.hours_to_complete / seeds;
  }
  const double n = seeds;
  s.wrong_mean = sum / n;
  s.wrong_sd = seeds > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * sum / n) / (n - 1))) : 0;
  s.wrong_upper95 = s.wrong_mean + 1.645 * s.wrong_sd / std::sqrt(n);  // one-sided, normal approximation
  std::sort(wrong.begin(), wrong.end());
  s.wrong_p95 = wrong[std::min(wrong.size() - 1, static_cast<size_t>(std::ceil(0.95 * n)) - 1)];
  s.wrong_max = wrong.back();
  // Wilson upper bound (one-sided 95%, z = 1.645) on the share of seeds with a wrong cell: with none
  // seen in n seeds it is still about 2.7 / n, not 0.
  const double z = 1.645, p = s.seeds_with_wrong / n;
  s.seeds_with_wrong_upper95 =
      std::min(1.0, (p + z * z / (2 * n) + z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n));
  return s;
}

namespace {
Truth Refused(const std::string& stage, const std::string& why) { return {"unsupported", stage, "unsupported:" + why}; }
}  // namespace

// The seed's bring-up (suites/demo/backend.py's rules): NVFP4 GEMM needs Blackwell, TRT-LLM's GEMM
// and MoE are sm_100-only, CuTe DSL MoE dies on sm_120, cuDNN FP4 on sm_120 answers garbage; one
// config on sm_100 flaky.
Grid SeedGrid() {
  Grid g;
  g.name = "seed-4x3-3arch";
  g.params = {{"moe", {"flashinfer_cutlass", "flashinfer_trtllm", "flashinfer_cutedsl", "triton"}},
              {"gemm", {"flashinfer_cutlass", "flashinfer_cudnn", "flashinfer_trtllm"}}};
  g.archs = {"sm_90", "sm_100", "sm_120"};
  g.stages = {{"gemm", {"gemm"}}, {"moe", {"moe"}}, {"serve", {"moe", "gemm"}}};
  g.truth = [](const Config& c, const std::string& arch) -> Truth {
    const std::string& moe = c.at("moe");
    const std::string& gemm = c.at("gemm");
    if (arch == "sm_90") return Refused("gemm", "nvfp4_requires_blackwell");
    if (gemm == "flashinfer_trtllm" && arch != "sm_100") return Refused("gemm", "sm100a_only");
    if (moe == "flashinfer_trtllm" && arch != "sm_100") return Refused("moe", "trtllm_moe_sm100_only");
    if (moe == "flashinfer_cutedsl" && arch == "sm_120") return {"crashed", "serve", "crashed:RuntimeError:Error Internal"};
    if (gemm == "flashinfer_cudnn" && arch == "sm_120") return {"wrong_output", "serve", "wrong_output:smoke:expected_Paris"};
    Truth t;
    t.flaky = arch == "sm_100" && moe == "triton" && gemm == "flashinfer_cutlass";
    return t;
  };
  return g;
}

// 5 MoE runners x 5 GEMM backends x 4 batch sizes (not gated) on three architectures, refusals per
// value (a runner or a backend an architecture lacks), failures per pair (a runner that crashes or
// answers garbage with one backend), and flaky pairs (NCCL that fails one run in three).
Grid MediumGrid() {
  Grid g;
  g.name = "medium-5x5x4-3arch";
  g.params = {{"moe", {"m1", "m2", "m3", "m4", "m5"}}, {"gemm", {"g1", "g2", "g3", "g4", "g5"}},
              {"batch", {"1", "8", "32", "128"}}};
  g.archs = {"sm_90", "sm_100", "sm_120"};
  g.stages = {{"gemm", {"gemm"}}, {"moe", {"moe"}}, {"serve", {"moe", "gemm"}}};
  g.truth = [](const Config& c, const std::string& arch) -> Truth {
    const std::string& m = c.at("moe");
    const std::string& k = c.at("gemm");
    auto in = [](const std::string& v, std::initializer_list<const char*> set) {
      for (const char* s : set)
        if (v == s) return true;
      return false;
    };
    const std::string pair = m + "/" + k;
    Truth t;
    if (arch == "sm_90") {
      if (in(k, {"g4", "g5"})) return Refused("gemm", "gemm_requires_sm100");
      if (in(m, {"m3", "m4", "m5"})) return Refused("moe", "moe_sm100_only");
      if (pair == "m1/g3") return {"crashed", "serve", "crashed:RuntimeError:CUTLASS Error Internal"};
      t.flaky = pair == "m2/g2" && c.at("batch") == "1";
    } else if (arch == "sm_100") {
      if (in(k, {"g3", "g4", "g5"})) return Refused("gemm", "gemm_not_built_for_sm100");
      if (m == "m5") return Refused("moe", "moe_sm90_only");
      if (pair == "m2/g2" || pair == "m4/g1") return {"crashed", "serve", "crashed:CUDA error: illegal memory access"};
      if (pair == "m3/g2") return {"wrong_output", "serve", "wrong_output:garbage:repeated_char"};
      t.flaky = pair == "m1/g1" && c.at("batch") == "32";
    } else {
      if (in(k, {"g1", "g2", "g5"})) return Refused("gemm", "no_kernel_image_sm120");
      if (in(m, {"m1", "m2"})) return Refused("moe", "moe_requires_sm100a");
      if (pair == "m5/g4") return {"crashed", "serve", "crashed:RuntimeError:CUTLASS Error Internal"};
      t.flaky = pair == "m3/g3" && c.at("batch") == "128";
    }
    return t;
  };
  return g;
}

Grid PricedGrid() {
  Grid g = MediumGrid();
  g.name = "priced-5x5x4-dear-cheap";
  g.archs = {"sm_100", "sm_120"};
  g.prices = {6.0, 1.5};
  return g;
}

// 10 x 10 x 10 x 10 on one architecture (10,000 trials), 8 nodes: six runners and five backends
// refused, two crashing pairs, one flaky pair (100 configs).
Grid LargeGrid() {
  Grid g;
  g.name = "large-10x10x10x10-1arch";
  auto ten = [](const std::string& p) {
    std::vector<std::string> v;
    for (int i = 1; i <= 10; ++i) v.push_back(p + std::to_string(i));
    return v;
  };
  g.params = {{"moe", ten("m")}, {"gemm", ten("g")}, {"batch", ten("b")}, {"seq", ten("s")}};
  g.archs = {"sm_100"};
  g.nodes_per_arch = 8;
  g.stages = {{"gemm", {"gemm"}}, {"moe", {"moe"}}, {"serve", {"moe", "gemm"}}};
  g.truth = [](const Config& c, const std::string&) -> Truth {
    const int m = std::stoi(c.at("moe").substr(1)), k = std::stoi(c.at("gemm").substr(1));
    if (k >= 6) return Refused("gemm", "gemm_not_built_for_sm100");
    if (m >= 5) return Refused("moe", "moe_sm90_only");
    if ((m == 1 && k == 2) || (m == 3 && k == 4)) return {"crashed", "serve", "crashed:CUDA error: illegal memory access"};
    Truth t;
    t.flaky = m == 2 && k == 3;
    return t;
  };
  return g;
}

}  // namespace gauntlet::test
