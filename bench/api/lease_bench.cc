// Lease grant + result cycles through the real HTTP protocol (issue 3's target: 5,000 cycles/s on
// this 2-core machine). A load generator acts as many workers against a real `gauntlet serve`.
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "tests/support/harness.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  const int workers = argc > 1 ? std::atoi(argv[1]) : 16;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5;
  // The sweep's size: 100,000 by default; smaller for a run under callgrind, whose setup submit of
  // 100,000 trials outlives the client's timeout.
  const int64_t trials = argc > 3 ? std::atoll(argv[3]) : 100000;
  test::TempDir dir;
  test::Daemon d(dir.path(), std::string(GAUNTLET_SOURCE_DIR) + "/bench/api/suites", {"--threads", "2"});
  json submit = {{"suite", "bench-trivial"}, {"max_trials", trials}};
  if (trials < 100000) {  // the suite is a x b = 100 x 1000: fewer values of a
    json a = json::array();
    for (int64_t i = 0; i * 1000 < trials; ++i) a.push_back(std::to_string(i));
    submit["parameters"] = {{"a", a}};
    submit["max_trials"] = a.size() * 1000;
  }
  json sw = d.PostJson("/api/v1/sweeps", submit, 201);
  // A sweep this big is answered while its trials are still being stored (docs/API.md "expanding"):
  // the window measures leasing from a whole queue, as before that, not the expansion beside it.
  const std::string sweep_path = "/api/v1/sweeps/" + sw["id"].dump();
  if (!test::WaitFor([&] { return !d.GetJson(sweep_path).value("expanding", false); }, std::chrono::seconds(120))) {
    std::cerr << "the sweep was still expanding after 120 s\n";
    return 1;
  }
  std::vector<int64_t> nodes;
  for (int i = 0; i < workers; ++i)
    nodes.push_back(d.PostJson("/api/v1/nodes/register", {{"name", "load-" + std::to_string(i)}})["node"]);
  std::atomic<int64_t> cycles{0}, errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  const std::string result = json{{"verdict", "passed"}, {"metrics", {{"x", 1}}}}.dump();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < workers; ++i)
    ts.emplace_back([&, i] {
      net::Client c(d.url(), "");
      const std::string lease_path = "/api/v1/nodes/" + std::to_string(nodes[i]) + "/lease";
      // As real workers do: after the first grant the suite's definition is held and not resent.
      std::string body = "{\"wait_s\": 0}";
      while (!stop) {
        auto g = c.Send("POST", lease_path, body);
        if (!g.ok() || g->status != 200) {
          ++errors;
          continue;
        }
        json grant = json::parse(g->body);
        std::string lease = grant["lease"];
        body = json{{"wait_s", 0}, {"have_suites", {grant["suite"]["key"]}}}.dump();
        auto r = c.Send("POST", "/api/v1/leases/" + lease + "/result", result);
        if (r.ok() && r->status == 200) ++cycles;
        else ++errors;
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));  // the measurement window
  stop = true;
  for (auto& t : ts) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << json{{"bench", "lease_result_cycles"}, {"workers", workers}, {"seconds", s}, {"cycles", cycles.load()},
                    {"cycles_per_s", cycles / s}, {"errors", errors.load()}}
                   .dump()
            << "\n";
}
