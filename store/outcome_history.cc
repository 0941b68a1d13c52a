#include "store/outcome_history.h"

#include <optional>
#include <vector>

#include "core/outcome_order.h"
#include "core/verdict.h"

namespace gauntlet::store {

bool FailureDidNotStay(sql::Db& db, int64_t suite_id, const std::string& config_key, const std::string& hardware) {
  // trials_by_suite (suite_id, config_key) narrows it to one config's runs.
  auto& q = db.Cached(
      "SELECT verdict FROM (SELECT verdict, finished_at, id FROM trials WHERE suite_id = ? AND config_key = ?"
      " AND hardware = ? AND state = 'done' AND verdict IN ('passed', 'unsupported', 'crashed', 'wrong_output',"
      " 'fallback', 'oom') ORDER BY finished_at DESC, id DESC LIMIT ?) ORDER BY finished_at, id");
  q.Bind(1, suite_id).Bind(2, config_key).Bind(3, hardware).Bind(4, static_cast<int64_t>(kOrderWindow));
  std::vector<Verdict> order;
  while (q.Step())
    if (std::optional<Verdict> v = ParseVerdict(q.TextView(0))) order.push_back(*v);
  q.Reset();
  if (order.empty()) return false;
  return ReadOutcomeOrder(order) == OutcomeOrder::kInterleaved || order.back() == Verdict::kPassed;
}

bool FailureDidNotStay(sql::Db& db, const std::string& suite, int64_t version, const std::string& config_key,
                       const std::string& hardware) {
  auto& q = db.Cached("SELECT id FROM suites WHERE name = ? AND version = ?");
  q.Bind(1, suite).Bind(2, version);
  const std::optional<int64_t> id = q.Step() ? std::optional<int64_t>(q.Int(0)) : std::nullopt;
  q.Reset();
  return id && FailureDidNotStay(db, *id, config_key, hardware);
}

}  // namespace gauntlet::store
