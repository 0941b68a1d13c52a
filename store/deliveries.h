// The webhooks' durable delivery queue (migration 6's webhook_deliveries) and the marks that make
// each finished sweep announced exactly once. A delivery is queued in the same write that marks what
// it announces, so a restart neither loses nor repeats one; the sender (app/webhook_sender.h) takes
// due rows, and records each attempt. Every function takes the Store for the call only; thread-safe.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace gauntlet::store {

struct NewDelivery {
  std::string hook;   // the receiver's URL
  std::string event;  // sweep.finished, regression.found, node.quarantined, verdicts.relabelled
  std::string body;   // exactly what is signed and sent
};

struct DeliveryRow {
  int64_t id = 0;
  std::string hook, event, body, state;  // state: pending, delivered, failed
  int attempts = 0;
  int64_t next_at = 0, created_at = 0;
  std::optional<int64_t> last_at, delivered_at;
  std::optional<int> last_status;
  std::string last_error;
};

// Sweeps every trial of which is done and whose end is not announced yet, by id (at most `limit`).
Result<std::vector<int64_t>> FinishedUnannounced(Store& store, int limit = 100);
// Marks sweep `sweep` announced and queues `deliveries` (due now) in one write; false (nothing
// queued) when it was announced already.
Result<bool> AnnounceSweep(Store& store, int64_t sweep, const std::vector<NewDelivery>& deliveries);
// Marks label `label`'s labelling (`withdrawn` false) or its withdrawal announced and queues
// `deliveries` (due now) in one write; false (nothing queued) when that was announced already.
Result<bool> AnnounceLabel(Store& store, int64_t label, bool withdrawn, const std::vector<NewDelivery>& deliveries);
// Queues `deliveries`, due now.
Status QueueDeliveries(Store& store, const std::vector<NewDelivery>& deliveries);
// Pending deliveries due at `now_ms` or before, oldest first, at most `limit`.
Result<std::vector<DeliveryRow>> DueDeliveries(Store& store, int64_t now_ms, int limit);
// When the next pending delivery is due; nullopt when none is pending.
Result<std::optional<int64_t>> NextDeliveryDue(Store& store);
// Records an attempt of delivery `id`: delivered, failed for good (`give_up`), or pending again
// from `next_at`. `http_status` 0: no answer (`error` says why).
Status RecordAttempt(Store& store, int64_t id, int64_t now_ms, int http_status, const std::string& error,
                     bool delivered, bool give_up, int64_t next_at);
// Deliveries newest first, ids below `after` (0: from the newest), at most `limit`; `state` filters
// when not empty.
Result<std::vector<DeliveryRow>> ListDeliveries(Store& store, int64_t after, int limit, const std::string& state);

}  // namespace gauntlet::store
