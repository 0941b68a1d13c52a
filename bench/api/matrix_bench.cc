// GET /api/v1/matrix over a store of 1,000,000 trials (issue 6's target: under 100 ms), through a
// real daemon on loopback. The store is filled in bulk with SQL (finishing a million trials one
// report at a time would take minutes and measure something else).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>

#include "store/store.h"
#include "tests/support/harness.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  const int64_t total = argc > 1 ? std::atoll(argv[1]) : 1000000;
  test::TempDir dir;
  const std::string suites = dir.path() + "/suites";
  json suite = {{"name", "bulk"}, {"version", 1},
                {"parameters", {{"moe", {"cutlass", "trtllm", "cutedsl", "triton", "deepgemm"}},
                                {"gemm", {"cutlass", "cudnn", "trtllm", "cublaslt", "native"}},
                                {"attn", {"fa3", "flashinfer", "triton", "trtllm_mha"}}}},
                {"stages", {{{"name", "serve"}, {"kind", "command"}, {"argv", {"true"}}}}}};
  dir.Write("suites/bulk.json", suite.dump());
  {
    auto store = std::move(*store::Store::Open(dir.path() + "/gauntlet.db"));
    auto row = store->PutSuite("bulk", suite, suites);
    const char* verdicts[] = {"passed", "passed", "passed", "unsupported", "crashed", "wrong_output", "oom", "timeout"};
    std::vector<std::string> hw;
    for (auto g : {"NVIDIA H200 · sm_90", "NVIDIA B200 · sm_100", "NVIDIA RTX PRO 6000 Blackwell · sm_120",
                   "NVIDIA H100 80GB HBM3 · sm_90", "NVIDIA GB200 · sm_100"})
      for (auto n : {" · x1", " · x8"}) hw.push_back(std::string(g) + n);
    std::mt19937 rng(42);
    auto t0 = std::chrono::steady_clock::now();
    store->Write([&](store::sql::Db& db) {
      const int64_t sweeps = std::max<int64_t>(1, total / 100000);
      for (int64_t s = 0; s < sweeps; ++s) {
        auto ins = db.Prepare("INSERT INTO sweeps(suite_id, name, request, trial_count, created_at) VALUES(?,?,?,?,?)");
        ins.Bind(1, row->id).Bind(2, "bulk " + std::to_string(s)).Bind(3, "{\"suite\":\"bulk\"}").Bind(4, total / sweeps).Bind(5, s);
        ins.Run();
      }
      auto t = db.Prepare(
          "INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, state, verdict, signature, created_at,"
          " finished_at, hardware, attempt, metric_name, metric_value, metric_unit, fingerprint)"
          " VALUES(?,?,?,?,0,'done',?,?,?,?,?,1,?,?,?,'{}')");
      for (int64_t i = 0; i < total; ++i) {
        const auto& m = suite["parameters"]["moe"][rng() % 5];
        const auto& g = suite["parameters"]["gemm"][rng() % 5];
        const auto& a = suite["parameters"]["attn"][rng() % 4];
        json cfg = {{"attn", a}, {"gemm", g}, {"moe", m}};
        std::string key = "attn=" + a.get<std::string>() + "&gemm=" + g.get<std::string>() + "&moe=" + m.get<std::string>();
        std::string v = verdicts[rng() % 8];
        t.Bind(1, 1 + i % sweeps).Bind(2, row->id).Bind(3, cfg.dump()).Bind(4, key).Bind(5, v);
        t.Bind(6, v == "passed" ? "" : v + ":x").Bind(7, i).Bind(8, i).Bind(9, hw[rng() % hw.size()]);
        if (v == "passed") t.Bind(10, "output_tok_s@c64").Bind(11, 1000.0 + rng() % 2000).Bind(12, "tok/s");
        else t.BindNull(10).BindNull(11).BindNull(12);
        t.Run();
      }
      // The results index, as FinishTrial keeps it: latest verdict per (config, hardware) with counts.
      db.Exec(
          "INSERT INTO cells(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id, last_seen,"
          " counts, metric_name, metric_value, metric_unit)"
          " SELECT 'bulk', 1, config_key, hardware, config, verdict, signature, MAX(id), MAX(finished_at), '{}',"
          " metric_name, metric_value, metric_unit FROM trials GROUP BY config_key, hardware");
      db.Exec(
          "UPDATE cells SET counts = (SELECT json_group_object(verdict, n) FROM (SELECT verdict, COUNT(*) n FROM trials t"
          " WHERE t.config_key = cells.config_key AND t.hardware = cells.hardware GROUP BY verdict))");
    });
    std::cerr << "filled " << total << " trials in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
  }
  test::Daemon d(dir.path(), suites);
  net::Client c(d.url(), "");
  auto time_it = [&](const std::string& target) {
    std::vector<double> ms;
    size_t bytes = 0;
    for (int i = 0; i < 30; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = c.Send("GET", target);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!r.ok() || r->status != 200) {
        std::cerr << target << " failed\n";
        std::exit(1);
      }
      bytes = r->body.size();
    }
    std::sort(ms.begin(), ms.end());
    return json{{"target", target}, {"ms_p50", ms[15]}, {"ms_p99", ms[29]}, {"bytes", bytes}};
  };
  json out = {{"bench", "matrix"}, {"trials", total}};
  out["suite_matrix"] = time_it("/api/v1/matrix?suite=bulk&rows=moe,gemm&cols=hardware");
  out["suite_matrix_param_cols"] = time_it("/api/v1/matrix?suite=bulk&rows=moe&cols=attn");
  out["sweep_matrix_100k"] = time_it("/api/v1/matrix?suite=bulk&rows=moe,gemm&cols=hardware&sweep=1");
  out["regressions"] = time_it("/api/v1/regressions?suite=bulk");
  std::cout << out.dump() << "\n";
}
