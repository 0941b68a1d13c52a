// The Store's suite bundles (store.h "Suite bundles"): archives kept by their SHA-256, never rewritten.
#include "store/store.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using namespace detail;

Status Store::PutBundle(const std::string& sha256, const std::string& bytes, size_t files, bool* created) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& ins = db.Cached(
          "INSERT INTO bundles(sha256, size, files, data, created_at) VALUES(?,?,?,?,?) ON CONFLICT(sha256) DO NOTHING");
      ins.Bind(1, sha256).Bind(2, static_cast<int64_t>(bytes.size())).Bind(3, static_cast<int64_t>(files));
      ins.BindBlob(4, bytes).Bind(5, NowMs());
      ins.Run();
      if (created) *created = sqlite3_changes(db.raw()) > 0;
      return Status::Ok();
    });
  });
}

Result<std::string> Store::GetBundle(const std::string& sha256) {
  return Guard([&]() -> Result<std::string> {
    return Read([&](sql::Db& db) -> Result<std::string> {
      auto& s = db.Cached("SELECT data FROM bundles WHERE sha256=?");
      s.Bind(1, sha256);
      if (!s.Step()) return Status::NotFound("no suite bundle " + sha256);
      return s.Text(0);
    });
  });
}

bool Store::HasBundle(const std::string& sha256) {
  auto r = Guard([&]() -> Result<bool> {
    return Read([&](sql::Db& db) -> Result<bool> {
      auto& s = db.Cached("SELECT 1 FROM bundles WHERE sha256=?");
      s.Bind(1, sha256);
      return s.Step();
    });
  });
  return r.ok() && *r;
}

}  // namespace gauntlet::store
