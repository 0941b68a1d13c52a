// End to end with real worker processes running trivial trials (`true`) (issue 3's targets: 500
// trials/s or more; submit to first trial running under 50 ms, p50/p99).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/support/harness.h"

namespace {
// CPU seconds a process and its reaped children have used (/proc/PID/stat utime, stime, cutime,
// cstime). A worker's children are its stage keepers, theirs the stage programs: the worker's sum
// is all that the worker side spent. CPU time is steadier than wall time on a shared machine.
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), {});
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 17 && in >> field; ++i)
    if (i >= 14) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  const int n_workers = argc > 1 ? std::atoi(argv[1]) : 4;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 5000;
  // A third argument "users": every trial as a user of its own (--trial-users on; needs root), in
  // its own namespaces where the kernel gives them; "users-no-ns": as a user of its own, in the
  // host's namespaces (--trial-namespaces off), so the two runs price the namespaces alone.
  const std::string mode = argc > 3 ? argv[3] : "";
  const bool users = mode == "users" || mode == "users-no-ns";
  test::TempDir dir;
  if (users) chmod(dir.path().c_str(), 0711);  // trials reach their folders through it
  test::Daemon d(dir.path(), std::string(GAUNTLET_SOURCE_DIR) + "/bench/api/suites", {"--threads", "2"});
  std::vector<std::unique_ptr<test::Child>> ws;
  std::vector<std::string> extra = {"--max-trials", "4"};
  if (users) extra.insert(extra.end(), {"--trial-users", "on", "--trial-uids", "63000-63999"});
  if (mode == "users-no-ns") extra.insert(extra.end(), {"--trial-namespaces", "off"});
  for (int i = 0; i < n_workers; ++i)
    ws.push_back(test::StartWorker(dir.path(), d.url(), "w" + std::to_string(i), json::object(), extra));
  test::WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == static_cast<size_t>(n_workers); });
  // Latency: submit a one-trial sweep and wait for it to be leased/running; repeated.
  // "Running" is the first state the worker reports (its first heartbeat, or its result for a
  // trial that ended first); `done` counts as having run.
  std::vector<double> lat, run_lat;
  for (int i = 0; i < 40; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    json sw = d.PostJson("/api/v1/sweeps", {{"suite", "bench-trivial"}, {"parameters", {{"a", {"0"}}, {"b", {std::to_string(i)}}}}, {"reuse", false}}, 201);
    net::Client c(d.url(), "");
    const std::string path = "/api/v1/trials?sweep=" + sw["id"].dump();
    bool leased = false;
    test::WaitFor([&] {
      auto r = c.Send("GET", path);
      if (!r.ok()) return false;
      auto st = json::parse(r->body)["items"][0]["state"];
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!leased && st != "queued") {
        leased = true;
        lat.push_back(ms);
      }
      if (st == "running" || st == "done") {
        run_lat.push_back(ms);
        return true;
      }
      return false;
    }, std::chrono::seconds(10));
    d.WaitSweep(sw["id"]);
  }
  std::sort(lat.begin(), lat.end());
  std::sort(run_lat.begin(), run_lat.end());
  // Throughput.
  const int a = std::max(1, trials / 1000);
  json params = {{"a", json::array()}, {"b", json::array()}};
  for (int i = 0; i < a; ++i) params["a"].push_back(std::to_string(i));
  for (int i = 0; i < trials / a; ++i) params["b"].push_back(std::to_string(i));
  auto workers_cpu = [&] {
    double s = 0;
    for (auto& w : ws) s += CpuSeconds(w->pid());
    return s;
  };
  const double daemon_cpu0 = CpuSeconds(d.child().pid()), workers_cpu0 = workers_cpu();
  auto t0 = std::chrono::steady_clock::now();
  json sw = d.PostJson("/api/v1/sweeps", {{"suite", "bench-trivial"}, {"parameters", params}, {"max_trials", 100000}, {"reuse", false}}, 201);
  json fin = d.WaitSweep(sw["id"], std::chrono::minutes(10));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double n = sw["trials"].get<double>();
  // A worker's last trials' keepers may not be reaped yet: their CPU is missing, a few trials' worth.
  const double daemon_ms = (CpuSeconds(d.child().pid()) - daemon_cpu0) * 1000 / n;
  const double workers_ms = (workers_cpu() - workers_cpu0) * 1000 / n;
  std::cout << json{{"bench", "e2e_trivial_trials"},
                    {"workers", n_workers},
                    {"trial_users", users},
                    {"trial_namespaces", mode == "users"},
                    {"trials", sw["trials"]},
                    {"passed", fin["by_verdict"].value("passed", 0)},
                    {"seconds", s},
                    {"trials_per_s", sw["trials"].get<double>() / s},
                    {"submit_to_leased_ms_p50", lat[lat.size() / 2]},
                    {"submit_to_leased_ms_p99", lat[lat.size() * 99 / 100]},
                    {"submit_to_running_ms_p50", run_lat[run_lat.size() / 2]},
                    {"submit_to_running_ms_p99", run_lat[run_lat.size() * 99 / 100]},
                    {"daemon_cpu_ms_per_trial", daemon_ms},
                    {"workers_cpu_ms_per_trial", workers_ms}}
                   .dump()
            << "\n";
}
