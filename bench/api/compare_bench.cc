// What changed between two sweeps, at size (issue 20): two sweeps of N finished trials each (a
// config × hardware class per trial) in a real SQLite file, then the comparison GET /api/v1/compare
// makes and the one the webhooks' regression.found makes when a sweep finishes (each config ×
// hardware against the result before it). Prints one JSON object: median of 5 of each.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <stdexcept>

#include "store/compare.h"
#include "tests/support/harness.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  test::TempDir dir;
  auto store = std::move(*store::Store::Open(dir.path() + "/bench.db"));
  json def = {{"name", "b"}, {"version", 1}, {"key_metric", "score"},
              {"parameters", {{"a", {{"pattern", "^[0-9]+$"}}}}},
              {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
  const int64_t suite = store->PutSuite("b", def, "")->id;
  auto sweep = [&](int salt) {
    std::vector<store::NewTrial> ts;
    for (int i = 0; i < n; ++i) ts.push_back({json{{"a", std::to_string(i)}}.dump(), "a=" + std::to_string(i), 0, 0});
    int64_t first = 0;
    const int64_t id = *store->CreateSweep(suite, "", json::object(), 0, 3, ts, &first);
    for (int i = 0; i < n; ++i) {
      store::ResultRow r;
      r.trial_id = first + i;
      r.attempt = 1;
      // One in 20 configs changes verdict between the two sweeps; the metric drifts.
      r.verdict = (i % 20 == 0 && salt) ? Verdict::kCrashed : Verdict::kPassed;
      r.signature = r.verdict == Verdict::kPassed ? "" : "crashed:boom";
      r.hardware = "hw" + std::to_string(i % 4);
      r.finished_at = store::NowMs();
      if (r.verdict == Verdict::kPassed) r.metrics = {{"score", {{"value", 100.0 - salt * (i % 7)}, {"unit", "pts"}}}};
      if (Status s = store->FinishTrial(r); !s.ok()) throw std::runtime_error("setup: " + s.message());
    }
    return id;
  };
  const int64_t a = sweep(0), b = sweep(1);
  auto time = [&](const store::CompareSide& x, const store::CompareSide& y, json* out) {
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto c = store::Compare(*store, x, y, 0.05);
      // The answer as the endpoint writes it, inside the timing as before the comparison was a struct.
      const json j = c.ok() ? store::ComparisonJson(*c) : json(c.status().message());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      *out = c.ok() ? j["summary"] : j;
    }
    std::sort(ms.begin(), ms.end());
    return ms[2];
  };
  store::CompareSide sa, sb, before;
  sa.sweep = a;
  sb.sweep = b;
  before.before_sweep = b;
  json sum_cmp, sum_reg;
  const double cmp_ms = time(sa, sb, &sum_cmp);
  const double reg_ms = time(before, sb, &sum_reg);
  std::cout << json{{"bench", "compare_two_sweeps"}, {"trials_per_sweep", n}, {"compare_ms_p50", cmp_ms},
                    {"regressions_ms_p50", reg_ms}, {"summary", sum_cmp}, {"regressions_summary", sum_reg}}
                   .dump()
            << "\n";
}
