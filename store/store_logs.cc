// The Store's trial logs (see store.h): each attempt's log, started at its lease, appended in
// bounded pieces and read back by offset.
#include "store/store.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;
using namespace detail;

void Store::StartAttemptLogLocked(sql::Db& db, int64_t trial, const AttemptLog& log) {
  const int64_t size = log.size, base = log.base, labelled = log.labelled, attempt = log.attempt;
  // Nothing logged yet: this attempt's log is the trial's whole log, with no label. The same attempt
  // granted again (a grant given back unseen) with nothing written since: it goes on from there.
  // LeaseTrial's statement already set log_attempt for these two.
  if (size == 0 || (size <= base && labelled == attempt)) return;
  auto& u = db.Cached("UPDATE trials SET log_size=?, log_base=?, log_attempt=? WHERE id=?");
  const std::string earlier = labelled > 0 && labelled < attempt ? "attempt " + std::to_string(labelled) + "'s"
                                                                 : "an earlier run's";
  const std::string mark = "\n[gauntlet] ===== attempt " + std::to_string(attempt) +
                           " of this trial begins here; the log above is " + earlier + " =====\n";
  auto& ins = db.Cached("INSERT OR REPLACE INTO log_chunks(trial_id, offset, data) VALUES(?,?,?)");
  ins.Bind(1, trial).Bind(2, size).BindBlob(3, mark).Run();
  const int64_t end = size + static_cast<int64_t>(mark.size());
  u.Bind(1, end).Bind(2, end).Bind(3, attempt).Bind(4, trial).Run();
}

Status Store::AppendLog(int64_t trial, int64_t offset, std::string_view data, int64_t cap) {
  return Guard([&]() -> Status {
    return Write([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT log_size, log_base FROM trials WHERE id=?");
      s.Bind(1, trial);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(trial));
      const int64_t size = s.Int(0), base = s.Int(1);
      s.Reset();
      // The worker counts from its own attempt's first byte; earlier attempts' logs stay before it.
      if (offset > size - base) return Status::Conflict("log offset " + std::to_string(offset) + " is past the end " +
                                                        std::to_string(size - base) + " of this attempt's log");
      offset += base;
      if (offset + static_cast<int64_t>(data.size()) <= size) return Status::Ok();  // a retry of a stored chunk
      data.remove_prefix(static_cast<size_t>(size - offset));
      offset = size;
      auto& ins = db.Cached("INSERT OR REPLACE INTO log_chunks(trial_id, offset, data) VALUES(?,?,?)");
      ins.Bind(1, trial).Bind(2, offset).BindBlob(3, data).Run();
      // Keep the head and the tail: drop whole chunks from the middle once the stored bytes pass the cap.
      if (offset + static_cast<int64_t>(data.size()) > cap) {
        auto& del = db.Cached(
            "DELETE FROM log_chunks WHERE trial_id=? AND offset >= ? AND offset + length(data) <= ?");
        del.Bind(1, trial).Bind(2, cap / 2).Bind(3, offset + static_cast<int64_t>(data.size()) - cap / 2).Run();
      }
      auto& u = db.Cached("UPDATE trials SET log_size=? WHERE id=?");
      u.Bind(1, offset + static_cast<int64_t>(data.size())).Bind(2, trial).Run();
      return Status::Ok();
    });
  });
}

Status Store::ReadLog(int64_t trial, int64_t offset, int64_t max, std::string* out, int64_t* size,
                      int64_t* next) {
  return Guard([&]() -> Status {
    return Read([&](sql::Db& db) -> Status {
      auto& s = db.Cached("SELECT log_size FROM trials WHERE id=?");
      s.Bind(1, trial);
      if (!s.Step()) return Status::NotFound("no trial " + std::to_string(trial));
      *size = s.Int(0);
      auto& q = db.Cached(
          "SELECT offset, data FROM log_chunks WHERE trial_id=? AND offset + length(data) > ? ORDER BY offset");
      q.Bind(1, trial).Bind(2, offset);
      int64_t pos = offset;
      while (q.Step() && static_cast<int64_t>(out->size()) < max) {
        int64_t off = q.Int(0);
        std::string_view d = q.TextView(1);
        if (off > pos) {  // a gap the cap cut out: say so in the text, once
          std::string note = "\n[... " + std::to_string(off - pos) + " bytes of log cut here (log cap) ...]\n";
          out->append(note);
          pos = off;
        }
        size_t skip = static_cast<size_t>(pos - off);
        size_t take = std::min<size_t>(d.size() - skip, static_cast<size_t>(max - static_cast<int64_t>(out->size())));
        out->append(d.substr(skip, take));
        pos += static_cast<int64_t>(take);
      }
      *next = std::max(pos, std::min(offset, *size));
      return Status::Ok();
    });
  });
}

}  // namespace gauntlet::store
