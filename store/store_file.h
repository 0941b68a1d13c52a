// The database file as a whole: is it a store that may be served (PRAGMA quick_check, an empty
// file), and a consistent copy of it while a daemon writes (SQLite's online backup API). Used by
// Store::Open, `gauntlet doctor` and `gauntlet backup` (docs/DEPLOY.md "Backup and restore").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace gauntlet::store {

// What a check of a store file found.
struct StoreCheck {
  bool ok = false;
  std::vector<std::string> problems;  // quick_check's (or integrity_check's) lines, at most 20
  int64_t pages = 0, page_size = 0;
  int user_version = 0;  // the schema version (migrations applied)
};

// Ok when `path` may be opened as a store: it does not exist (a new store is made there), or it is
// a database. Invalid naming the file and the fix when it is an empty file (0 bytes, no WAL beside
// it): that is not a new store but one whose contents are gone (or a file made by mistake), and
// starting on it would hide that. Pure but for a stat of the file.
Status CheckNotEmpty(const std::string& path);

// Runs PRAGMA quick_check (`full`: integrity_check, which also compares every index with its
// table) on `path`, opened read-only; safe while a daemon writes it (it reads one snapshot).
// Unavailable when the file cannot be opened as a database at all (its header is gone).
Result<StoreCheck> CheckStoreFile(const std::string& path, bool full);

// The words a refusal of a damaged store says: the file, what the check found and the fix. Pure.
std::string DamagedStoreMessage(const std::string& path, const std::vector<std::string>& problems);

// Copies the database `from` (a running daemon's is fine: one read snapshot, writers go on) to
// `to`, which must not exist: written to `to`.tmp, checked with quick_check, then renamed, so a
// copy that exists is whole. Returns the copy's check. Invalid naming `to` if it exists.
Result<StoreCheck> BackupStore(const std::string& from, const std::string& to);

}  // namespace gauntlet::store
