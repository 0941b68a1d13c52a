#include "store/deliveries.h"

#include "store/store_rows.h"

namespace gauntlet::store {
using detail::Guard;

namespace {
void Insert(sql::Db& db, const std::vector<NewDelivery>& ds, int64_t now) {
  auto& s = db.Cached(
      "INSERT INTO webhook_deliveries(hook, event, body, state, attempts, next_at, created_at)"
      " VALUES(?, ?, ?, 'pending', 0, ?, ?)");
  for (auto& d : ds) s.Bind(1, d.hook).Bind(2, d.event).Bind(3, d.body).Bind(4, now).Bind(5, now).Run();
}

constexpr const char* kCols =
    "id, hook, event, body, state, attempts, next_at, created_at, last_at, delivered_at, last_status, last_error"
    " FROM webhook_deliveries";
DeliveryRow ReadRow(sql::Stmt& s) {
  DeliveryRow r;
  r.id = s.Int(0);
  r.hook = s.Text(1);
  r.event = s.Text(2);
  r.body = s.Text(3);
  r.state = s.Text(4);
  r.attempts = static_cast<int>(s.Int(5));
  r.next_at = s.Int(6);
  r.created_at = s.Int(7);
  r.last_at = s.OptInt(8);
  r.delivered_at = s.OptInt(9);
  if (auto st = s.OptInt(10)) r.last_status = static_cast<int>(*st);
  r.last_error = s.Text(11);
  return r;
}
}  // namespace

Result<std::vector<int64_t>> FinishedUnannounced(Store& store, int limit) {
  return Guard([&]() -> Result<std::vector<int64_t>> {
    return store.Read([&](sql::Db& db) {
      // From the sweep's newest trial backwards: trials are leased roughly in id order, so while a
      // sweep runs its last trials are still queued and the answer is one index step. Walking
      // forwards (NOT EXISTS ... state != 'done') crossed every done trial first, and the notifier
      // asks this many times a second: on a 100,000-trial sweep that was most of the daemon's CPU.
      // (trials_of_sweep holds only the sweep id, to keep the lease path's index updates few.)
      // A sweep still expanding has trials to come, however many of those stored are done.
      static const std::string sql =
          "SELECT s.id FROM sweeps s WHERE s.notified_at IS NULL AND (s.materialized IS NULL OR s.cancelled_at IS NOT NULL)"
          " AND (SELECT t.id FROM trials t"
          " WHERE t.sweep_id = s.id AND t.state != 'done' ORDER BY t.id DESC LIMIT 1) IS NULL ORDER BY s.id LIMIT ?";
      auto& s = db.Cached(sql);
      s.Bind(1, limit);
      std::vector<int64_t> out;
      while (s.Step()) out.push_back(s.Int(0));
      return out;
    });
  });
}

Result<bool> AnnounceSweep(Store& store, int64_t sweep, const std::vector<NewDelivery>& deliveries) {
  return Guard([&]() -> Result<bool> {
    return store.Write([&](sql::Db& db) -> Result<bool> {
      const int64_t now = NowMs();
      auto& u = db.Cached("UPDATE sweeps SET notified_at = ? WHERE id = ? AND notified_at IS NULL");
      u.Bind(1, now).Bind(2, sweep).Run();
      if (db.Changes() == 0) return false;
      Insert(db, deliveries, now);
      return true;
    });
  });
}

Result<bool> AnnounceLabel(Store& store, int64_t label, bool withdrawn, const std::vector<NewDelivery>& deliveries) {
  return Guard([&]() -> Result<bool> {
    return store.Write([&](sql::Db& db) -> Result<bool> {
      const int stage = withdrawn ? 2 : 1;
      auto& u = db.Cached("UPDATE labels SET announced = ? WHERE id = ? AND announced < ?");
      u.Bind(1, stage).Bind(2, label).Bind(3, stage).Run();
      if (db.Changes() == 0) return false;
      Insert(db, deliveries, NowMs());
      return true;
    });
  });
}

Status QueueDeliveries(Store& store, const std::vector<NewDelivery>& deliveries) {
  if (deliveries.empty()) return Status::Ok();
  return Guard([&]() -> Status {
    store.Write([&](sql::Db& db) { Insert(db, deliveries, NowMs()); });
    return Status::Ok();
  });
}

Result<std::vector<DeliveryRow>> DueDeliveries(Store& store, int64_t now_ms, int limit) {
  return Guard([&]() -> Result<std::vector<DeliveryRow>> {
    return store.Read([&](sql::Db& db) {
      auto& s = db.Cached(std::string("SELECT ") + kCols +
                          " WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?");
      s.Bind(1, now_ms).Bind(2, limit);
      std::vector<DeliveryRow> out;
      while (s.Step()) out.push_back(ReadRow(s));
      return out;
    });
  });
}

Result<std::optional<int64_t>> NextDeliveryDue(Store& store) {
  return Guard([&]() -> Result<std::optional<int64_t>> {
    return store.Read([&](sql::Db& db) -> std::optional<int64_t> {
      auto& s = db.Cached("SELECT MIN(next_at) FROM webhook_deliveries WHERE state = 'pending'");
      s.Step();
      return s.OptInt(0);
    });
  });
}

Status RecordAttempt(Store& store, int64_t id, int64_t now_ms, int http_status, const std::string& error,
                     bool delivered, bool give_up, int64_t next_at) {
  return Guard([&]() -> Status {
    store.Write([&](sql::Db& db) {
      auto& u = db.Cached(
          "UPDATE webhook_deliveries SET attempts = attempts + 1, last_at = ?, last_status = ?, last_error = ?,"
          " state = ?, next_at = ?, delivered_at = ? WHERE id = ?");
      u.Bind(1, now_ms);
      if (http_status > 0) u.Bind(2, http_status);
      else u.BindNull(2);
      u.Bind(3, error).Bind(4, delivered ? "delivered" : give_up ? "failed" : "pending").Bind(5, next_at);
      if (delivered) u.Bind(6, now_ms);
      else u.BindNull(6);
      u.Bind(7, id).Run();
    });
    return Status::Ok();
  });
}

Result<std::vector<DeliveryRow>> ListDeliveries(Store& store, int64_t after, int limit, const std::string& state) {
  return Guard([&]() -> Result<std::vector<DeliveryRow>> {
    return store.Read([&](sql::Db& db) {
      auto& s = db.Cached(std::string("SELECT ") + kCols +
                          " WHERE id < ? AND (? = '' OR state = ?) ORDER BY id DESC LIMIT ?");
      s.Bind(1, after > 0 ? after : INT64_MAX).Bind(2, state).Bind(3, state).Bind(4, limit);
      std::vector<DeliveryRow> out;
      while (s.Step()) out.push_back(ReadRow(s));
      return out;
    });
  });
}

}  // namespace gauntlet::store
