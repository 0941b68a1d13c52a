#include "daemon/coordinator.h"

#include "core/smoke_reference.h"
#include "core/verdict.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <thread>

#include "store/sqlite.h"

namespace gauntlet::daemon {
using nlohmann::json;

namespace {
std::vector<int> ParseGpuList(const std::optional<std::string>& s) {
  std::vector<int> out;
  if (!s) return out;
  size_t i = 0;
  while (i < s->size()) {
    size_t j = s->find(',', i);
    if (j == std::string::npos) j = s->size();
    if (j > i) out.push_back(std::stoi(s->substr(i, j - i)));
    i = j + 1;
  }
  return out;
}
Config ConfigFromJson(const json& j) {
  Config c;
  for (auto& [k, v] : j.items()) c[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return c;
}
}  // namespace

class Coordinator::WallClock : public Clock {
 public:
  int64_t NowMs() override { return gauntlet::store::NowMs(); }
};

class Coordinator::StoreAdapter : public SchedulerStore {
 public:
  explicit StoreAdapter(Coordinator& c) : c_(c) {}
  Status Lease(int64_t trial, int64_t node, const std::string& lease, int64_t epoch, int64_t deadline,
               const std::string& gpus, const std::string& hardware) override {
    return c_.store_.LeaseTrial(trial, node, lease, epoch, deadline, gpus, hardware);
  }
  Status Requeue(int64_t trial, int attempt) override { return c_.store_.RequeueTrial(trial, attempt); }
  Status RecordAttempt(const store::ResultRow& r) override { return c_.store_.RecordAttempt(r); }
  Status Finish(const store::ResultRow& r, std::optional<int64_t> evidence) override {
    return c_.store_.FinishTrial(r, evidence);
  }
  Status FinishMany(const std::vector<int64_t>& t, Verdict v, const std::string& s,
                    std::optional<int64_t> e, const std::string& hw) override {
    return c_.store_.FinishMany(t, v, s, e, hw);
  }
  Status SetNodeState(int64_t node, NodeState state, const std::string& reason) override {
    return c_.store_.SetNodeState(node, state, reason);
  }
  // Skipped trials get a result row (attempt 0) besides their state, so GET /trials/{id} says which
  // trial settled them and by which gate key, not just the evidence id. The state is written first:
  // it is what the scheduler depends on; the row is the explanation.
  Status Skip(const std::vector<int64_t>& trials, const std::string& signature, int64_t evidence_trial,
              const std::string& hardware, const std::string& stage, const std::string& text) override {
    if (Status s = c_.store_.FinishMany(trials, Verdict::kSkipped, signature, evidence_trial, hardware); !s.ok()) return s;
    try {
      c_.store_.Write([&](store::sql::Db& db) {
        auto ins = db.Prepare(
            "INSERT OR REPLACE INTO results(trial_id, attempt, verdict, signature, evidence, failing_stage, hardware,"
            " finished_at) VALUES(?, 0, 'skipped', ?, ?, ?, ?, ?)");
        const int64_t now = store::NowMs();
        for (int64_t t : trials) {
          ins.Bind(1, t).Bind(2, signature).Bind(3, text).Bind(4, stage).Bind(5, hardware).Bind(6, now).Run();
        }
      });
    } catch (const std::exception& e) {
      spdlog::warn("pruning: could not record the evidence text of {} skipped trials: {}", trials.size(), e.what());
    }
    return Status::Ok();
  }
  // The scheduler calls its store only under the Coordinator's mutex (daemon/scheduler.h).
  std::optional<store::ResultRow> FindReusable(int64_t suite_id, const std::string& key, const std::string& hardware,
                                        int64_t node) override REQUIRES(c_.mu_) {
    auto sit = c_.suites_.find(suite_id);
    if (sit == c_.suites_.end()) return std::nullopt;
    // A suite that reports no software versions is judged by its version and the hardware alone.
    if (!sit->second->definition.contains("fingerprint"))
      return c_.store_.FindResult(suite_id, key, hardware, std::nullopt);
    auto fit = c_.fingerprints_.find({node, suite_id});
    if (fit == c_.fingerprints_.end()) return std::nullopt;  // unknown software: run it
    return c_.store_.FindResult(suite_id, key, hardware, fit->second);
  }

