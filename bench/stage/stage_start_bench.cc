// Stage start: the wall time from Process::Start to the reaped end of `/bin/true`, as a worker runs
// every stage (keeper, cgroup, output pipe), under each isolation a worker may give it:
//   plain  the worker's own user, the host's namespaces;
//   user   a trial user of its own (needs root);
//   view   a trial user in its own mount and PID namespaces, with a private /tmp (needs root).
// Prints one JSON object: per mode, p50/p90/mean milliseconds over N starts (argv[1], default 300),
// the modes interleaved start by start so the machine's load falls on each alike.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "proc/process.h"
#include "workers/trial_views.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using Clock = std::chrono::steady_clock;
  const int n = argc > 1 ? std::max(10, std::atoi(argv[1])) : 300;
  // "worker-sized" (argv[2]): this process made as large as a worker (32 MiB touched, 16 threads
  // waiting), since what a keeper and an init copy at fork grows with the process they come from.
  std::vector<char> ballast;
  std::vector<std::thread> idle;
  std::atomic<bool> stop{false};
  if (argc > 2 && std::string(argv[2]) == "worker-sized") {
    ballast.assign(32u << 20, 1);
    for (int i = 0; i < 16; ++i)
      idle.emplace_back([&] {
        while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      });
  }
  char tmpl[] = "/tmp/gauntlet-stage-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::vector<std::string> modes = {"plain"};
  std::string why_not;
  std::unique_ptr<worker::TrialViews> views;
  if (geteuid() == 0) {
    chmod(dir.c_str(), 0711);
    views = worker::TrialViews::Configure("on", true, dir, {}, "/bin/sh", &why_not);
    modes.push_back("user");
    if (views) modes.push_back("view");
  } else {
    why_not = "not root";
  }
  // argv[3]: one mode alone, so `time` prices its CPU (the keeper's and the init's included).
  if (argc > 3) std::erase_if(modes, [&](const std::string& m) { return m != argv[3]; });
  std::map<std::string, proc::ProcessSpec> specs;
  for (const std::string& m : modes) {
    proc::ProcessSpec s;
    s.argv = {"/bin/true"};
    s.env = {{"PATH", "/usr/bin:/bin"}};
    s.cwd = dir;
    s.memory_limit_bytes = proc::DefaultStageLimits().memory_bytes;
    s.pids_limit = proc::DefaultStageLimits().pids;
    s.limits_declared = false;
    if (m != "plain") {
      s.uid = 64000;
      s.gid = 64000;
    }
    if (m == "view") {
      auto v = views->Prepare(dir + "/view", {});
      if (!v.ok()) {
        std::fprintf(stderr, "%s\n", v.status().message().c_str());
        return 1;
      }
      s.view = *v;
    }
    specs[m] = s;
  }
  std::map<std::string, std::vector<double>> ms;
  for (int i = 0; i < n; ++i)
    for (const std::string& m : modes) {
      const auto t0 = Clock::now();
      auto p = proc::Process::Start(specs[m]);
      if (!p.ok()) {
        std::fprintf(stderr, "%s: %s\n", m.c_str(), p.status().message().c_str());
        return 1;
      }
      const proc::ExitInfoProc e = (*p)->Run(Clock::now() + std::chrono::seconds(30), [](std::string_view) {}, {});
      if (e.exit_code != 0) {
        std::fprintf(stderr, "%s: /bin/true did not exit 0\n", m.c_str());
        return 1;
      }
      ms[m].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  nlohmann::json out = {{"starts_per_mode", n}, {"modes", nlohmann::json::object()}};
  if (!why_not.empty()) out["view_off"] = why_not;
  for (auto& [m, v] : ms) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    out["modes"][m] = {{"p50_ms", v[v.size() / 2]}, {"p90_ms", v[v.size() * 9 / 10]}, {"mean_ms", sum / v.size()}};
  }
  out["worker_sized"] = !ballast.empty();
  stop = true;
  for (auto& t : idle) t.join();
  std::printf("%s\n", out.dump(1).c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
