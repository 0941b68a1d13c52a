#include "workers/rank_group.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "core/signal_names.h"

namespace gauntlet::worker {
using proc::ExitInfoProc;
using proc::ProcessRunner;
using proc::ProcessSpec;
using proc::RunningProcess;
namespace {

// One rank's output cut into lines, each prefixed "[rankN]: " (what torchrun's --tee prints). A
// line longer than 64 KiB is cut there, as the classifier would cut it.
class RankPrefixer {
 public:
  explicit RankPrefixer(int rank) : prefix_("[rank" + std::to_string(rank) + "]: ") {}
  void Feed(std::string_view chunk, std::string& out) {
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(chunk);
        if (partial_.size() >= kMaxLine) Emit(out);
        return;
      }
      partial_.append(chunk.substr(0, nl));
      Emit(out);
      chunk.remove_prefix(nl + 1);
    }
  }
  void Flush(std::string& out) {
    if (!partial_.empty()) Emit(out);
  }

 private:
  static constexpr size_t kMaxLine = 64 * 1024;
  void Emit(std::string& out) {
    out += prefix_;
    out += partial_;
    out += '\n';
    partial_.clear();
  }
  std::string prefix_, partial_;
};

bool Failed(const ExitInfoProc& e) {
  return !e.timed_out && !e.stopped && (e.signal || (e.exit_code && *e.exit_code != 0));
}

std::string HowItEnded(const ExitInfoProc& e) {
  if (e.signal) return "signal " + SignalName(*e.signal);
  return "exit code " + std::to_string(e.exit_code.value_or(-1));
}

}  // namespace

std::map<std::string, std::string> RankEnv(std::map<std::string, std::string> env, int rank, int world, int port) {
  const std::string r = std::to_string(rank), w = std::to_string(world);
  env["RANK"] = r;
  env["LOCAL_RANK"] = r;
  env["GAUNTLET_RANK"] = r;
  env["WORLD_SIZE"] = w;
  env["LOCAL_WORLD_SIZE"] = w;
  env["GROUP_RANK"] = "0";
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(port);
  if (auto it = env.find("GAUNTLET_RESULT_FILE"); rank > 0 && it != env.end()) {
    std::string& f = it->second;
    const size_t dot = f.rfind(".json");
    f = dot == std::string::npos ? f + ".rank" + r : f.substr(0, dot) + ".rank" + r + f.substr(dot);
  }
  return env;
}

Result<RankGroupResult> RunRankGroup(ProcessRunner& runner, const ProcessSpec& spec, int world, int port,
                                     std::chrono::steady_clock::time_point deadline,
                                     const std::function<void(std::string_view)>& on_output,
                                     const std::function<bool()>& should_stop, std::chrono::milliseconds grace,
                                     std::chrono::milliseconds poll) {
  std::vector<std::unique_ptr<RunningProcess>> procs;
  for (int k = 0; k < world; ++k) {
    ProcessSpec s = spec;
    s.env = RankEnv(spec.env, k, world, port);
    auto p = runner.Start(s);
    if (!p.ok()) {
      for (auto& q : procs) q->StopGroup(grace);
      return p.status();
    }
    procs.push_back(std::move(*p));
  }

  std::mutex mu;  // guards on_output and res
  std::atomic<bool> peer_failed{false}, user_stopped{false};
  RankGroupResult res;
  res.ranks.resize(static_cast<size_t>(world));
  // Every rank's pump polls this: one failed rank ends the others within one poll.
  auto stop = [&] {
    if (peer_failed.load()) return true;
    if (should_stop && should_stop()) {
      user_stopped = true;
      return true;
    }
    return false;
  };
  std::vector<std::thread> pumps;
  for (int k = 0; k < world; ++k) {
    pumps.emplace_back([&, k] {
      RankPrefixer prefixer(k);
      std::string lines;
      auto out = [&](std::string_view chunk) {
        lines.clear();
        prefixer.Feed(chunk, lines);
        if (lines.empty()) return;
        std::lock_guard lock(mu);
        on_output(lines);
      };
      ExitInfoProc e = procs[static_cast<size_t>(k)]->Run(deadline, out, stop, grace, poll);
      lines.clear();
      prefixer.Flush(lines);
      std::lock_guard lock(mu);
      if (!lines.empty()) on_output(lines);
      res.ranks[static_cast<size_t>(k)] = e;
      if (Failed(e) && res.first_failed < 0) {
        res.first_failed = k;
        peer_failed = true;
        // The worker's own line about that rank, under its prefix: a death by signal that the rank
        // could not print itself is then that rank's failure for the classifier.
        if (world > 1)
          on_output("[rank" + std::to_string(k) + "]: gauntlet: rank " + std::to_string(k) + " ended first (" +
                    HowItEnded(e) + "); ending the other ranks\n");
      }
    });
  }
  for (auto& t : pumps) t.join();
  procs.clear();  // every group is already ended; the handles' destructors make sure of it

  if (res.first_failed >= 0) {
    const ExitInfoProc& f = res.ranks[static_cast<size_t>(res.first_failed)];
    res.exit.exit_code = f.exit_code;
    res.exit.signal = f.signal;
    res.exit.oom_killed = f.oom_killed;  // a rank the kernel killed for memory is the group's oom
    res.exit.memory_limit_bytes = f.memory_limit_bytes;
    res.exit.pids_limited = f.pids_limited;
    res.exit.pids_limit = f.pids_limit;
    return res;
  }
  for (const auto& e : res.ranks) res.exit.timed_out = res.exit.timed_out || e.timed_out;
  res.exit.stopped = !res.exit.timed_out && user_stopped.load();
  if (!res.exit.timed_out && !res.exit.stopped) res.exit.exit_code = 0;
  return res;
}

}  // namespace gauntlet::worker
