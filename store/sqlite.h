// Thin RAII wrappers over SQLite's C API: a connection, a prepared statement, a transaction.
// None of these types is thread-safe; use one connection per thread or guard it with a mutex.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gauntlet::store::sql {

// Thrown for SQLite failures; the store converts it into Status at its boundary.
class Error : public std::runtime_error {
 public:
  // `code`: SQLite's (extended) result code; `sys_errno`: the OS error behind an I/O error, or 0.
  Error(int code, const std::string& what, int sys_errno = 0)
      : std::runtime_error(what), code_(code), sys_errno_(sys_errno) {}
  int code() const { return code_; }
  // The file system is out of space: SQLITE_FULL, or an I/O error whose cause was ENOSPC (SQLite
  // reports a failed write of the WAL or the database file either way).
  bool NoSpace() const;

 private:
  int code_;
  int sys_errno_;
};

class Stmt;

// An open database connection (opened SQLITE_OPEN_NOMUTEX: one thread at a time); closes on
// destruction. Move-only; a moved-from Db may only be destroyed.
class Db {
 public:
  // Opens (creating if needed) `path`; ":memory:" gives a private in-memory database.
  // Sets WAL and synchronous=NORMAL (unless readonly), foreign keys on, a 5 s busy timeout; throws
  // Error on failure.
  explicit Db(const std::string& path, bool readonly = false);
  ~Db();
  Db(Db&& o) noexcept : db_(o.db_), cache_(std::move(o.cache_)), by_literal_(std::move(o.by_literal_)) {
    o.db_ = nullptr;
  }
  Db& operator=(Db&&) = delete;
  Db(const Db&) = delete;

  // Runs one or more statements without results; throws Error.
  void Exec(std::string_view sql);
  // Prepares a statement owned by the caller; it must not outlive this Db. Throws Error.
  Stmt Prepare(std::string_view sql);
  // A statement prepared once per connection and kept (hot paths: parsing SQL costs more than
  // running it). Returned reset with no bindings; valid until the Db dies. Not reentrant: finish
  // with one use before the next Cached() of the same SQL.
  Stmt& Cached(const std::string& sql);
  // The same for SQL written as a string literal (nearly every call), found by the literal's address:
  // no string is built and no SQL text hashed per use, which the lease cycle's dozen statements paid
  // each time. A literal's address is fixed for the process, so it names its text.
  template <size_t N>
  Stmt& Cached(const char (&sql)[N]) {
    return CachedLiteral(sql);
  }
  // Resets every statement still in progress, ending its read snapshot (connection reuse, WAL checkpoints).
  void ResetAll();
  // The rowid of this connection's latest INSERT; the rows its latest INSERT/UPDATE/DELETE changed.
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  int UserVersion();  // PRAGMA user_version; throws Error
  // The handle, still owned by this Db.
  sqlite3* raw() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  Stmt& CachedLiteral(const char* sql);
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
  std::unordered_map<const char*, Stmt*> by_literal_;  // into cache_, whose entries never move
};

// A prepared statement; finalizes on destruction; must not outlive its Db. Bind indexes start at 1,
// column indexes at 0. Bind* throw Error; the column readers read the current row (after Step true).
class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
  Stmt(const Stmt&) = delete;

  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);  // copied by SQLite (SQLITE_TRANSIENT)
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& BindBlob(int i, std::string_view v);
  Stmt& BindNull(int i);
  template <typename T>
  Stmt& Bind(int i, const std::optional<T>& v) { return v ? Bind(i, *v) : BindNull(i); }

  // Advances; true while a row is available. Throws Error on failure.
  bool Step();
  // Steps to completion (for writes) and resets; the bindings stay.
  void Run();
  void Reset();  // resets and clears bindings for reuse

  bool IsNull(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(s_, col); }
  double Double(int col) const { return sqlite3_column_double(s_, col); }
  std::string Text(int col) const;
  std::string_view TextView(int col) const;  // valid until the next Step/Reset
  std::optional<int64_t> OptInt(int col) const { return IsNull(col) ? std::nullopt : std::optional(Int(col)); }
  std::optional<std::string> OptText(int col) const { return IsNull(col) ? std::nullopt : std::optional(Text(col)); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_;
};

// BEGIN IMMEDIATE on construction; rolls back on destruction unless Commit() succeeded (a Commit
// that throws Error leaves the rollback to the destructor). `db` must outlive it.
class Txn {
 public:
  explicit Txn(Db& db);
  ~Txn();
  Txn(const Txn&) = delete;
  void Commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace gauntlet::store::sql
