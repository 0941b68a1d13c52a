#include "store/query_budget.h"

#include <sqlite3.h>

#include "store/sqlite.h"

namespace gauntlet::store {

QueryBudget::QueryBudget(const QueryLimits& limits, const std::atomic<bool>* stopping)
    : limits_(limits),
      stopping_(stopping),
      deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms)) {}

bool QueryBudget::Expired() {
  if (why_ != Why::kNone) return true;
  if (stopping_ && stopping_->load(std::memory_order_relaxed)) why_ = Why::kStopping;
  else if (limits_.timeout_ms > 0 && std::chrono::steady_clock::now() >= deadline_) why_ = Why::kDeadline;
  return why_ != Why::kNone;
}

void QueryBudget::Count(int64_t n) {
  const int64_t before = rows_;
  rows_ += n;
  if (limits_.max_rows > 0 && rows_ > limits_.max_rows && why_ == Why::kNone) why_ = Why::kRows;
  // The clock every 256 rows: a row costs far less than reading the clock would.
  if (why_ != Why::kNone || (before >> 8) != (rows_ >> 8)) {
    if (Expired()) throw sql::Error(SQLITE_INTERRUPT, "query ended by its budget");
  }
}

int QueryBudget::Progress(void* self) { return static_cast<QueryBudget*>(self)->Expired() ? 1 : 0; }

Status QueryBudget::Answer(const std::string& narrow, const std::string& field) const {
  switch (why_) {
    case Why::kRows:
      return Status::Invalid("this query reads more than " + std::to_string(limits_.max_rows) +
                                 " rows (the daemon's --query-max-rows): narrow it: " + narrow,
                             field);
    case Why::kDeadline:
      return Status(Code::kUnavailable, "this query took longer than " + std::to_string(limits_.timeout_ms) +
                                            " ms (the daemon's --query-timeout-ms) and was stopped: narrow it: " + narrow);
    case Why::kStopping:
      return Status(Code::kUnavailable, "the daemon is stopping: this query was stopped; retry once it is back");
    case Why::kNone: break;
  }
  return Status::Internal("query interrupted without a reason");
}

bool IsInterrupt(int code) { return (code & 0xff) == SQLITE_INTERRUPT; }

}  // namespace gauntlet::store
