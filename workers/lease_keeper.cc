#include "workers/lease_keeper.h"

#include <spdlog/spdlog.h>

namespace gauntlet::worker {

namespace {
constexpr size_t kChunk = 512 * 1024;  // bytes per log call: a few calls for a big burst, one for a line
}  // namespace

LeaseKeeper::LeaseKeeper(DaemonLink& daemon, std::string lease, std::chrono::milliseconds heartbeat, LogSink& log,
                         const std::atomic<bool>* abort_all, WorkerClock& clock)
    : daemon_(daemon), lease_(std::move(lease)), heartbeat_(heartbeat), log_(log), abort_all_(abort_all),
      clock_(clock) {
  beat_thread_ = std::thread([this] { BeatLoop(); });
  ship_thread_ = std::thread([this] { ShipLoop(); });
}

LeaseKeeper::~LeaseKeeper() { Finish(); }

void LeaseKeeper::Finish() {
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
  }
  cv_.notify_all();
  if (beat_thread_.joinable()) beat_thread_.join();
  if (ship_thread_.joinable()) ship_thread_.join();
}

void LeaseKeeper::BeatLoop() {
  auto next_beat = clock_.Now();  // the first beat says "running" at once
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (clock_.WaitUntil(cv_, lock, next_beat, [&] { return done_; })) return;
    }
    if (lost_) return;
    Beat();
    if (lost_) return;
    next_beat = clock_.Now() + heartbeat_;
  }
}

void LeaseKeeper::ShipLoop() {
  while (true) {
    bool done;
    {
      // Wakes every 200 ms at most, so log lines reach the daemon while a stage runs (followers
      // of `gauntlet logs --follow` see them), and at once on Finish.
      std::unique_lock lock(mu_);
      clock_.WaitUntil(cv_, lock, clock_.Now() + std::chrono::milliseconds(200), [&] { return done_; });
      done = done_;
    }
    if (lost_) return;
    Ship(done ? 20 : 1);
    if (done || lost_) return;
  }
}

void LeaseKeeper::Beat() {
  HeartbeatAnswer a = daemon_.Heartbeat(lease_, log_.written());
  if (a.ok() && a.cancel) cancel_ = true;
  if (a.status == LinkStatus::kLost) {
    spdlog::warn("lease {} lost: {}", lease_, a.detail);
    lost_ = true;
  }
  // Any other answer: the daemon is away; the trial goes on and its report waits for it.
}

void LeaseKeeper::Ship(int rounds) {
  for (int i = 0; i < rounds && log_.pending(); ++i) {
    auto [offset, data] = log_.Peek(kChunk);
    if (data.empty()) return;
    LinkAnswer a = daemon_.AppendLog(lease_, offset, data);
    if (a.ok()) {
      log_.Ack(offset + static_cast<int64_t>(data.size()));
      i = -1;  // progress: keep going while there is more
      continue;
    }
    if (a.status == LinkStatus::kLost) {
      lost_ = true;
      return;
    }
    if (abort_all_ && *abort_all_) return;
    clock_.SleepFor(std::chrono::milliseconds(100 * (i + 1)));  // backoff between retries
  }
}

}  // namespace gauntlet::worker
