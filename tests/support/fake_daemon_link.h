// A DaemonLink (workers/daemon_link.h) that is a daemon in memory: it keeps each lease's log by
// offset as the store does (a retried chunk is taken again, a chunk past the end is refused as the
// daemon's 409 is), records every report, and answers from scripts the test sets, so the worker
// loop and the trial runner are tested without sockets. Thread-safe, as the seam requires.
// Set the scripts before the worker or trial starts (its threads read them under the lock).
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "workers/daemon_link.h"
#include "workers/worker_clock.h"

namespace gauntlet::test {

class FakeDaemonLink : public worker::DaemonLink {
 public:
  // ---- scripts ----
  // Register answers, one per call; when they run out, ok with node 1.
  std::deque<worker::RegisterAnswer> register_answers;
  // Lease answers, one per call; when they run out, "nothing to run" after a short pause (a
  // long-poll that found nothing), so a worker loop does not spin.
  std::deque<worker::LeaseAnswer> lease_answers;
  // The clock that pause is on (borrowed); null: a real 10 ms. With a FakeWorkerClock the pause
  // moves the clock on at once, so a worker's idle time passes without real time.
  worker::WorkerClock* clock = nullptr;
  // The heartbeat's answer, asked at each call; default: ok, no cancel.
  std::function<worker::HeartbeatAnswer()> heartbeat;
  // The first N log calls, and the first N report calls, answer kUnavailable (a daemon away).
  int logs_unavailable = 0;
  int reports_unavailable = 0;

  // ---- the DaemonLink ----
  worker::RegisterAnswer Register(const nlohmann::json& node) override {
    std::lock_guard lock(mu_);
    registrations_.push_back(node);
    if (register_answers.empty()) {
      worker::RegisterAnswer a;
      a.status = worker::LinkStatus::kOk;
      a.node = 1;
      return a;
    }
    worker::RegisterAnswer a = register_answers.front();
    register_answers.pop_front();
    return a;
  }
  worker::LeaseAnswer Lease(int64_t node, const worker::LeaseRequest& request) override {
    {
      std::lock_guard lock(mu_);
      lease_requests_.push_back({node, request});
      if (!lease_answers.empty()) {
        worker::LeaseAnswer a = lease_answers.front();
        lease_answers.pop_front();
        return a;
      }
    }
    (clock ? *clock : worker::SteadyWorkerClock()).SleepFor(std::chrono::milliseconds(10));
    worker::LeaseAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  }
  void InterruptLease() override {}
  worker::LinkAnswer Quarantine(int64_t node, const std::string& reason) override {
    std::lock_guard lock(mu_);
    quarantines_.push_back({node, reason});
    return Ok();
  }
  worker::HeartbeatAnswer Heartbeat(const std::string&, int64_t) override {
    std::function<worker::HeartbeatAnswer()> h;
    {
      std::lock_guard lock(mu_);
      ++heartbeats_;
      h = heartbeat;
    }
    if (h) return h();
    worker::HeartbeatAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  }
  worker::LinkAnswer AppendLog(const std::string& lease, int64_t offset, std::string_view data) override {
    std::lock_guard lock(mu_);
    ++log_calls_;
    if (logs_unavailable > 0) {
      --logs_unavailable;
      return Unavailable();
    }
    std::string& log = logs_[lease];
    const auto size = static_cast<int64_t>(log.size());
    if (offset > size) {
      ++gaps_;
      worker::LinkAnswer a;
      a.status = worker::LinkStatus::kLost;
      a.detail = "log offset " + std::to_string(offset) + " is past the end " + std::to_string(size);
      return a;
    }
    // A retry of bytes already stored must carry the same bytes; only what is new is appended.
    const size_t overlap = std::min(data.size(), static_cast<size_t>(size - offset));
    if (log.compare(static_cast<size_t>(offset), overlap, data.substr(0, overlap)) != 0) ++mismatches_;
    log.append(data.substr(overlap));
    return Ok();
  }
  worker::LinkAnswer Report(const std::string& lease, const nlohmann::json& report) override {
    std::lock_guard lock(mu_);
    report_calls_.push_back(report);
    if (reports_unavailable > 0) {
      --reports_unavailable;
      return Unavailable();
    }
    taken_[lease] = report;
    return Ok();
  }

  // ---- what the daemon got ----
  std::string log(const std::string& lease) const {
    std::lock_guard lock(mu_);
    auto it = logs_.find(lease);
    return it == logs_.end() ? "" : it->second;
  }
  // The report the daemon took for `lease`; null when none was.
  nlohmann::json report(const std::string& lease) const {
    std::lock_guard lock(mu_);
    auto it = taken_.find(lease);
    return it == taken_.end() ? nlohmann::json() : it->second;
  }
  std::vector<nlohmann::json> report_calls() const {  // every report sent, taken or not
    std::lock_guard lock(mu_);
    return report_calls_;
  }
  std::vector<nlohmann::json> registrations() const {
    std::lock_guard lock(mu_);
    return registrations_;
  }
  std::vector<std::pair<int64_t, worker::LeaseRequest>> lease_requests() const {
    std::lock_guard lock(mu_);
    return lease_requests_;
  }
  std::vector<std::pair<int64_t, std::string>> quarantines() const {
    std::lock_guard lock(mu_);
    return quarantines_;
  }
  int heartbeats() const {
    std::lock_guard lock(mu_);
    return heartbeats_;
  }
  int log_calls() const {
    std::lock_guard lock(mu_);
    return log_calls_;
  }
  int gaps() const {  // chunks sent past the end of what the daemon had
    std::lock_guard lock(mu_);
    return gaps_;
  }
  int mismatches() const {  // retried chunks whose bytes differed from those stored
    std::lock_guard lock(mu_);
    return mismatches_;
  }

 private:
  static worker::LinkAnswer Ok() {
    worker::LinkAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  }
  static worker::LinkAnswer Unavailable() {
    worker::LinkAnswer a;
    a.status = worker::LinkStatus::kUnavailable;
    a.detail = "the fake daemon is away";
    return a;
  }

  mutable std::mutex mu_;
  std::vector<nlohmann::json> registrations_;
  std::vector<std::pair<int64_t, worker::LeaseRequest>> lease_requests_;
  std::vector<std::pair<int64_t, std::string>> quarantines_;
  std::map<std::string, std::string> logs_;
  std::map<std::string, nlohmann::json> taken_;
  std::vector<nlohmann::json> report_calls_;
  int heartbeats_ = 0, log_calls_ = 0, gaps_ = 0, mismatches_ = 0;
};

}  // namespace gauntlet::test
