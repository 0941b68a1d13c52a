// Worker-protocol latency under heavy reads (issue 19): lease grant and heartbeat latency p50/p99
// with no reads, then while N clients (700 by default) each keep one `GET /api/v1/sweeps` in flight
// with a 160,000-trial sweep stored, against a real `gauntlet serve` (GAUNTLET_BIN picks the
// binary, so an older one can be measured in the same window). With submit_trials > 0, a third
// phase: one client submits sweeps of that many trials back to back (none of them runnable, so
// they stay queued) while the worker loop runs, and each submit's time is reported too: whether a
// huge submit delays the worker protocol. Prints one JSON object.
//   starvation_bench [readers=700] [seconds=10] [trials=160000] [submit_trials=0]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "tests/support/harness.h"

namespace {
using nlohmann::json;
using Clock = std::chrono::steady_clock;

json Values(int n) {
  json v = json::array();
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  return v;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

json Percentiles(std::vector<double> v) {
  if (v.empty()) return {{"n", 0}};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))]; };
  return {{"n", v.size()}, {"p50_ms", at(0.50)}, {"p99_ms", at(0.99)}, {"max_ms", v.back()}};
}

// One worker's protocol for `seconds`: lease (wait 0), five heartbeats, report; again. Latency of
// each grant and heartbeat; a heartbeat or report answered 409 is a lost lease.
json WorkerLoop(const std::string& url, int64_t node, double seconds) {
  gauntlet::net::Client c(url, "");
  std::vector<double> grants, beats;
  int64_t lost = 0, errors = 0, cycles = 0;
  const std::string lease_path = "/api/v1/nodes/" + std::to_string(node) + "/lease";
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
    auto t0 = Clock::now();
    auto g = c.Send("POST", lease_path, R"({"wait_s": 0})");
    if (!g.ok() || g->status != 200) {
      ++errors;
      continue;
    }
    grants.push_back(Ms(Clock::now() - t0));
    const std::string lease = json::parse(g->body)["lease"];
    for (int i = 0; i < 5; ++i) {
      auto h0 = Clock::now();
      auto h = c.Send("POST", "/api/v1/leases/" + lease + "/heartbeat", R"({"running": true})");
      if (h.ok() && h->status == 200) beats.push_back(Ms(Clock::now() - h0));
      else if (h.ok() && h->status == 409) ++lost;
      else ++errors;
    }
    auto r = c.Send("POST", "/api/v1/leases/" + lease + "/result", R"({"verdict": "passed"})");
    if (r.ok() && r->status == 200) ++cycles;
    else if (r.ok() && r->status == 409) ++lost;
    else ++errors;
  }
  return {{"lease_grant", Percentiles(grants)}, {"heartbeat", Percentiles(beats)}, {"cycles", cycles},
          {"leases_lost", lost}, {"errors", errors}};
}

// Lease grants on a fixed schedule, one every 20 ms whatever the answers take, each timed from
// its scheduled start (so a stall counts against every grant it delayed, not only the one caught
// in it: the closed loop above under-reports stalls, "coordinated omission"). Each grant is
// reported passed at once, untimed.
json ScheduledGrants(const std::string& url, int64_t node, const std::atomic<bool>& stop) {
  gauntlet::net::Client c(url, "");
  std::vector<double> late;
  const std::string lease_path = "/api/v1/nodes/" + std::to_string(node) + "/lease";
  auto next = Clock::now();
  while (!stop) {
    auto g = c.Send("POST", lease_path, R"({"wait_s": 0})");
    late.push_back(Ms(Clock::now() - next));
    if (g.ok() && g->status == 200)
      IgnoreError(c.Send("POST", "/api/v1/leases/" + json::parse(g->body)["lease"].get<std::string>() + "/result",
                         R"({"verdict": "passed"})")
                      .status(),
                  "the load only has to reach the daemon; what it answers is not measured");
    next += std::chrono::milliseconds(20);
    if (next > Clock::now()) std::this_thread::sleep_until(next);  // pacing, not synchronisation
  }
  return Percentiles(late);
}

