// Issue 31's heavy reads, through a real daemon on loopback: the matrix of one sweep of 200,000
// trials (rows=p0,p1, and rows=p0&cols=p1: every other parameter hidden; and one whose hidden
// parameter declares 50,000 values), compare and regressions
// over it, and registering a suite whose parameter declares 100,000 values, then listing sweeps of
// it. Prints one JSON object. Usage: query_bench [TRIALS] [VALUES] (GAUNTLET_BIN picks the binary,
// so the same bench measures an older one). `query_bench --fill DIR [TRIALS]` only writes the two
// sweeps' store to DIR/gauntlet.db and exits (bench/api/matrix_cpu.sh serves it with two binaries).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "tests/support/bulk_store.h"
#include "tests/support/harness.h"

int main(int argc, char** argv) {
  using namespace gauntlet;
  using nlohmann::json;
  using Clock = std::chrono::steady_clock;
  if (argc > 2 && std::string(argv[1]) == "--fill") {
    const int64_t n = argc > 3 ? std::atoll(argv[3]) : 200000;
    const std::string db = std::string(argv[2]) + "/gauntlet.db";
    const int64_t bulk = test::FillSweep(db, test::GridSuite("bulk", {10, 10, 40, 50}), n);
    const int64_t wide = test::FillSweep(db, test::GridSuite("wide", {2, 2, 50000}), n);
    std::cout << json{{"db", db}, {"bulk_sweep", bulk}, {"wide_sweep", wide}}.dump() << "\n";
    return 0;
  }
  const int64_t trials = argc > 1 ? std::atoll(argv[1]) : 200000;
  const int values = argc > 2 ? std::atoi(argv[2]) : 100000;
  test::TempDir dir;
  const std::string suites = dir.path() + "/suites";
  dir.Write("suites/.keep", "");
  // 10 x 10 x 40 x 50 = 200,000 configs: each trial its own config.
  const json suite = test::GridSuite("bulk", {10, 10, 40, 50});
  auto t0 = Clock::now();
  const int64_t sweep = test::FillSweep(dir.path() + "/gauntlet.db", suite, trials);
  // The same number of trials where the hidden parameter declares 50,000 values: the shape where a
  // lookup of each value's declared position per sort comparison was quadratic.
  const int64_t wide = test::FillSweep(dir.path() + "/gauntlet.db", test::GridSuite("wide", {2, 2, 50000}), trials);
  std::cerr << "filled " << trials << " trials in " << std::chrono::duration<double>(Clock::now() - t0).count()
            << " s\n";
  // Bounds off, to time the queries themselves (QUERY_BENCH_OLD=1: a binary without the flags).
  std::vector<std::string> flags = {"--query-timeout-ms", "600000", "--query-max-rows", "100000000"};
  if (getenv("QUERY_BENCH_OLD")) flags.clear();
  test::Daemon d(dir.path(), suites, flags);
  net::Client c(d.url(), "");
  c.SetTimeout(std::chrono::seconds(600));
  auto time_it = [&](const std::string& method, const std::string& target, const std::string& body, int runs) {
    std::vector<double> ms;
    size_t bytes = 0;
    int status = 0;
    for (int i = 0; i < runs; ++i) {
      auto s = Clock::now();
      auto r = method == "GET" ? c.Send("GET", target) : c.Send(method, target, body, "application/json");
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
      status = r.ok() ? r->status : -1;
      if (r.ok()) bytes = r->body.size();
    }
    std::sort(ms.begin(), ms.end());
    return json{{"target", target}, {"status", status}, {"runs", runs}, {"ms_min", ms.front()},
                {"ms_p50", ms[ms.size() / 2]}, {"ms_max", ms.back()}, {"bytes", bytes}};
  };
  const std::string sw = std::to_string(sweep);
  json out = {{"bench", "query"}, {"trials", trials}, {"values", values}};
  out["matrix_rows_2"] = time_it("GET", "/api/v1/matrix?sweep=" + sw + "&rows=p0,p1", "", 5);
  out["matrix_rows_cols"] = time_it("GET", "/api/v1/matrix?sweep=" + sw + "&rows=p0&cols=p1", "", 5);
  out["matrix_wide_hidden"] = time_it("GET", "/api/v1/matrix?sweep=" + std::to_string(wide) + "&rows=p0,p1", "", 3);
  out["compare_sweep_itself"] = time_it("GET", "/api/v1/compare?a=" + sw + "&b=" + sw, "", 3);
  out["regressions"] = time_it("GET", "/api/v1/regressions?suite=bulk", "", 3);
  // Registration: one parameter of `values` ordered values (a version per commit, say).
  json big = test::GridSuite("many", {values, 2});
  big["parameters"]["p0"] = {{"values", big["parameters"]["p0"]}, {"ordered", true}};
  out["register_suite"] = time_it("PUT", "/api/v1/suites/many", big.dump(), 1);
  // A bisection over every value is a sweep whose search lists them all; the listing summarises it.
  json bis = {{"suite", "many"}, {"parameter", "p0"}, {"good", "v0"}, {"bad", "v" + std::to_string(values - 1)},
              {"config", {{"p1", "v0"}}}};
  auto b = c.Send("POST", "/api/v1/bisect", bis.dump(), "application/json");
  out["bisect_status"] = b.ok() ? b->status : -1;
  out["list_sweeps"] = time_it("GET", "/api/v1/sweeps", "", 5);
  std::cout << out.dump() << "\n";
}
