// FlakyCells (declared in analytics.h): the results index's flaky cells with their measured rates.
#include <algorithm>

#include "core/pass_rate.h"
#include "store/analytics.h"

namespace gauntlet::store {
using nlohmann::json;

Result<json> FlakyCells(Store& store, const std::string& suite, std::optional<int> version) {
  auto su = store.GetSuite(suite, version && *version > 0 ? version : std::nullopt);
  if (!su.ok()) return su.status();
  const int shown = version ? *version : su->version;
  json items = json::array();
  try {
    store.Read([&](sql::Db& db) {
      std::string sql =
          "SELECT config_key, config, hardware, suite_version, verdict, signature, trial_id, last_seen, counts, judged,"
          " reused FROM cells WHERE suite = ? AND flaky = 1";
      if (shown > 0) sql += " AND suite_version = ?";
      auto s = db.Prepare(sql);
      s.Bind(1, suite);
      if (shown > 0) s.Bind(2, shown);
      while (s.Step()) {
        const json counts = json::parse(s.TextView(8), nullptr, false);
        const json judged = json::parse(s.TextView(9), nullptr, false);
        items.push_back({{"config_key", s.Text(0)}, {"config", json::parse(s.TextView(1))}, {"hardware", s.Text(2)},
                         {"suite_version", s.Int(3)}, {"verdict", s.Text(4)}, {"signature", s.Text(5)},
                         {"trial", s.Int(6)}, {"last_seen", s.Int(7)},
                         {"counts", counts.is_object() ? counts : json::object()},
                         {"verdicts_by_fingerprint", judged.is_object() ? judged : json::object()},
                         {"reused", s.Int(10)}, {"pass_rate", PassRateJson(counts, s.Int(10))}});
      }
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  // The least reliable first: that is where a person looks.
  std::stable_sort(items.begin(), items.end(), [](const json& a, const json& b) {
    const double ra = a["pass_rate"].is_object() ? a["pass_rate"]["rate"].get<double>() : 1;
    const double rb = b["pass_rate"].is_object() ? b["pass_rate"]["rate"].get<double>() : 1;
    if (ra != rb) return ra < rb;
    return std::tie(a["hardware"], a["config_key"]) < std::tie(b["hardware"], b["config_key"]);
  });
  return json{{"suite", suite}, {"suite_version", shown > 0 ? json(shown) : json("all")}, {"items", items}};
}

}  // namespace gauntlet::store