// The worker loop while one client submits sweeps of `n` trials (100,000-config grids times
// repeats, on a target no node has) back to back; null when n is 0.
json SubmitPhase(gauntlet::test::Daemon& d, int64_t node, double seconds, int n) {
  if (n <= 0) return nullptr;
  std::atomic<bool> stop{false};
  json scheduled;
  std::thread prober([&] { scheduled = ScheduledGrants(d.url(), node, stop); });
  std::vector<double> took;
  int64_t failed = 0;
  std::thread submitter([&] {
    gauntlet::net::Client c(d.url(), "");
    const json body = {{"suite", "bench-trivial"}, {"repeats", std::max(1, n / 100000)},
                       {"targets", {{{"arch", "sm_100"}}}}, {"max_trials", 1000000}, {"prune", false}};
    while (!stop) {
      auto t0 = Clock::now();
      auto r = c.Send("POST", "/api/v1/sweeps", body.dump(), "application/json", std::chrono::seconds(600));
      if (r.ok() && r->status == 201) took.push_back(Ms(Clock::now() - t0));
      else ++failed;
    }
  });
  json loop = WorkerLoop(d.url(), node, seconds);
  stop = true;
  submitter.join();  // the submit under way finishes first
  prober.join();
  return {{"trials_per_submit", std::max(1, n / 100000) * 100000}, {"submit", Percentiles(took)},
          {"submit_errors", failed}, {"worker", loop}, {"scheduled_grants", scheduled}};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gauntlet;
  const int readers = argc > 1 ? std::atoi(argv[1]) : 700;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 10;
  const int trials = argc > 3 ? std::atoi(argv[3]) : 160000;
  const int submit_trials = argc > 4 ? std::atoi(argv[4]) : 0;
  test::TempDir dir;
  // A long lease: the bench measures latency; whether a lease would have been lost under a 30 s
  // TTL is read from the heartbeat latencies (and leases_lost counts any that were).
  // The node must not go offline while the reads ramp up (a slow binary answers few of them).
  test::Daemon d(dir.path(), std::string(GAUNTLET_SOURCE_DIR) + "/bench/api/suites",
                 {"--threads", "2", "--offline-after-ms", "3600000"});
  // The heavy sweep no node can run (its trials stay queued), 2 repeats of a x b configs.
  const int b = std::max(1, trials / 200);
  json big = d.PostJson("/api/v1/sweeps",
                        {{"suite", "bench-trivial"}, {"parameters", {{"a", Values(100)}, {"b", Values(std::min(b, 1000))}}},
                         {"repeats", 2}, {"targets", {{{"arch", "sm_100"}}}}, {"max_trials", 1000000}},
                        201);
  // The worker's own trials.
  d.PostJson("/api/v1/sweeps", {{"suite", "bench-trivial"}, {"max_trials", 1000000}}, 201);
  const int64_t node = d.PostJson("/api/v1/nodes/register", {{"name", "bench-worker"}})["node"];
  json quiet = WorkerLoop(d.url(), node, seconds);

  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0}, read_errors{0}, sent{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < readers; ++i)
    ts.emplace_back([&] {
      net::Client c(d.url(), "");
      while (!stop) {
        ++sent;
        auto r = c.Send("GET", "/api/v1/sweeps", "", "application/json", std::chrono::seconds(300));
        if (r.ok() && r->status == 200) ++reads;
        else ++read_errors;
      }
    });
  // Load first: every reader has sent its first read before the measurement starts.
  while (sent < readers) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // their requests reach the daemon
  const int64_t reads0 = reads;
  auto t0 = Clock::now();
  json loaded = WorkerLoop(d.url(), node, seconds);
  const double window = std::chrono::duration<double>(Clock::now() - t0).count();
  const int64_t reads_in_window = reads - reads0;
  stop = true;
  for (auto& t : ts) t.join();
  json submits = SubmitPhase(d, node, seconds, submit_trials);
  std::cout << json{{"bench", "worker_protocol_under_heavy_reads"},
                    {"binary", test::GauntletBin()},
                    {"stored_trials", big["trials"]},
                    {"readers", readers},
                    {"seconds", seconds},
                    {"without_reads", quiet},
                    {"with_reads", loaded},
                    {"reads_per_s", reads_in_window / window},
                    {"read_errors", read_errors.load()},
                    {"with_submits", submits}}
                   .dump()
            << "\n";
}
