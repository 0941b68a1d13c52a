// The Coordinator's worker protocol (see coordinator.h and docs/DESIGN.md): registration, long-poll
// leases, heartbeats, log chunks and reports. Sweeps, restore, nodes and the ticker are in
// coordinator.cc.
#include <spdlog/spdlog.h>

#include <set>

#include "core/smoke_reference.h"
#include "core/verdict.h"
#include "daemon/coordinator.h"
#include "store/sqlite.h"

namespace gauntlet::daemon {
using nlohmann::json;

Result<RegistrationAnswer> Coordinator::Register(const Registration& reg, const NodeCredential& cred) {
  const std::string& name = reg.name;
  const Inventory* inv = &reg.inventory;
  const std::string hardware = NodeHardware(*inv);
  // The check of the name and the write that follows must not interleave with another
  // registration of the same name, or two callers could both pass the check.
  MutexLock registering(register_mu_);
  auto existing = store_.FindNode(name);
  if (!existing.ok()) return existing.status();
  bool kept = false;
  if (*existing) {
    const store::NodeRow& n = **existing;
    kept = !cred.presented.empty() && n.credential == cred.presented;
    bool live = false;
    {
      MutexLock lock(mu_);
      const TrackedNode* st = sched_->Node(n.id);
      live = st && st->state != NodeState::kOffline && clock_->NowMs() - st->last_seen <= opts_.sched.offline_after_ms;
    }
    // Another worker (or a stolen worker token) must not take over a node that is alive: its
    // inventory and its leases stay its own. A node that went offline may be claimed afresh.
    if (!kept && !n.credential.empty() && live)
      return Status(Code::kConflict,
                    "node '" + name + "' is registered by a live worker (node " + std::to_string(n.id) +
                        "); its registration is not overwritten without its credential. Pick another --name, or "
                        "stop that worker and wait until the node is offline",
                    "name");
  }
  const std::string give = kept ? std::string() : cred.fresh;
  auto row = store_.RegisterNode(name, InventoryJson(*inv), inv->labels, reg.fingerprint, hardware, give);
  if (!row.ok()) return row.status();
  if (!give.empty()) {
    MutexLock lock(cred_mu_);
    for (auto it = credentials_.begin(); it != credentials_.end();)
      it = it->second == row->id ? credentials_.erase(it) : std::next(it);
    credentials_[give] = row->id;
  }
  {
    MutexLock lock(mu_);
    TrackedNode st;
    st.id = row->id;
    st.name = name;
    st.inv = *inv;
    st.state = row->state;
    st.reason = row->reason;
    sched_->UpsertNode(std::move(st));
    ServeWaitersLocked();
  }
  events_.Publish(NodeRegistered{row->id, name, hardware});
  using Credential = RegistrationAnswer::Credential;
  return RegistrationAnswer{row->id, opts_.heartbeat_ms, opts_.sched.lease_ttl_ms, row->state, hardware,
                            kept ? Credential::kKept : give.empty() ? Credential::kNone : Credential::kFresh};
}

std::optional<int64_t> Coordinator::NodeForCredential(const std::string& sha256_hex) {
  MutexLock lock(cred_mu_);
  auto it = credentials_.find(sha256_hex);
  if (it == credentials_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> Coordinator::LeaseNode(const std::string& lease) {
  MutexLock lock(mu_);
  auto it = sched_->leases().find(lease);
  if (it == sched_->leases().end()) return std::nullopt;
  return it->second.node;
}

LeaseGrant Coordinator::MakeGrant(const Grant& g, const std::set<std::string>& have_suites) {
  LeaseGrant out;
  out.grant = g;
  out.heartbeat_ms = opts_.heartbeat_ms;
  // Everything comes from the lease in memory: a grant costs no read of the store.
  auto it = sched_->leases().find(g.lease);
  if (it == sched_->leases().end()) return out;
  const QueuedTrial& t = it->second.spec;
  out.sweep = it->second.sweep;
  out.config = t.config;
  if (auto su = SuiteShared(t.suite_id); su.ok()) {
    out.suite = std::move(*su);
    // A worker that already holds this suite version says so; it is not sent again.
    out.send_definition = !have_suites.count(SuiteKey(*out.suite));
    out.reference = ReferenceLocked(*out.suite, t, g.hardware);
  }
  return out;
}

namespace {
// trial.changed for a lease granted to `node`.
TrialChanged LeasedEvent(int64_t trial, int64_t sweep, int64_t node) {
  TrialChanged ev;
  ev.trial = trial;
  ev.sweep = sweep;
  ev.state = TrialState::kLeased;
  ev.node = node;
  return ev;
}


// The grant's reference made of a judged result of the reference config.
std::shared_ptr<const GrantReference> ReferenceFromResult(const store::ResultRow& r, Verdict verdict, int64_t trial,
                                                          const Config& config, const std::string& stage) {
  auto ref = std::make_shared<GrantReference>();
  ref->found = true;
  ref->trial = trial;
  ref->verdict = verdict;
  ref->config = config;
  ref->hardware = r.hardware;
  if (verdict != Verdict::kPassed || !r.stages.is_array()) return ref;
  for (auto& st : r.stages)
    if (st.is_object() && st.value("name", "") == stage && st.contains("smoke_answers"))
      ref->smoke_answers = st["smoke_answers"];
  return ref;
}

}  // namespace

std::shared_ptr<const GrantReference> Coordinator::ReferenceLocked(const Suite& su, const QueuedTrial& t,
                                                                   const std::string& hardware) {
  if (t.reference) return nullptr;
  auto ref = SuiteSmokeReference(su.definition);
  if (!ref) return nullptr;
  const Config rc = ReferenceConfigFor(*ref, t.config);
  const std::string key = ConfigKey(rc);
  auto it = references_.find({su.id, key, hardware});
  if (it != references_.end()) return it->second;
  // Not reported since the daemon started: an earlier one is in the store, committed long since.
  std::optional<store::ResultRow> row = store_.FindResult(su.id, key, hardware, std::nullopt);
  if (!row) {
    auto missing = std::make_shared<GrantReference>();
    missing->config = rc;
    missing->hardware = hardware;
    return missing;
  }
  // A found result is judged (FindResult's contract), so its verdict is one of the vocabulary.
  auto j = ReferenceFromResult(*row, row->verdict, row->trial_id, rc,
                               ref->stage);
  references_[{su.id, key, hardware}] = j;
  return j;
}

void Coordinator::RememberReferenceLocked(const QueuedTrial& t, int64_t trial, const std::string& hardware,
                                          const store::ResultRow& r) {
  if (!t.reference || !Info(r.verdict).judged) return;  // an infra error or a cancel says nothing of the answers
  auto su = SuiteById(t.suite_id);
  if (!su.ok()) return;
  auto ref = SuiteSmokeReference((*su)->definition);
  if (!ref) return;
  store::ResultRow copy = r;
  copy.hardware = hardware;
  references_[{t.suite_id, t.config_key, hardware}] = ReferenceFromResult(copy, r.verdict, trial, t.config, ref->stage);
}

void Coordinator::PublishSettled(const std::vector<int64_t>& trials, const std::string& why) {
  // These changes happen inside the scheduler, which no longer holds the trials: the store says
  // where each one stands now, with its sweep, so streams filtered by sweep see them too.
  for (int64_t id : trials) {
    auto t = store_.GetTrial(id);
    if (!t.ok()) continue;
    TrialChanged ev;
    ev.trial = id;
    ev.sweep = t->sweep_id;
    ev.state = t->state;
    ev.says_verdict = true;
    ev.verdict = t->verdict;
    ev.signature = t->signature.value_or("");
    ev.reason = why;
    events_.Publish(ev);
  }
}

void Coordinator::ServeWaitersLocked() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (!it->second.w.open()) {
      it = waiters_.erase(it);
      continue;
    }
    std::vector<int64_t> reused;
    auto g = sched_->TryLease(it->first, it->second.free, &reused);
    if (!reused.empty())
      store_.AfterCommit(store_.Staged(), [this, reused](const Status& s) { if (s.ok()) PublishSettled(reused, "reused"); });
    if (g.ok() && *g) {
      LeaseGrant body = MakeGrant(**g, it->second.have_suites);
      PublishAfterCommit(LeasedEvent((*g)->trial, body.sweep.value_or(0), it->first));
      // The grant is an acknowledgement too: it goes out once the lease is committed. Should the
      // long-poll time out within that moment, the grant is lost as one lost in transit would be:
      // its lease expires and the trial is queued again.
      AnswerAfterCommit(std::move(it->second.w), std::move(body));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  // A probe settled on the way (reused) queues the next one, which a waiter may take now.
  if (AdvanceSearchesLocked()) ServeWaitersLocked();
}

void Coordinator::AnswerAfterCommit(LeaseWaiter w, LeaseGrant grant) {
  // Called once (AfterCommit's contract): the grant moves into the answer.
  store_.AfterCommit(store_.Staged(), [w = std::move(w), grant = std::move(grant)](const Status& s) mutable {
    if (s.ok()) w.answer(std::optional<LeaseGrant>(std::move(grant)));
    else w.answer(Status(Code::kUnavailable, "the store could not commit the lease"));
  });
}

int64_t Coordinator::Lease(int64_t node, const std::vector<int>& free, std::chrono::milliseconds wait,
                           const std::set<std::string>& have_suites, LeaseWaiter w) {
  MutexLock lock(mu_);
  ReloadIfNeededLocked();
  store::Store::Group group;
  std::vector<int64_t> reused;
  auto g = sched_->TryLease(node, free, &reused);
  // A search probe settled by reuse queues the next probe: this node may take that one.
  while (g.ok() && !*g && AdvanceSearchesLocked()) g = sched_->TryLease(node, free, &reused);
  AdvanceSearchesLocked();
  if (!reused.empty())
    store_.AfterCommit(store_.Staged(), [this, reused](const Status& s) { if (s.ok()) PublishSettled(reused, "reused"); });
  if (!g.ok()) {
    if (g.status().code() == Code::kNotFound) w.answer(Status(Code::kNotFound, g.status().message(), "node"));
    else if (g.status().code() == Code::kUnavailable) w.answer(g.status());  // a full disk: 503, retried
    else w.answer(Status::Internal("could not lease: the store failed"));
    return 0;
  }
  if (*g) {
    LeaseGrant body = MakeGrant(**g, have_suites);
    PublishAfterCommit(LeasedEvent((*g)->trial, body.sweep.value_or(0), node));
    AnswerAfterCommit(std::move(w), std::move(body));
    return 0;
  }
  if (wait.count() <= 0) {
    // Nothing to grant, but reused trials may have been staged: "nothing" is said once they are kept.
    auto answer = w.answer;
    auto s = WhenCommitted([answer](Status s) {
      if (s.ok()) answer(std::optional<LeaseGrant>());
      else answer(Status(Code::kUnavailable, s.message()));
    });
    if (s) w.answer(s->ok() ? LeaseOutcome(std::optional<LeaseGrant>()) : LeaseOutcome(Status(Code::kUnavailable, s->message())));
    return 0;
  }
  auto old = waiters_.find(node);
  if (old != waiters_.end()) {
    old->second.w.answer(std::optional<LeaseGrant>());
    waiters_.erase(old);
  }
  const int64_t id = next_wait_++;
  waiters_[node] = Waiter{id, free, have_suites, std::move(w)};
  return id;
}

void Coordinator::SetHeldBack(int64_t node, std::map<int, HeldGpu> held) {
  std::vector<int> gpus;
  for (auto& [g, h] : held) gpus.push_back(g);
  {
    MutexLock lock(mu_);
    if (!sched_->SetHeldBack(node, std::move(held))) return;
  }
  events_.Publish(NodeGpusHeld{node, std::move(gpus)});
}

void Coordinator::ReturnGrant(const std::string& lease) {
  {
    MutexLock lock(tick_mu_);
    returns_.push_back(lease);
  }
  tick_cv_.notify_all();
}

void Coordinator::ReturnGrantsLocked(std::vector<std::string> leases) {
  ReloadIfNeededLocked();
  store::Store::Group group;
  bool any = false;
  for (auto& lease : leases) {
    auto trial = sched_->ReturnLease(lease);
    if (!trial.ok()) {
      spdlog::info("a grant whose worker had gone stays leased ({}): its lease expires", trial.status().message());
      continue;
    }
    any = true;
    spdlog::info("trial {}: its grant never reached the worker (the connection had closed); queued again", *trial);
    TrialChanged ev;
    ev.trial = *trial;
    ev.state = TrialState::kQueued;
    ev.reason = "grant undelivered";
    PublishAfterCommit(std::move(ev));
  }
  if (any) ServeWaitersLocked();
}

void Coordinator::AbandonLease(int64_t node, int64_t wait_id) {
  MutexLock lock(mu_);
  auto it = waiters_.find(node);
  if (it != waiters_.end() && it->second.id == wait_id) waiters_.erase(it);
}

Result<HeartbeatAnswer> Coordinator::Heartbeat(const std::string& lease, const HeartbeatRequest& body) {
  MutexLock lock(mu_);
  ReloadIfNeededLocked();
  store::Store::Group group;
  auto l = sched_->Heartbeat(lease);
  if (!l.ok()) return l.status();
  const ActiveLease* a = *l;
  if (body.running) {
    if (Status s = store_.MarkRunning(a->trial, a->epoch); !s.ok()) return s;
  }
  return HeartbeatAnswer{a->cancel, a->epoch, a->trial};
}

Status Coordinator::AppendLog(const std::string& lease, int64_t offset, std::string_view data) {
  int64_t trial;
  {
    MutexLock lock(mu_);
    ReloadIfNeededLocked();
    auto t = sched_->CheckLease(lease);
    if (!t.ok()) return t.status();
    trial = *t;
  }
  store::Store::Group group;
  return store_.AppendLog(trial, offset, data, opts_.log_cap);
}

Result<ReportAnswer> Coordinator::Report(const std::string& lease, store::ResultRow r) {
  MutexLock lock(mu_);
  ReloadIfNeededLocked();
  store::Store::Group group;
  int64_t sweep = 0, trial = 0, node = 0;
  std::optional<QueuedTrial> spec;
  std::string hardware;
  auto it = sched_->leases().find(lease);
  if (it != sched_->leases().end()) {
    sweep = it->second.sweep;
    trial = it->second.trial;
    node = it->second.node;
    if (it->second.spec.reference) {
      spec = it->second.spec;
      hardware = it->second.hardware;
    }
    // The software this node runs this suite version with, for reuse; an infrastructure error's
    // report (a fingerprint command that failed among them) says nothing about it.
    if (!r.fingerprint.empty() && r.verdict != Verdict::kInfraError)
      fingerprints_[{node, it->second.spec.suite_id}] = r.fingerprint.dump();
    // A triage label judges what it labels (store/labels.h), before the scheduler reads the verdict.
    if (!labels_.empty() && Info(r.verdict).severity > 0) {
      auto su = suites_.find(it->second.spec.suite_id);
      const std::string suite = su != suites_.end() && su->second ? su->second->name : std::string();
      for (const store::Label& l : labels_) {
        if (!store::LabelMatches(l, suite, r.signature, r.evidence)) continue;
        r.relabel = store::ResultRow::Relabel{l.id, r.verdict, r.signature, l.created_by, r.basis};
        r.verdict = l.verdict;
        r.signature = store::LabelSignature(l);
        r.basis = Basis::kLabel;
        break;
      }
    }
  }
  auto out = sched_->Report(lease, r);
  if (!out.ok()) return out.status();
  AdvanceSearchesLocked();
  if (!out->duplicate && !out->requeued) AutoBisectLocked(sweep);
  if (!out->duplicate) {
    if (spec && !out->requeued) RememberReferenceLocked(*spec, trial, hardware, r);
    TrialChanged ev;
    ev.trial = trial;
    ev.sweep = sweep;
    ev.state = out->requeued ? TrialState::kQueued : TrialState::kDone;
    ev.says_verdict = true;
    if (!out->requeued) ev.verdict = r.verdict;
    ev.signature = r.signature;
    if (out->confirming) ev.reason = "confirming " + std::string(Name(r.verdict));
    PublishAfterCommit(std::move(ev));
    if (!out->skipped.empty())
      PublishAfterCommit(TrialsSkipped{sweep, out->skipped, trial, out->prune_key.value_or("")});
    ServeWaitersLocked();
  }
  return ReportAnswer{out->duplicate, out->requeued, out->confirming, out->skipped.size()};
}

}  // namespace gauntlet::daemon
