#include "store/declared_support.h"

#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

Status PutDeclared(Store& store, const std::string& suite, const json& canonical) {
  return detail::Guard([&]() -> Status {
    store.Write([&](sql::Db& db) {
      auto s = db.Prepare(
          "INSERT INTO declared(suite, body, updated_at) VALUES(?, ?, ?)"
          " ON CONFLICT(suite) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at");
      s.Bind(1, suite).Bind(2, canonical.dump()).Bind(3, NowMs());
      s.Step();
    });
    return Status::Ok();
  });
}

Result<std::optional<json>> GetDeclared(Store& store, const std::string& suite) {
  return detail::Guard([&]() -> Result<std::optional<json>> {
    return store.Read([&](sql::Db& db) -> Result<std::optional<json>> {
      auto s = db.Prepare("SELECT body, updated_at FROM declared WHERE suite = ?");
      s.Bind(1, suite);
      if (!s.Step()) return std::optional<json>();
      json j = detail::ParseOr(s.TextView(0), json::object());
      j["updated_at"] = s.Int(1);
      return std::optional<json>(std::move(j));
    });
  });
}

}  // namespace gauntlet::store
