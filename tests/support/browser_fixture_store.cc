// A fixture for the dashboard's big-matrix test (tests/browser/matrix_scale.test.mjs): writes a store
// holding suite `wide-grid` (parameters row × col × batch, stages check and bench) and one finished
// sweep of ROWS × COLS configs on one hardware class, `cpu`, with the results index as FinishTrial
// keeps it. Running 14,400 trials through workers takes minutes on a small machine and tests
// something else; the page reads the same rows either way.
//   browser_fixture_store DB ROWS COLS
// Cell (r, c), k = r * COLS + c, by k % 9: 4 unsupported:dtype, 5 crashed:exit_code:1, 6 timeout:check,
// 7 mixed (batch 1 passes, batch 2 oom:cuda), the rest passed with a throughput of 1000 + k % 500.
#include <cstdio>
#include <string>

#include "store/store.h"

namespace {
using nlohmann::json;

std::string Padded(const char* prefix, int i, int width) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s%0*d", prefix, width, i);
  return buf;
}

int Fill(const std::string& path, int rows, int cols) {
  auto opened = gauntlet::store::Store::Open(path);
  if (!opened.ok()) return fprintf(stderr, "%s\n", opened.status().message().c_str()), 1;
  auto store = std::move(*opened);
  json row_values = json::array(), col_values = json::array();
  for (int r = 0; r < rows; ++r) row_values.push_back(Padded("r", r, 3));
  for (int c = 0; c < cols; ++c) col_values.push_back(Padded("c", c, 2));
  const json suite = {{"name", "wide-grid"}, {"version", 1}, {"key_metric", "output_tok_s"},
                      {"description", "browser fixture: a matrix of 600 rows and 24 columns on one hardware class"},
                      {"parameters", {{"row", row_values}, {"col", col_values}, {"batch", {"1", "2"}}}},
                      {"stages", {{{"name", "check"}, {"kind", "command"}, {"argv", {"true"}}},
                                  {{"name", "bench"}, {"kind", "command"}, {"argv", {"true"}}}}}};
  auto su = store->PutSuite("wide-grid", suite, "");
  if (!su.ok()) return fprintf(stderr, "%s\n", su.status().message().c_str()), 1;
  const std::string fp = R"({"mylib":"1.0"})";
  store->Write([&](gauntlet::store::sql::Db& db) {
    auto sw = db.Prepare("INSERT INTO sweeps(suite_id, name, request, trial_count, created_at) VALUES(?,?,?,?,?)");
    sw.Bind(1, su->id).Bind(2, "wide").Bind(3, json{{"suite", "wide-grid"}}.dump()).Bind(4, rows * cols).Bind(5, 1);
    sw.Run();
    const int64_t sweep = db.LastInsertId();
    auto t = db.Prepare(
        "INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, state, verdict, signature, created_at,"
        " finished_at, hardware, attempt, metric_name, metric_value, metric_unit, fingerprint)"
        " VALUES(?,?,?,?,0,'done',?,?,?,?,'cpu',1,?,?,?,?)");
    int64_t at = 1;
    auto add = [&](const std::string& r, const std::string& c, const std::string& batch, const std::string& verdict,
                   const std::string& signature, double metric) {
      const json cfg = {{"row", r}, {"col", c}, {"batch", batch}};
      t.Bind(1, sweep).Bind(2, su->id).Bind(3, cfg.dump()).Bind(4, "batch=" + batch + "&col=" + c + "&row=" + r);
      t.Bind(5, verdict).Bind(6, signature).Bind(7, at).Bind(8, at);
      if (verdict == "passed") t.Bind(9, "output_tok_s").Bind(10, metric).Bind(11, "tok/s");
      else t.BindNull(9).BindNull(10).BindNull(11);
      t.Bind(12, fp).Run();
      ++at;
    };
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const int k = r * cols + c;
        const std::string rv = row_values[r].get<std::string>(), cv = col_values[c].get<std::string>();
        const double metric = 1000 + k % 500;
        switch (k % 9) {
          case 4: add(rv, cv, "1", "unsupported", "unsupported:dtype", 0); break;
          case 5: add(rv, cv, "1", "crashed", "crashed:exit_code:1", 0); break;
          case 6: add(rv, cv, "1", "timeout", "timeout:check", 0); break;
          case 7:
            add(rv, cv, "1", "passed", "", metric);
            add(rv, cv, "2", "oom", "oom:cuda", 0);
            break;
          default: add(rv, cv, "1", "passed", "", metric);
        }
      }
    db.Exec(
        "INSERT INTO cells(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id, fingerprint,"
        " last_seen, counts, judged, metric_name, metric_value, metric_unit)"
        " SELECT su.name, su.version, t.config_key, t.hardware, t.config, t.verdict, t.signature, t.id, t.fingerprint,"
        " t.finished_at, json_object(t.verdict, 1), json_object(t.fingerprint, json_array(t.verdict)), t.metric_name,"
        " t.metric_value, t.metric_unit FROM trials t JOIN suites su ON su.id = t.suite_id WHERE t.sweep_id = " +
        std::to_string(sweep));
  });
  printf("%d\n", rows * cols);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fprintf(stderr, "usage: browser_fixture_store DB ROWS COLS\n"), 2;
  return Fill(argv[1], std::stoi(argv[2]), std::stoi(argv[3]));
}
