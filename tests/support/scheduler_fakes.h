// Test doubles for the scheduler's two seams (daemon/scheduler.h): a clock the test moves by hand and
// a store that keeps what the scheduler wrote in memory. Shared by tests/unit and bench/scheduler.
// Not thread-safe, as the scheduler itself is not.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/scheduler.h"

namespace gauntlet::test {

class FakeClock : public daemon::Clock {
 public:
  int64_t now = 1'700'000'000'000;
  int64_t NowMs() override { return now; }
};

// Accepts every write (unless fail_leases) and records it when `record` is set; counts skipped trials
// always. FindReusable answers `reusable` for every config.
class FakeSchedulerStore : public daemon::SchedulerStore {
 public:
  bool record = true;  // off for benchmarks: the scheduler's own work is what they time
  bool fail_leases = false;
  std::set<int64_t> gone;  // trials the store no longer holds as queued (a cancel committed first)
  std::optional<store::ResultRow> reusable;
  int64_t skipped = 0;
  std::vector<int64_t> leased, requeued, finished;
  std::vector<store::ResultRow> attempts;  // confirming attempts kept (RecordAttempt)
  std::map<int64_t, store::ResultRow> results;  // final results by trial (Finish)
  std::map<int64_t, std::string> verdicts;  // by name: what the tests compare
  std::map<int64_t, std::optional<int64_t>> evidence;
  std::map<int64_t, NodeState> node_states;
  std::map<int64_t, std::string> texts;  // a skipped trial's evidence text

  Status Lease(int64_t trial, int64_t, const std::string&, int64_t, int64_t, const std::string&,
               const std::string&) override {
    if (fail_leases) return Status::Internal("disk full");
    if (gone.count(trial)) return Status::Conflict("trial " + std::to_string(trial) + " is not queued");
    if (record) leased.push_back(trial);
    return Status::Ok();
  }
  Status RecordAttempt(const store::ResultRow& r) override {
    if (record) attempts.push_back(r);
    return Status::Ok();
  }
  Status Requeue(int64_t trial, int) override {
    if (record) requeued.push_back(trial);
    return Status::Ok();
  }
  Status Finish(const store::ResultRow& r, std::optional<int64_t> e) override {
    if (record) Note(r.trial_id, r.verdict, e);
    if (record) results[r.trial_id] = r;
    return Status::Ok();
  }
  Status FinishMany(const std::vector<int64_t>& trials, Verdict verdict, const std::string&,
                    std::optional<int64_t> e, const std::string&) override {
    skipped += static_cast<int64_t>(trials.size());
    if (record)
      for (int64_t id : trials) Note(id, verdict, e);
    return Status::Ok();
  }
  Status Skip(const std::vector<int64_t>& trials, const std::string& signature, int64_t evidence_trial,
              const std::string& hardware, const std::string& stage, const std::string& evidence_text) override {
    if (record)
      for (int64_t id : trials) texts[id] = evidence_text;
    return daemon::SchedulerStore::Skip(trials, signature, evidence_trial, hardware, stage, evidence_text);
  }
  Status SetNodeState(int64_t node, NodeState state, const std::string&) override {
    if (record) node_states[node] = state;
    return Status::Ok();
  }
  std::optional<store::ResultRow> FindReusable(int64_t, const std::string&, const std::string&, int64_t) override {
    return reusable;
  }

 private:
  void Note(int64_t trial, Verdict verdict, std::optional<int64_t> e) {
    finished.push_back(trial);
    verdicts[trial] = Name(verdict);
    evidence[trial] = e;
  }
};

}  // namespace gauntlet::test
