#include "store/sqlite.h"

#include <cerrno>

namespace gauntlet::store::sql {
namespace {
[[noreturn]] void Fail(sqlite3* db, int rc, std::string_view what) {
  const int code = db ? sqlite3_extended_errcode(db) : rc;
  throw Error(code, std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)),
              db ? sqlite3_system_errno(db) : 0);
}
}  // namespace

bool Error::NoSpace() const {
  return (code_ & 0xff) == SQLITE_FULL || ((code_ & 0xff) == SQLITE_IOERR && sys_errno_ == ENOSPC);
}

Db::Db(const std::string& path, bool readonly) {
  // SQLite's allocation statistics are read nowhere here, and keeping them takes a global mutex
  // around every malloc and free SQLite makes (hundreds per lease and report). Off before SQLite
  // initialises (the first open); a process that used SQLite before keeps them (MISUSE, ignored).
  static const int kNoMemStatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)kNoMemStatus;
  int flags = readonly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(rc, "open " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 5000);
  sqlite3_extended_result_codes(db_, 1);
  // WAL lets readers proceed while the single writer commits; NORMAL sync is durable against
  // process crashes (SIGKILL), which is what the daemon promises; see docs/DECISIONS.md.
  if (!readonly) Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  Exec("PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
}

Db::~Db() {
  by_literal_.clear();
  cache_.clear();  // finalize cached statements before the connection closes
  if (db_) sqlite3_close_v2(db_);
}

Stmt& Db::Cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) it = cache_.emplace(sql, std::make_unique<Stmt>(Prepare(sql))).first;
  it->second->Reset();
  return *it->second;
}

Stmt& Db::CachedLiteral(const char* sql) {
  auto it = by_literal_.find(sql);
  if (it == by_literal_.end()) it = by_literal_.emplace(sql, &Cached(std::string(sql))).first;
  it->second->Reset();
  return *it->second;
}

void Db::ResetAll() {
  for (sqlite3_stmt* p = sqlite3_next_stmt(db_, nullptr); p; p = sqlite3_next_stmt(db_, p))
    if (sqlite3_stmt_busy(p)) sqlite3_reset(p);
}

void Db::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw Error(sqlite3_extended_errcode(db_), "exec: " + msg, sqlite3_system_errno(db_));
  }
}

Stmt Db::Prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK) Fail(db_, rc, "prepare '" + std::string(sql.substr(0, 80)) + "'");
  return Stmt(db_, s);
}

int Db::UserVersion() {
  Stmt s = Prepare("PRAGMA user_version");
  s.Step();
  return static_cast<int>(s.Int(0));
}

Stmt& Stmt::Bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(s_, i, v); rc != SQLITE_OK) Fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::Bind(int i, double v) {
  if (int rc = sqlite3_bind_double(s_, i, v); rc != SQLITE_OK) Fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::Bind(int i, std::string_view v) {
  if (int rc = sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); rc != SQLITE_OK)
    Fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::BindBlob(int i, std::string_view v) {
  if (int rc = sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); rc != SQLITE_OK)
    Fail(db_, rc, "bind");
  return *this;
}
Stmt& Stmt::BindNull(int i) {
  if (int rc = sqlite3_bind_null(s_, i); rc != SQLITE_OK) Fail(db_, rc, "bind");
  return *this;
}

bool Stmt::Step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string msg = sqlite3_errmsg(db_);
  sqlite3_reset(s_);
  throw Error(rc, "step: " + msg);
}

void Stmt::Run() {
  while (Step()) {
  }
  sqlite3_reset(s_);
}

void Stmt::Reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string Stmt::Text(int col) const { return std::string(TextView(col)); }

std::string_view Stmt::TextView(int col) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_blob(s_, col));
  int n = sqlite3_column_bytes(s_, col);
  return p ? std::string_view(p, n) : std::string_view();
}

Txn::Txn(Db& db) : db_(db) { db_.Exec("BEGIN IMMEDIATE"); }

Txn::~Txn() {
  if (!done_) {
    try {
      db_.Exec("ROLLBACK");
    } catch (...) {
      // A failed rollback leaves SQLite to roll back on close; nothing else is safe here.
    }
  }
}

void Txn::Commit() {
  db_.Exec("COMMIT");
  done_ = true;
}

}  // namespace gauntlet::store::sql
