// The bounds of one heavy read (the matrix, compare, regressions, trial listings): a deadline, a
// count of rows it may read, and the daemon's stop. SQLite checks them through a progress handler
// (Store::ReadBounded), the C++ that folds the rows through Count(); either ends the query with
// sql::Error(SQLITE_INTERRUPT), which Why() turns into the answer that says what to narrow.
// docs/API.md "Query bounds".
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace gauntlet::store {

// Serve's bounds of every heavy read (gauntlet serve --query-timeout-ms, --query-max-rows).
struct QueryLimits {
  int64_t timeout_ms = 10000;   // 0: no deadline
  int64_t max_rows = 2000000;   // rows a query may read (trials, cells); 0: no bound
};

// One query's budget. Not shared between threads while it runs (Count is not atomic); Stopped()
// reads an atomic the stopping thread sets, so a stop reaches a query on any thread.
class QueryBudget {
 public:
  // `stopping` (may be null; must outlive the budget) is the daemon's stop flag.
  QueryBudget(const QueryLimits& limits, const std::atomic<bool>* stopping);
  // No deadline, no bound (a webhook's comparison, tests). Still never stopped.
  static QueryBudget Unbounded() { return QueryBudget(QueryLimits{0, 0}, nullptr); }

  enum class Why { kNone, kRows, kDeadline, kStopping };
  // True (and remembers why) once the deadline passed or the daemon is stopping. Cheap enough for
  // SQLite's progress handler.
  bool Expired();
  // Counts `n` rows read; throws sql::Error(SQLITE_INTERRUPT) once they pass max_rows, or (checked
  // every 256 rows) once Expired().
  void Count(int64_t n = 1);
  // What ended the query (kNone if nothing did).
  Why why() const { return why_; }
  int64_t rows() const { return rows_; }
  // The answer for a query this budget ended: over the rows: Invalid naming `field` ("reads more
  // than N rows; narrow it: `narrow`"), past the deadline: Unavailable ("took longer than N ms ...
  // `narrow`"), stopping: Unavailable ("the daemon is stopping"). `narrow` says how, in words of
  // the query's own parameters.
  Status Answer(const std::string& narrow, const std::string& field) const;

  // For sqlite3_progress_handler: `self` is a QueryBudget*; non-zero interrupts the statement.
  static int Progress(void* self);

 private:
  QueryLimits limits_;
  const std::atomic<bool>* stopping_;
  std::chrono::steady_clock::time_point deadline_;
  int64_t rows_ = 0;
  Why why_ = Why::kNone;
};

// True if `code` (an sql::Error's) is SQLite's interrupt: a budget ended the query. Pure.
bool IsInterrupt(int code);

}  // namespace gauntlet::store
