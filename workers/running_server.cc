#include "workers/running_server.h"

namespace gauntlet::worker {
using proc::ExitInfoProc;
using proc::RunningProcess;
using classifier::Classification;
using classifier::ExitInfo;
using Clock = std::chrono::steady_clock;

RunningServer::RunningServer(std::unique_ptr<RunningProcess> p, const TrialContext& ctx, std::vector<SignatureRule> rules)
    : proc_(std::move(p)), clock_(*ctx.clock), classifier_(std::move(rules)) {
  pump_ = std::thread([this, &ctx] {
    // No deadline of its own: the stage's steps keep the time and Stop() ends the pump.
    ExitInfoProc e = proc_->Run(
        Clock::time_point::max(),
        [&](std::string_view chunk) {
          ctx.log->Append(chunk);
          std::lock_guard lock(mu_);
          classifier_.Feed(chunk);
        },
        [this] { return stop_.load(); }, ctx.kill_grace, std::chrono::milliseconds(50));
    std::lock_guard lock(mu_);
    exit_ = e;
    exited_ = true;
    exited_cv_.notify_all();
  });
}

RunningServer::~RunningServer() { Stop(); }

bool RunningServer::exited() {
  std::lock_guard lock(mu_);
  return exited_;
}

bool RunningServer::WaitExit(Clock::duration d) {
  std::unique_lock lock(mu_);
  return clock_.WaitUntil(exited_cv_, lock, clock_.Now() + d, [this] { return exited_; });
}

ExitInfoProc RunningServer::Stop() {
  stop_ = true;
  if (pump_.joinable()) pump_.join();
  std::lock_guard lock(mu_);
  return exit_;
}

Classification RunningServer::Classify(const ExitInfoProc& e) {
  ExitInfo ei;
  ei.exit_code = e.exit_code;
  ei.signal = e.signal;
  ei.timed_out = e.timed_out;
  std::lock_guard lock(mu_);
  return classifier_.Finish(ei);
}

}  // namespace gauntlet::worker
