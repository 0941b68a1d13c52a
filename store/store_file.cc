#include "store/store_file.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "store/sqlite.h"

namespace gauntlet::store {

namespace {
int64_t SizeOf(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// quick_check/integrity_check and the file's shape, on an open connection.
StoreCheck Check(sql::Db& db, bool full) {
  StoreCheck c;
  auto s = db.Prepare(full ? "PRAGMA integrity_check(20)" : "PRAGMA quick_check(20)");
  while (s.Step()) {
    const std::string line = s.Text(0);
    if (line != "ok") c.problems.push_back(line);
  }
  c.ok = c.problems.empty();
  auto n = db.Prepare("PRAGMA page_count");
  if (n.Step()) c.pages = n.Int(0);
  auto z = db.Prepare("PRAGMA page_size");
  if (z.Step()) c.page_size = z.Int(0);
  c.user_version = db.UserVersion();
  return c;
}
}  // namespace

Status CheckNotEmpty(const std::string& path) {
  if (path.empty() || path == ":memory:") return Status::Ok();
  const int64_t size = SizeOf(path);
  if (size != 0) return Status::Ok();  // absent (-1): a new store; or a file with contents
  // A store whose pages all sit in its write-ahead log, never checkpointed, has an empty main file.
  if (SizeOf(path + "-wal") > 0) return Status::Ok();
  return Status::Invalid(path + " is an empty file (0 bytes), not a Gauntlet store: its contents are gone, or it was "
                         "made by mistake. To start a new store there, remove the file (a path that does not exist "
                         "becomes a new store); to go on with the old one, restore a backup over it (docs/DEPLOY.md "
                         "\"Backup and restore\")",
                         "db");
}

std::string DamagedStoreMessage(const std::string& path, const std::vector<std::string>& problems) {
  std::string found;
  for (size_t i = 0; i < problems.size() && i < 5; ++i) found += (i ? "; " : "") + problems[i];
  if (problems.size() > 5) found += "; ... (" + std::to_string(problems.size() - 5) + " more)";
  return path + " is damaged (PRAGMA quick_check: " + found +
         "): refusing to serve it, nothing was written. Stop anything else using it and restore the latest backup "
         "over it (gauntlet backup makes one; docs/DEPLOY.md \"Backup and restore\"), or salvage what is readable: "
         "sqlite3 " + path + " .recover | sqlite3 NEW.db, then serve --db NEW.db. `gauntlet doctor --db " + path +
         "` repeats the check";
}

Result<StoreCheck> CheckStoreFile(const std::string& path, bool full) {
  if (SizeOf(path) < 0) return Status::NotFound("no file " + path);
  try {
    sql::Db db(path, /*readonly=*/true);
    return Check(db, full);
  } catch (const sql::Error& e) {
    const int code = e.code() & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
      StoreCheck c;
      c.problems.push_back(e.what());
      return c;
    }
    return Status(Code::kUnavailable, std::string("cannot check ") + path + ": " + e.what());
  }
}

Result<StoreCheck> BackupStore(const std::string& from, const std::string& to) {
  if (SizeOf(from) <= 0) return Status::NotFound("no store at " + from);
  if (SizeOf(to) >= 0) return Status::Invalid(to + " exists: give a new file (a backup never overwrites)", "out");
  const std::string tmp = to + ".tmp";
  ::unlink(tmp.c_str());
  try {
    {
      sql::Db src(from, /*readonly=*/true);
      sqlite3* dst = nullptr;
      if (sqlite3_open_v2(tmp.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        std::string msg = dst ? sqlite3_errmsg(dst) : "out of memory";
        sqlite3_close(dst);
        return Status(Code::kUnavailable, "cannot create " + tmp + ": " + msg);
      }
      // One step of all pages: a single read snapshot of the source (WAL: writers are not blocked),
      // where stepping in chunks would restart on every write the daemon commits meanwhile.
      sqlite3_backup* b = sqlite3_backup_init(dst, "main", src.raw(), "main");
      int rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(dst);
      if (b) sqlite3_backup_finish(b);
      std::string msg = sqlite3_errmsg(dst);
      if (rc == SQLITE_DONE) rc = sqlite3_errcode(dst);
      sqlite3_close(dst);
      if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        ::unlink(tmp.c_str());
        return Status(Code::kUnavailable, "backup of " + from + " failed: " + msg);
      }
    }
    StoreCheck c;
    {
      sql::Db copy(tmp);  // ours, not yet anyone's: read-write, so its WAL mode needs no -shm beside it
      c = Check(copy, /*full=*/false);
    }
    if (!c.ok) {
      ::unlink(tmp.c_str());
      return Status::Internal("the copy of " + from + " fails quick_check (" + c.problems.front() +
                              "): is the store itself damaged? gauntlet doctor --db " + from);
    }
    if (::rename(tmp.c_str(), to.c_str()) != 0) {
      ::unlink(tmp.c_str());
      return Status(Code::kUnavailable, "cannot rename " + tmp + " to " + to);
    }
    return c;
  } catch (const sql::Error& e) {
    ::unlink(tmp.c_str());
    return Status(Code::kUnavailable, std::string("backup of ") + from + " failed: " + e.what());
  }
}

}  // namespace gauntlet::store
