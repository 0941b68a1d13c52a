// A 100,000-trial sweep validated, expanded and committed (issue 2's target: under 1 s), through the
// same Coordinator::Submit the API calls, on a real SQLite file.
#include <chrono>
#include <iostream>

#include "api/requests.h"
#include "api/views.h"
#include "daemon/coordinator.h"
#include "daemon/suite_loader.h"
#include "tests/support/harness.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  test::TempDir dir;
  auto store = std::move(*store::Store::Open(dir.path() + "/bench.db"));
  auto loaded = daemon::LoadSuitesDir(std::string(GAUNTLET_SOURCE_DIR) + "/bench/api/suites", *store);
  if (!loaded.ok()) {
    std::cerr << loaded.status().message() << "\n";
    return 1;
  }
  daemon::EventBus events;
  daemon::Coordinator coord(*store, events, {});
  json out = json::array();
  for (int run = 0; run < 3; ++run) {
    json req = {{"suite", "bench-trivial"}, {"max_trials", 100000}, {"name", "bench " + std::to_string(run)}};
    auto t0 = std::chrono::steady_clock::now();
    auto sub = api::ParseSweepSubmission(req);
    auto r = sub.ok() ? coord.Submit(*sub) : Result<daemon::SubmitResult>(sub.status());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      std::cerr << r.status().message() << "\n";
      return 1;
    }
    out.push_back({{"trials", r->trials}, {"seconds", s}, {"trials_per_s", r->trials / s}});
  }
  coord.Stop();
  std::cout << json{{"bench", "sweep_submit_100k"}, {"runs", out}}.dump() << "\n";
}
