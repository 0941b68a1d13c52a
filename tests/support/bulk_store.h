// A big store made quickly, for tests and benches of heavy reads: one suite and one sweep of N done
// trials written with SQL in one transaction (finishing them one report at a time would take
// minutes and test something else), with the results index as FinishTrial keeps it.
#pragma once
#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "store/store.h"

namespace gauntlet::test {

// A suite `name` whose parameters p0, p1, ... declare `sizes[i]` values each ("v0", "v1", ...).
inline nlohmann::json GridSuite(const std::string& name, const std::vector<int>& sizes) {
  nlohmann::json params = nlohmann::json::object();
  for (size_t i = 0; i < sizes.size(); ++i) {
    nlohmann::json values = nlohmann::json::array();
    for (int v = 0; v < sizes[i]; ++v) values.push_back("v" + std::to_string(v));
    params["p" + std::to_string(i)] = values;
  }
  return {{"name", name}, {"version", 1}, {"parameters", params},
          {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
}

// Stores `suite` and one sweep of `trials` done trials over its grid (configs in order, wrapping),
// with verdicts drawn from a fixed seed over two hardware classes; returns the sweep's id.
inline int64_t FillSweep(const std::string& db_path, const nlohmann::json& suite, int64_t trials) {
  using nlohmann::json;
  auto store = std::move(*store::Store::Open(db_path));
  auto row = store->PutSuite(suite["name"], suite, "");
  std::vector<std::string> names;
  std::vector<size_t> sizes;
  for (auto& [k, v] : suite["parameters"].items())
    names.push_back(k), sizes.push_back(v.is_object() ? v["values"].size() : v.size());
  const char* verdicts[] = {"passed", "passed", "passed", "unsupported", "crashed", "wrong_output", "oom", "timeout"};
  const char* hw[] = {"NVIDIA H200 · sm_90 · x1", "NVIDIA B200 · sm_100 · x1"};
  std::mt19937 rng(42);
  int64_t sweep = 0;
  store->Write([&](store::sql::Db& db) {
    auto ins = db.Prepare("INSERT INTO sweeps(suite_id, name, request, trial_count, created_at) VALUES(?,?,?,?,?)");
    ins.Bind(1, row->id).Bind(2, "bulk").Bind(3, json{{"suite", suite["name"]}}.dump()).Bind(4, trials).Bind(5, 1);
    ins.Run();
    sweep = db.LastInsertId();
    auto t = db.Prepare(
        "INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, state, verdict, signature, created_at,"
        " finished_at, hardware, attempt, metric_name, metric_value, metric_unit, fingerprint)"
        " VALUES(?,?,?,?,0,'done',?,?,?,?,?,1,?,?,?,'{}')");
    for (int64_t i = 0; i < trials; ++i) {
      json cfg = json::object();
      std::string key;
      int64_t rest = i;
      for (size_t p = 0; p < names.size(); ++p) {
        const std::string v = "v" + std::to_string(rest % static_cast<int64_t>(sizes[p]));
        rest /= static_cast<int64_t>(sizes[p]);
        cfg[names[p]] = v;
        key += (key.empty() ? "" : "&") + names[p] + "=" + v;
      }
      const std::string v = verdicts[rng() % 8];
      t.Bind(1, sweep).Bind(2, row->id).Bind(3, cfg.dump()).Bind(4, key).Bind(5, v);
      t.Bind(6, v == "passed" ? "" : v + ":x").Bind(7, i).Bind(8, i).Bind(9, hw[rng() % 2]);
      if (v == "passed") t.Bind(10, "output_tok_s@c64").Bind(11, 1000.0 + rng() % 2000).Bind(12, "tok/s");
      else t.BindNull(10).BindNull(11).BindNull(12);
      t.Run();
    }
    db.Exec(
        "INSERT INTO cells(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id, last_seen,"
        " counts, metric_name, metric_value, metric_unit)"
        " SELECT su.name, su.version, config_key, hardware, config, verdict, signature, MAX(t.id), MAX(finished_at),"
        " json_object(verdict, 1), metric_name, metric_value, metric_unit FROM trials t JOIN suites su"
        " ON su.id = t.suite_id WHERE t.sweep_id = " +
        std::to_string(sweep) + " GROUP BY config_key, hardware");  // this sweep's: a second fill adds its own
  });
  return sweep;
}

}  // namespace gauntlet::test
