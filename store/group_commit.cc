// Group commit: many staged writes, one COMMIT. Each write runs at once in the open transaction (in
// a savepoint, so a failing write rolls back alone and its caller sees the error as before); the
// committer thread commits whatever is staged whenever it is woken, so under load one commit (one
// set of WAL frames for the pages the writes share) covers many leases and reports, and when idle
// a write is committed as soon as the committer runs. See docs/DECISIONS.md.
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <algorithm>

#include "store/store.h"

namespace gauntlet::store {

namespace {
thread_local int group_depth = 0;
constexpr size_t kFailedKept = 64;
}  // namespace

Store::Group::Group() { ++group_depth; }
Store::Group::~Group() { --group_depth; }

Store::~Store() {
  {
    MutexLock lock(write_mu_);
    stop_ = true;
  }
  commit_cv_.notify_all();
  if (committer_.joinable()) committer_.join();
}

void Store::BeginWriteLocked() {
  savepoint_ = open_;
  if (!open_) {
    writer_->Cached("BEGIN IMMEDIATE").Run();
    open_ = true;
  } else {
    writer_->Cached("SAVEPOINT w").Run();
  }
}

Status StoreErrorStatus(const sql::Error& e) {
  if (e.NoSpace())
    return Status(Code::kUnavailable, std::string("disk full: the database cannot grow (") + e.what() +
                                          "); nothing of this change was stored: retry once space is freed");
  return Status::Internal(std::string("store: ") + e.what());
}

namespace {
// A full disk is "back" only with room to spare: 16 MiB, or 5% of a smaller file system. A page
// freed here and there lets a one-page commit (health's probe, a heartbeat) through while the next
// real write fails again, and health flapped between ok and degraded (issue 31).
constexpr int64_t kSpaceHeadroom = 16 << 20;

// Whether the file system holding `path` (its folder) has that room; true when it cannot be told
// (":memory:", statvfs failing): then a commit alone says space is back.
bool RoomAt(const std::string& path) {
  if (path.empty() || path == ":memory:") return true;
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct statvfs v{};
  if (statvfs(dir.c_str(), &v) != 0) return true;
  const int64_t unit = static_cast<int64_t>(v.f_frsize);
  const int64_t total = static_cast<int64_t>(v.f_blocks) * unit, free = static_cast<int64_t>(v.f_bavail) * unit;
  return free >= std::min(kSpaceHeadroom, total / 20);
}
}  // namespace

void Store::NoteWriteErrorLocked(const sql::Error* e) {
  MutexLock lock(trouble_mu_);
  if (!e) {
    if (!no_space_) return;  // the common case: one flag test per commit
    if (!RoomAt(path_)) return;  // a commit squeezed in; the disk is still full
    spdlog::info("store: writes commit again (disk space is back)");
    no_space_.reset();
  } else if (e->NoSpace()) {
    if (!no_space_) spdlog::error("store: the disk is full; writes answer 503 until space is freed: {}", e->what());
    no_space_ = StoreErrorStatus(*e).message();
    last_probe_ms_ = NowMs();  // a write just failed: the probe would say nothing new for a second
  }
}

std::optional<std::string> Store::WriteTrouble() {
  {
    MutexLock lock(trouble_mu_);
    if (!no_space_) return std::nullopt;
    const int64_t now = NowMs();
    if (now - last_probe_ms_ < 1000) return no_space_;
    last_probe_ms_ = now;
  }
  // A write that changes nothing but a page of the file: it commits only where the disk has room.
  // Its failure (or success) updates no_space_ through the write path itself.
  try {
    Write([](sql::Db& db) {
      const int v = db.UserVersion();
      db.Exec("PRAGMA user_version = " + std::to_string(v));
    });
  } catch (const sql::Error&) {
  }
  MutexLock lock(trouble_mu_);
  return no_space_;
}

void Store::AbortWriteLocked() {
  // Called from Write's catch: the exception in flight says whether the disk is full.
  if (std::exception_ptr ep = std::current_exception()) {
    try {
      std::rethrow_exception(ep);
    } catch (const sql::Error& e) {
      NoteWriteErrorLocked(&e);
    } catch (...) {
    }
  }
  writer_->ResetAll();
  if (savepoint_ && !sqlite3_get_autocommit(writer_->raw())) {
    try {
      writer_->Cached("ROLLBACK TO w").Run();
      writer_->Cached("RELEASE w").Run();
      return;
    } catch (const sql::Error& e) {
      spdlog::error("store: rolling back one write failed: {}", e.what());
    }
  }
  // This write opened the transaction (nothing else is in it), or SQLite already rolled the whole
  // transaction back (some I/O errors do): either way the transaction ends here, and any other
  // writes staged in it are lost.
  if (!sqlite3_get_autocommit(writer_->raw())) {
    try {
      writer_->Exec("ROLLBACK");
    } catch (...) {
    }
  }
  open_ = false;
  if (savepoint_ && staged_ > committing_) {
    // Derived state is marked stale before any waiter hears of the loss, so a client retrying at
    // once after its 503 already meets the reloaded state.
    if (on_failure_) on_failure_();
    SettleLocked(staged_, Status(Code::kUnavailable, "store: a write failed and took the staged writes with it"));
  }
}

void Store::EndWriteLocked() {
  writer_->ResetAll();  // statements left mid-row must not outlive the transaction's snapshot
  if (savepoint_) writer_->Cached("RELEASE w").Run();
  ++staged_;
  if (group_depth == 0) {
    CommitLocked();
  } else {
    commit_cv_.notify_one();
  }
}

void Store::CommitLocked() {
  if (!open_) return;
  const Ticket upto = staged_;
  try {
    writer_->Cached("COMMIT").Run();
  } catch (const sql::Error& e) {
    writer_->ResetAll();
    if (!sqlite3_get_autocommit(writer_->raw())) {
      try {
        writer_->Exec("ROLLBACK");
      } catch (...) {
      }
    }
    open_ = false;
    spdlog::error("store: a commit failed; {} staged write(s) lost: {}", upto - committing_, e.what());
    NoteWriteErrorLocked(&e);
    if (on_failure_) on_failure_();  // before the waiters hear of it (see AbortWriteLocked)
    // Unavailable: what the commit held was lost, and the client's retry is what recovers it.
    Status why = StoreErrorStatus(e);
    SettleLocked(upto, Status(Code::kUnavailable, "store: commit failed: " + why.message()));
    throw;
  }
  open_ = false;
  NoteWriteErrorLocked(nullptr);
  SettleLocked(upto, Status::Ok());
}

void Store::SettleLocked(Ticket upto, const Status& s) {
  committing_ = upto;
  std::vector<std::function<void(const Status&)>> run;
  {
    MutexLock tickets(tickets_mu_);
    if (!s.ok()) {
      failed_.emplace_back(settled_ + 1, upto);
      if (failed_.size() > kFailedKept) failed_.pop_front();
    }
    settled_ = upto;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->first <= upto) {
        run.push_back(std::move(it->second));
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (run.empty()) return;
  // Callbacks answer clients and publish events: they must not hold up writers.
  MutexUnlock unlocked(write_mu_);
  for (auto& fn : run) fn(s);
}

void Store::CommitLoop() {
  UniqueLock lock(write_mu_);
  while (true) {
    commit_cv_.wait(lock.native(), [&]() REQUIRES(write_mu_) { return stop_ || (open_ && staged_ > committing_); });
    if (!stop_) {
      // Let the threads that are ready to stage a write do so first: on a busy daemon this puts
      // several writes in one commit; on an idle one the yield returns at once.
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    if (open_ && staged_ > committing_) {
      try {
        CommitLocked();
      } catch (const sql::Error&) {
        // Settled with the error above: the waiting answers say so, on_failure_ reloads.
      }
      continue;
    }
    if (stop_) return;
  }
}

Store::Ticket Store::Staged() { return staged_.load(); }

std::optional<Status> Store::Outcome(Ticket t) {
  MutexLock lock(tickets_mu_);
  if (t > settled_) return std::nullopt;
  for (auto& [lo, hi] : failed_)
    if (t >= lo && t <= hi) return Status(Code::kUnavailable, "store: the commit of this write failed");
  return Status::Ok();
}

void Store::AfterCommit(Ticket t, std::function<void(const Status&)> done) {
  {
    MutexLock lock(tickets_mu_);
    if (t > settled_) {
      waiting_.emplace_back(t, std::move(done));
      commit_cv_.notify_one();  // a nudge only: the write that staged `t` woke the committer already
      return;
    }
  }
  done(*Outcome(t));
}

Status Store::Flush() {
  MutexLock lock(write_mu_);
  try {
    CommitLocked();
  } catch (const sql::Error& e) {
    return StoreErrorStatus(e);
  }
  return Status::Ok();
}

}  // namespace gauntlet::store