 private:
  Coordinator& c_;
};

SweepInfo MakeSweepInfo(int64_t sweep, const SweepRequest& req, const Suite& suite) {
  SweepInfo info{sweep, req.priority, req.prune, req.reuse, {}};
  for (auto& st : suite.stages) info.gate_on[st.name] = st.gate_on;
  info.confirm_failures = req.confirm_failures;
  info.settle_first = req.settle_first;
  return info;
}

Coordinator::Coordinator(store::Store& store, EventBus& events, CoordinatorOptions opts)
    : store_(store), events_(events), opts_(opts), wall_(opts.clock ? nullptr : new WallClock),
      clock_(opts.clock ? opts.clock : wall_.get()), adapter_(new StoreAdapter(*this)) {
  sched_ = std::make_unique<Scheduler>(*clock_, *adapter_, opts_.sched);
  store_.OnCommitFailure([this] { reload_ = true; });
  if (auto labels = store::ActiveLabels(store_); labels.ok()) labels_ = std::move(*labels);
  Restore();
  StartExpansions();
  ticker_ = std::thread([this] { Ticker(); });
  expander_ = std::thread([this] { Expander(); });
}

Coordinator::~Coordinator() { Stop(); }

void Coordinator::SetLabels(std::vector<store::Label> labels) {
  MutexLock lock(mu_);
  labels_ = std::move(labels);
}

void Coordinator::Stop() {
  {
    // The expander stops between two chunks; a restart resumes the sweep from what it stored.
    MutexLock lock(expand_queue_mu_);
    expand_stop_ = true;
  }
  expand_cv_.notify_all();
  if (expander_.joinable()) expander_.join();
  {
    MutexLock lock(tick_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  tick_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::map<int64_t, Waiter> waiters;
  {
    MutexLock lock(mu_);
    waiters.swap(waiters_);
  }
  for (auto& [n, w] : waiters) w.w.answer(std::optional<LeaseGrant>());
}

Result<const Suite*> Coordinator::SuiteById(int64_t id) {
  auto s = SuiteShared(id);
  if (!s.ok()) return s.status();
  return s->get();
}

Result<const Suite*> Coordinator::LatestSuite(const std::string& name) {
  auto row = store_.GetSuite(name);
  if (!row.ok()) return row.status();
  MutexLock lock(mu_);
  return SuiteById(row->id);
}

Result<std::shared_ptr<const Suite>> Coordinator::SuiteShared(int64_t id) {
  auto it = suites_.find(id);
  if (it != suites_.end()) return it->second;
  auto row = store_.GetSuiteById(id);
  if (!row.ok()) return row.status();
  auto parsed = ParseSuite(row->definition);
  if (!parsed.ok()) return Status::Internal("stored suite " + row->name + " no longer parses: " + parsed.status().message());
  auto s = std::make_shared<Suite>(std::move(*parsed));
  s->id = id;
  s->version = row->version;
  s->source_dir = row->source_dir;
  s->bundle = row->bundle;
  suites_[id] = s;
  return std::shared_ptr<const Suite>(std::move(s));
}

Coordinator::QueueTemplate Coordinator::TemplateOf(const Suite& suite, const SweepRequest& req) {
  QueueTemplate tpl;
  for (auto& t : req.targets) tpl.needs.push_back(MakeNeed(suite.requires_, t.req, t.gpu_name));
  tpl.cost = suite.definition.value("cost_s", 60.0);
  tpl.ref = SuiteSmokeReference(suite.definition);
  return tpl;
}

QueuedTrial Coordinator::MakeOne(const Suite& suite, const SweepRequest& req, const QueueTemplate& tpl, int64_t id,
                                 const Config& c, const std::string& key, int target, int repeat) {
  QueuedTrial q;
  q.id = id;
  q.suite_id = suite.id;
  q.target = target;
  q.need = tpl.needs[static_cast<size_t>(target)];
  q.config = c;
  q.config_key = key;
  q.max_attempts = req.max_attempts;
  q.cost_s = tpl.cost;
  q.price = req.targets[static_cast<size_t>(target)].Price();
  q.reference = tpl.ref && IsReferenceConfig(*tpl.ref, c);
  q.repeat = repeat;
  return q;
}

std::vector<QueuedTrial> Coordinator::MakeQueued(const Suite& suite, const SweepRequest& req, int64_t first_id,
                                                 const std::vector<Config>& configs) {
  std::vector<QueuedTrial> out;
  out.reserve(configs.size() * req.targets.size() * req.repeats);
  const QueueTemplate tpl = TemplateOf(suite, req);
  int64_t id = first_id;
  for (auto& c : configs) {
    const std::string key = ConfigKey(c);
    for (size_t t = 0; t < req.targets.size(); ++t)
      for (int r = 0; r < req.repeats; ++r) out.push_back(MakeOne(suite, req, tpl, id++, c, key, static_cast<int>(t), r));
  }
  return out;
}

QueuedTrial Coordinator::QueuedFromRow(const Suite& suite, const SweepRequest& req, const store::TrialRow& t) {
  SweepRequest one = req;
  one.repeats = 1;
  one.targets = {req.targets.at(std::min<size_t>(t.target_index, req.targets.size() - 1))};
  QueuedTrial q = std::move(MakeQueued(suite, one, t.id, {ConfigFromJson(t.config)})[0]);
  q.target = t.target_index;
  q.sweep = t.sweep_id;
  q.repeat = t.repeat_index;
  return q;
}

void Coordinator::Restore() {
  MutexLock lock(mu_);
  RestoreLocked();
}

void Coordinator::ReloadIfNeededLocked() {
  if (!reload_.exchange(false)) return;
  spdlog::error("a group commit failed: reloading the scheduler from the store, as a restart would");
  if (Status s = store_.Flush(); !s.ok()) {
    reload_ = true;  // still failing: try again on the next call
    return;
  }
  sched_ = std::make_unique<Scheduler>(*clock_, *adapter_, opts_.sched);
  requests_.clear();
  searches_.clear();
  probes_.clear();
  RestoreLocked();
  ServeWaitersLocked();
}

void Coordinator::PublishAfterCommit(DaemonEvent e) {
  store_.AfterCommit(store_.Staged(), [this, e = std::move(e)](const Status& s) {
    if (s.ok()) events_.Publish(e);
  });
}

std::optional<Status> Coordinator::WhenCommitted(std::function<void(Status)> done) {
  const store::Store::Ticket t = store_.Staged();
  if (auto s = store_.Outcome(t)) return *s;
  // Every staged write's commit settles, as committed or as failed, so `done` is always called.
  store_.AfterCommit(t, [done = std::move(done)](const Status& s) { done(s); });
  return std::nullopt;
}

void Coordinator::RestoreLocked() {
  ++restores_;
  auto nodes = store_.ListNodes();
  if (nodes.ok()) {
    MutexLock creds(cred_mu_);
    credentials_.clear();
    for (auto& n : *nodes)
      if (!n.credential.empty()) credentials_[n.credential] = n.id;
  }
  if (nodes.ok())
    for (auto& n : *nodes) {
      auto inv = ParseInventory(n.inventory);
      if (!inv.ok()) continue;
      TrackedNode st;
      st.id = n.id;
      st.name = n.name;
      st.inv = *inv;
      st.state = n.state;
      st.reason = n.reason;
      sched_->UpsertNode(std::move(st));
    }
  auto active = store_.ActiveTrials();
  if (!active.ok()) {
    spdlog::error("restore: {}", active.status().message());
    return;
  }
  std::map<int64_t, std::vector<QueuedTrial>> queued;
  std::map<int64_t, SweepInfo> infos;
  size_t leases = 0;
  for (auto& t : *active) {
    if (!requests_.count(t.sweep_id)) {
      auto sw = store_.GetSweep(t.sweep_id);
      auto req = sw.ok() ? ParseSweepRequest(sw->request) : Result<SweepRequest>(sw.status());
      if (!req.ok()) {
        // Should not happen (requests were validated before they were stored); say so loudly.
        spdlog::error("restore: sweep {} cannot be rebuilt: {}", t.sweep_id, req.status().message());
        continue;
      }
      requests_[t.sweep_id] = std::make_shared<SweepRequest>(*req);
      if (sw.ok() && sw->kind == SweepKind::kBisect && sw->search.is_object() && sw->search.value("state", "") == Name(BisectState::kRunning))
        if (auto b = BisectionFromJson(sw->search); b.ok() && b->pending_trial) {
          probes_[b->pending_trial] = t.sweep_id;
          sched_->Watch(b->pending_trial);
          searches_[t.sweep_id] = std::move(*b);
        }
      SweepInfo info;
      if (auto su = SuiteById(t.suite_id); su.ok()) info = MakeSweepInfo(t.sweep_id, *req, **su);
      else info = MakeSweepInfo(t.sweep_id, *req, Suite{});
      infos[t.sweep_id] = info;
    }
    auto su = SuiteById(t.suite_id);
    if (!su.ok()) continue;
    const SweepRequest& req = *requests_[t.sweep_id];
    QueuedTrial q = QueuedFromRow(**su, req, t);
    q.attempt = t.attempt;
    q.max_attempts = t.max_attempts;
    // A trial being confirmed goes on from the attempts it made (each kept with its result).
    if (req.confirm_failures > 0 && t.attempt > 0) {
      q.tried = store_.AttemptsBefore(t.id, t.state == TrialState::kQueued ? t.attempt : t.attempt - 1);
      q.max_attempts += static_cast<int>(q.tried.size());
    }
    if (t.state == TrialState::kQueued) {
      queued[t.sweep_id].push_back(std::move(q));
    } else if (t.lease_id && t.node_id) {
      ActiveLease l;
      l.trial = t.id;
      l.node = *t.node_id;
      l.sweep = t.sweep_id;
      l.epoch = t.epoch;
      l.lease = *t.lease_id;
      l.gpus = ParseGpuList(t.gpus);
      l.hardware = t.hardware.value_or("");
      l.cancel = t.cancel_requested;
      l.spec = std::move(q);
      sched_->RestoreLease(l);
      ++leases;
    }
  }
  for (auto& [sweep, info] : infos) {
    for (auto& q : queued[sweep]) q.sweep = sweep;
    sched_->AddSweep(info, std::move(queued[sweep]));
  }
  spdlog::info("restored {} queued trials, {} leases, {} nodes", sched_->queued(), leases,
               nodes.ok() ? nodes->size() : 0);
}

Status Coordinator::CancelSweep(int64_t sweep) {
  std::vector<int64_t> cancelled, stopping;
  MutexLock expanding(expand_mu_);  // a chunk the expander committed is queued before this cancel looks
  if (Status s = store_.CancelSweep(sweep, &cancelled, &stopping); !s.ok()) return s;
  {
    MutexLock lock(mu_);
    expanding_.erase(sweep);
    if (auto it = searches_.find(sweep); it != searches_.end()) {
      it->second.state = BisectState::kCancelled;
      it->second.detail = "cancelled by a user";
    }
    sched_->Cancel(cancelled, stopping);
    AdvanceSearchesLocked();  // stores the cancelled search (its probe, if queued, is settled now)
    if (auto it = searches_.find(sweep); it != searches_.end() && stopping.empty()) {
      // As in AdvanceSearchesLocked: the cancel itself stands; only the stored search lags.
      if (Status s = store_.SetSweepSearch(sweep, SweepKind::kBisect, BisectionJson(it->second)); !s.ok())
        spdlog::error("bisection {}: could not store its cancelled state: {}", sweep, s.message());
      searches_.erase(it);
    }
  }
  events_.Publish(SweepCancelled{sweep, static_cast<int64_t>(cancelled.size()), static_cast<int64_t>(stopping.size())});
  return Status::Ok();
}

Status Coordinator::CancelTrial(int64_t trial) {
  bool done = false;
  MutexLock expanding(expand_mu_);  // as CancelSweep: its chunk is queued before the cancel reaches the scheduler
  if (Status s = store_.CancelTrial(trial, &done); !s.ok()) return s;
  auto t = store_.GetTrial(trial);
  {
    MutexLock lock(mu_);
    if (done) sched_->Cancel({trial}, {});
    else sched_->Cancel({}, {trial});
  }
  TrialChanged ev;
  ev.trial = trial;
  ev.sweep = t.ok() ? t->sweep_id : 0;
  if (done) ev.state = TrialState::kDone, ev.verdict = Verdict::kCancelled;  // else stopping, no verdict yet
  ev.says_verdict = true;
  events_.Publish(ev);
  return Status::Ok();
}

Result<int64_t> Coordinator::RetrySweep(int64_t sweep) {
  auto sw = store_.GetSweep(sweep);
  if (!sw.ok()) return sw.status();
  auto rows = store_.RequeueDone(sweep, {Verdict::kInfraError, Verdict::kTimeout});
  if (!rows.ok()) return rows.status();
  MutexLock lock(mu_);
  auto su = SuiteById(sw->suite_id);
  if (!su.ok()) return su.status();
  auto rit = requests_.find(sweep);
  if (rit == requests_.end()) {
    auto req = ParseSweepRequest(sw->request);
    if (!req.ok()) return req.status();
    rit = requests_.emplace(sweep, std::make_shared<SweepRequest>(*req)).first;
  }
  std::vector<QueuedTrial> queued;
  for (auto& t : *rows) {
    QueuedTrial q = QueuedFromRow(**su, *rit->second, t);
    q.reuse = false;  // a retry is a fresh run; the sweep's other queued trials keep their reuse
    queued.push_back(std::move(q));
  }
  SweepInfo info = MakeSweepInfo(sweep, *rit->second, **su);
  const int64_t n = static_cast<int64_t>(queued.size());
  sched_->AddSweep(info, std::move(queued));
  ServeWaitersLocked();
  events_.Publish(SweepRetried{sweep, n});
  return n;
}

Status Coordinator::Drain(int64_t node) { return SetNodeState(node, NodeState::kDraining, "drained by an admin"); }

Status Coordinator::SetNodeState(int64_t node, NodeState state, const std::string& reason) {
  MutexLock lock(mu_);
  Status s = sched_->SetNodeState(node, state, reason);
  if (s.ok()) {
    events_.Publish(NodeChanged{node, state, reason});
    if (state == NodeState::kOnline) ServeWaitersLocked();
  }
  return s;
}

void Coordinator::Ticker() {
  int64_t last_keepalive = store::NowMs();
  int64_t last_touch = store::NowMs();
  UniqueLock lk(tick_mu_);
  while (!stopping_) {
    tick_cv_.wait_for(lk.native(), std::chrono::milliseconds(opts_.tick_ms),
                      [&]() REQUIRES(tick_mu_) { return stopping_ || !returns_.empty(); });
    if (stopping_) break;
    std::vector<std::string> returns = std::exchange(returns_, {});
    lk.unlock();
    {
      MutexLock lock(mu_);
      if (!returns.empty()) ReturnGrantsLocked(std::move(returns));
      // A worker waiting on its open long-poll is heard from now: without this, an idle node's
      // heartbeat age grew to the poll's length (20 s) before each new poll (issue 33).
      for (auto& [node, w] : waiters_)
        if (w.w.open()) sched_->Touch(node);
      auto changed = sched_->Tick();
      PublishSettled(changed, "expired");
      AdvanceSearchesLocked();
      if (!changed.empty()) ServeWaitersLocked();
      if (store::NowMs() - last_touch > 5000) {
        std::vector<std::pair<int64_t, int64_t>> seen;
        for (auto& [id, n] : sched_->nodes()) seen.emplace_back(id, n.last_seen);
        // Heartbeat times are rewritten every few seconds: a failed write loses one round's, no more.
        if (Status s = store_.TouchNodes(seen); !s.ok()) spdlog::warn("nodes: could not store heartbeats: {}", s.message());
        last_touch = store::NowMs();
      }
    }
    RunAutoBisections();
    if (store::NowMs() - last_keepalive > 15000) {
      events_.KeepAlive();
      last_keepalive = store::NowMs();
    }
    lk.lock();
  }
}

}  // namespace gauntlet::daemon
