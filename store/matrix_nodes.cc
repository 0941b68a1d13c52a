// Which nodes ran a matrix's results (declared in analytics.h), for exports that name the hardware
// beyond its class: the GPU's memory, the driver and CUDA versions, the node names.
#include "store/analytics.h"

namespace gauntlet::store {

Result<std::vector<std::pair<std::string, int64_t>>> ResultNodes(Store& store, const std::string& suite,
                                                                 std::optional<int64_t> sweep) {
  std::vector<std::pair<std::string, int64_t>> out;
  try {
    store.Read([&](sql::Db& db) {
      std::string sql =
          "SELECT DISTINCT COALESCE(t.hardware, ''), t.node_id FROM trials t JOIN suites su ON su.id = t.suite_id"
          " WHERE su.name = ? AND t.state = 'done' AND t.node_id IS NOT NULL";
      if (sweep) sql += " AND t.sweep_id = ?";
      sql += " ORDER BY 1, 2";
      auto s = db.Prepare(sql);
      s.Bind(1, suite);
      if (sweep) s.Bind(2, *sweep);
      while (s.Step()) out.emplace_back(s.Text(0), s.Int(1));
    });
  } catch (const sql::Error& e) {
    return Status::Internal(e.what());
  }
  return out;
}

}  // namespace gauntlet::store
