// Coordinator::Submit and the expansion of big sweeps after their answer (docs/DESIGN.md "Storage",
// docs/RELIABILITY.md). A sweep's stored request, with the suite version it names, determines its
// trials: so a big sweep is acknowledged once its row is durable, and the expander thread stores
// its trials afterwards, a chunk per write, queueing each chunk in the scheduler once it commits
// (leases flow from the first chunk; other writes go between chunks). A restart resumes a sweep
// whose expansion did not finish from the count it had stored; SIGTERM stops between two chunks.
#include "daemon/coordinator.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <iterator>
#include <utility>

namespace gauntlet::daemon {
using nlohmann::json;

// One sweep's expansion: the trials it has yet to store, in queue order, as light items (a trial
// is made only when its chunk is: a million QueuedTrials at once took 3.3 s and their memory);
// `next` the first item not stored yet, `stored` the sweep's count in the store.
struct Coordinator::Expansion {
  struct Item {
    int32_t config = 0, target = 0, repeat = 0;
    bool probe = false;
  };
  int64_t sweep = 0, first_trial = 0;
  std::shared_ptr<const Suite> suite;
  std::shared_ptr<SweepRequest> req;
  SweepInfo info;
  QueueTemplate tpl;
  std::vector<Config> configs;
  std::vector<std::string> keys;  // ConfigKey of each config
  std::vector<Item> order;
  size_t next = 0;
  int64_t stored = 0;
  // The id reserved for `it`: grid order, as MakeQueued numbers a sweep stored whole.
  int64_t IdOf(const Item& it) const {
    return first_trial + (static_cast<int64_t>(it.config) * static_cast<int64_t>(req->targets.size()) + it.target) *
                             req->repeats + it.repeat;
  }
};

Result<SubmitResult> Coordinator::Submit(const SweepSubmission& submission, const store::SweepOrigin& origin) {
  const SweepRequest* req = &submission.request;
  const json& body = submission.record;
  auto found = LatestSuite(req->suite);
  if (!found.ok()) return found.status();
  const Suite* suite = *found;
  // Counted without building a config (when nothing is included): a million trials are a
  // million configs' maps and JSON texts, which the answer need not wait for.
  auto count = SweepTrialCount(*suite, *req);
  if (!count.ok()) return count.status();
  if (*count > kExpandAfter) return SubmitExpanding(*suite, submission, *count, origin);
  auto configs = ExpandSweep(*suite, *req);
  if (!configs.ok()) return configs.status();
  std::vector<store::NewTrial> trials;
  trials.reserve(configs->size() * req->targets.size() * req->repeats);
  for (auto& c : *configs) {
    store::NewTrial nt;
    nt.config_json = ConfigJson(c).dump();
    nt.config_key = ConfigKey(c);
    for (size_t t = 0; t < req->targets.size(); ++t)
      for (int r = 0; r < req->repeats; ++r) {
        nt.target_index = static_cast<int>(t);
        nt.repeat_index = r;
        trials.push_back(nt);
      }
  }
  int64_t first = 0;
  auto sweep =
      store_.CreateSweep(suite->id, req->name, body, req->priority, req->max_attempts, trials, &first, origin);
  if (!sweep.ok()) return sweep.status();
  auto queued = MakeQueued(*suite, *req, first, *configs);
  for (auto& q : queued) q.sweep = *sweep;
  // Published before the scheduler holds any of its trials, so no follower ever hears of a trial of
  // this sweep (a lease granted below, committed on another thread) before it hears of the sweep.
  events_.Publish(SweepCreated{*sweep, static_cast<int64_t>(trials.size()), suite->name});
  const SweepInfo info = MakeSweepInfo(*sweep, *req, *suite);
  Scheduler::OrderForQueue(info, queued);
  MutexLock lock(mu_);
  requests_[*sweep] = std::make_shared<SweepRequest>(*req);
  sched_->AddOrdered(info, std::move(queued));
  ServeWaitersLocked();
  return SubmitResult{*sweep, static_cast<int64_t>(trials.size())};
}

Result<SubmitResult> Coordinator::SubmitExpanding(const Suite& suite, const SweepSubmission& submission,
                                                  int64_t trials, const store::SweepOrigin& origin) {
  const SweepRequest& req = submission.request;
  int64_t first = 0;
  auto sweep = store_.BeginSweep(suite.id, req.name, submission.record, req.priority, trials, &first, origin);
  if (!sweep.ok()) return sweep.status();
  events_.Publish(SweepCreated{*sweep, trials, suite.name});
  {
    MutexLock lock(mu_);
    requests_[*sweep] = std::make_shared<SweepRequest>(req);
    expanding_.insert(*sweep);
  }
  QueueExpansion(*sweep);
  return SubmitResult{*sweep, trials, true};
}

void Coordinator::StartExpansions() {
  auto pending = store_.ExpandingSweeps();
  if (!pending.ok()) {
    // Nothing is lost: the sweeps stay expanding in the store, and the next start tries again.
    spdlog::error("restore: cannot list the sweeps still expanding: {}", pending.status().message());
    return;
  }
  for (const store::ExpandingSweep& e : *pending) {
    spdlog::info("sweep {}: resuming its expansion after {} stored trials", e.sweep, e.materialized);
    {
      MutexLock lock(mu_);
      expanding_.insert(e.sweep);
    }
    QueueExpansion(e.sweep);
  }
}

void Coordinator::QueueExpansion(int64_t sweep) {
  {
    MutexLock lock(expand_queue_mu_);
    expand_queue_.push_back(sweep);
  }
  expand_cv_.notify_all();
}

Result<std::unique_ptr<Coordinator::Expansion>> Coordinator::PlanExpansion(int64_t sweep) {
  auto row = store_.GetSweep(sweep);
  if (!row.ok()) return row.status();
  if (!row->Expanding()) return std::unique_ptr<Expansion>();  // cancelled (or whole) meanwhile
  auto req = ParseSweepRequest(row->request);
  if (!req.ok()) return Status::Internal("its stored request no longer parses: " + req.status().message());
  auto e = std::make_unique<Expansion>();
  {
    MutexLock lock(mu_);
    auto s = SuiteShared(row->suite_id);
    if (!s.ok()) return s.status();
    e->suite = *s;
  }
  auto configs = ExpandSweep(*e->suite, *req);
  if (!configs.ok()) return Status::Internal("its stored request no longer expands: " + configs.status().message());
  e->sweep = sweep;
  e->first_trial = row->first_trial;
  e->req = std::make_shared<SweepRequest>(std::move(*req));
  e->info = MakeSweepInfo(sweep, *e->req, *e->suite);
  e->tpl = TemplateOf(*e->suite, *e->req);
  e->configs = std::move(*configs);
  e->keys.reserve(e->configs.size());
  for (auto& c : e->configs) e->keys.push_back(ConfigKey(c));
  const int32_t targets = static_cast<int32_t>(e->req->targets.size());
  e->order.reserve(e->configs.size() * static_cast<size_t>(targets * e->req->repeats));
  for (int32_t c = 0; c < static_cast<int32_t>(e->configs.size()); ++c)
    for (int32_t t = 0; t < targets; ++t)
      for (int32_t r = 0; r < e->req->repeats; ++r) e->order.push_back({c, t, r, false});
  // The count the answer gave is the one stored: a plan of another size would store other trials.
  if (static_cast<int64_t>(e->order.size()) != row->trial_count || row->first_trial <= 0)
    return Status::Internal("it expands to " + std::to_string(e->order.size()) + " trials, not the " +
                            std::to_string(row->trial_count) + " it was answered with");
  // The whole sweep's queue order (Scheduler::OrderForQueue: every trial of a sweep has the suite's
  // one estimate, so it is settle first over all of it), then stored and queued in that order, so
  // chunking changes nothing of what runs first.
  if (e->info.settle_first) {
    auto settle = Scheduler::SettleOrder(e->info, e->order.size(), [&](size_t i) {
      return std::pair{static_cast<int>(e->order[i].target), &e->configs[static_cast<size_t>(e->order[i].config)]};
    });
    if (!settle.empty()) {
      std::vector<Expansion::Item> ordered;
      ordered.reserve(settle.size());
      for (auto [i, probe] : settle) {
        ordered.push_back(e->order[i]);
        ordered.back().probe = probe;
      }
      e->order = std::move(ordered);
    }
  }
  e->stored = *row->materialized;
  if (e->stored == 0) return e;
  // Resumed (a restart): what is missing is stored, by id, whatever order the earlier run took.
  auto have = store_.SweepTrialIds(sweep);
  if (!have.ok()) return have.status();
  std::vector<bool> present(e->order.size(), false);
  for (int64_t id : *have) {
    const int64_t at = id - row->first_trial;
    if (at < 0 || at >= static_cast<int64_t>(present.size()))
      return Status::Internal("its stored trial " + std::to_string(id) + " is outside its ids");
    present[static_cast<size_t>(at)] = true;
  }
  if (static_cast<int64_t>(have->size()) != e->stored)
    return Status::Internal("it has " + std::to_string(have->size()) + " trials stored, not the " +
                            std::to_string(e->stored) + " it counted");
  std::erase_if(e->order, [&](const Expansion::Item& it) { return present[static_cast<size_t>(e->IdOf(it) - row->first_trial)]; });
  return e;
}

Coordinator::ChunkOutcome Coordinator::ExpandChunk(Expansion& e) {
  const size_t end = std::min(e.order.size(), e.next + kExpandChunk);
  std::vector<QueuedTrial> chunk;
  std::vector<store::NewTrial> rows;
  chunk.reserve(end - e.next);
  rows.reserve(end - e.next);
  for (size_t i = e.next; i < end; ++i) {
    const Expansion::Item& it = e.order[i];
    const Config& c = e.configs[static_cast<size_t>(it.config)];
    const std::string& key = e.keys[static_cast<size_t>(it.config)];
    QueuedTrial q = MakeOne(*e.suite, *e.req, e.tpl, e.IdOf(it), c, key, it.target, it.repeat);
    q.sweep = e.sweep;
    q.probe = it.probe;
    rows.push_back({ConfigJson(c).dump(), key, it.target, it.repeat, q.id});
    chunk.push_back(std::move(q));
  }
  MutexLock expanding(expand_mu_);
  uint64_t restores;
  {
    MutexLock lock(mu_);
    restores = restores_;
  }
  auto stored = store_.AddSweepTrials(e.sweep, e.stored, e.req->max_attempts, rows);
  if (!stored.ok()) {
    spdlog::error("sweep {}: could not store trials {}..{} of its expansion: {}", e.sweep, e.next, end,
                  stored.status().message());
    // A full disk or a busy store passes; a sweep that is gone, or stored otherwise, does not.
    const Code c = stored.status().code();
    if (c != Code::kNotFound && c != Code::kConflict) return ChunkOutcome::kRetry;
    MutexLock lock(mu_);
    expanding_.erase(e.sweep);
    return ChunkOutcome::kDone;
  }
  const bool whole = end == e.order.size();
  MutexLock lock(mu_);
  if (!*stored || whole) expanding_.erase(e.sweep);
  if (!*stored) return ChunkOutcome::kDone;  // cancelled: its stored trials were cancelled with it
  if (restores_ != restores) {
    // A reload rebuilt the scheduler from the store meanwhile, perhaps before this chunk committed:
    // rebuilt again, now with it, rather than queueing trials twice.
    reload_ = true;
    ReloadIfNeededLocked();
  } else {
    requests_.try_emplace(e.sweep, e.req);
    sched_->AddOrdered(e.info, std::move(chunk));
    ServeWaitersLocked();
  }
  e.next = end;
  e.stored += static_cast<int64_t>(rows.size());
  if (!whole) return ChunkOutcome::kMore;
  spdlog::info("sweep {}: expanded, {} trials stored", e.sweep, e.stored);
  AutoBisectLocked(e.sweep);  // every trial may be done already
  return ChunkOutcome::kDone;
}

void Coordinator::Expander() {
  // Below the threads that answer workers and clients: on a busy host the expansion is what waits.
  // (Linux: a thread's nice value is its own.)
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10) != 0)
    spdlog::debug("expander: could not lower its priority");
  std::deque<std::unique_ptr<Expansion>> active;  // round robin: no big sweep waits for another
  bool backoff = false;
  for (;;) {
    int64_t fresh = 0;
    {
      UniqueLock lk(expand_queue_mu_);
      // After a store error, a second before the next try (only a stop ends it sooner).
      if (backoff)
        expand_cv_.wait_for(lk.native(), std::chrono::seconds(1), [&]() REQUIRES(expand_queue_mu_) { return expand_stop_; });
      expand_cv_.wait(lk.native(), [&]() REQUIRES(expand_queue_mu_) {
        return expand_stop_ || !expand_queue_.empty() || !active.empty();
      });
      if (expand_stop_) return;
      if (!expand_queue_.empty()) {
        fresh = expand_queue_.front();
        expand_queue_.pop_front();
      }
    }
    backoff = false;
    if (fresh) {
      auto plan = PlanExpansion(fresh);
      if (plan.ok() && *plan) {
        active.push_back(std::move(*plan));
        continue;
      }
      if (!plan.ok()) spdlog::error("sweep {}: cannot expand: {}", fresh, plan.status().message());
      if (!plan.ok() && plan.status().code() == Code::kUnavailable) {  // a full disk passes: try again
        QueueExpansion(fresh);
        backoff = true;
        continue;
      }
      // Cancelled or whole meanwhile, or a request that no longer expands (it stays expanding in
      // the store, said in the log at each start, never expanded into other trials).
      MutexLock lock(mu_);
      expanding_.erase(fresh);
      continue;
    }
    std::unique_ptr<Expansion> e = std::move(active.front());
    active.pop_front();
    switch (ExpandChunk(*e)) {
      case ChunkOutcome::kMore: active.push_back(std::move(e)); break;
      case ChunkOutcome::kRetry: active.push_back(std::move(e)); backoff = true; break;
      case ChunkOutcome::kDone: break;
    }
  }
}

}  // namespace gauntlet::daemon
