// Numbered schema migrations tracked by PRAGMA user_version.
#pragma once
#include <string>
#include <vector>

#include "store/sqlite.h"

namespace gauntlet::store {

// The migrations in order (static storage); migration i (1-based) moves user_version from i-1 to i.
const std::vector<std::string>& Migrations();

// Applies every migration above the database's user_version, each in one transaction together with
// its user_version bump, up to `target` (default: all). Throws sql::Error; a failed step leaves the
// database at the previous version. Refuses (throws) a database newer than this binary knows.
// Not thread-safe (as `db`): run it before the connection is shared.
void Migrate(sql::Db& db, int target = -1);

}  // namespace gauntlet::store
