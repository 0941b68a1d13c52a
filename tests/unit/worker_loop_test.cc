// The worker's lease loop (RunWorker) against a daemon in memory and scripted processes
// (tests/support/): what it registers, which GPUs it offers, that a grant is run and reported, that
// a daemon which forgot the node gets it registered again, and that a refused registration ends
// the worker, and that a SIGTERM drain past its timeout stops the trial and returns. Most tests end
// the worker through --exit-when-idle. Time is a FakeWorkerClock: backoffs, the daemon's empty
// long-polls, idleness and the drain timeout pass on it, without real sleeps.
#include "workers/worker.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/stop_signals.h"
#include "workers/gpu_handback.h"

#include "tests/support/fake_daemon_link.h"
#include "tests/support/fake_process_runner.h"
#include "tests/support/fake_worker_clock.h"
#include "tests/support/harness.h"

namespace gauntlet {
using proc::ProcessSpec;
namespace {
using nlohmann::json;

class WorkerLoopTest : public ::testing::Test {
 protected:
  WorkerLoopTest() {
    opts.name = "fake-node";
    opts.workdir = dir.path() + "/work";
    opts.inventory_file =
        dir.Write("inventory.json", R"({"gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0",
                                         "compute_capability": "9.0", "memory_mb": 143771}]})");
    opts.labels = {{"pool", "hopper"}};
    opts.preflight = "off";
    opts.exit_when_idle = true;
    opts.idle_exit_s = 0.3;
    opts.kill_grace_ms = 10;
    daemon.clock = &clock;
    runner.clock = &clock;
  }
  int Run(worker::GpuProbe* gpus = nullptr) { return worker::RunWorker(opts, daemon, runner, gpus, clock); }
  static worker::LeaseAnswer Grant(int64_t trial, const std::string& program = "ok") {
    worker::LeaseAnswer a;
    a.status = worker::LinkStatus::kOk;
    a.grant = json{{"trial", trial}, {"lease", "L" + std::to_string(trial)}, {"attempt", 1}, {"heartbeat_ms", 20},
                   {"suite", {{"key", "s@1"}, {"definition", {{"name", "s"}, {"version", 1},
                                                              {"stages", {{{"name", "k"}, {"argv", {program}}}}}}}}},
                   {"config", json::object()}, {"gpus", {0}}};
    return a;
  }
  static worker::LeaseAnswer Answer(worker::LinkStatus s) {
    worker::LeaseAnswer a;
    a.status = s;
    return a;
  }

  test::FakeWorkerClock clock;
  test::TempDir dir;
  worker::WorkerOptions opts;
  test::FakeDaemonLink daemon;
  test::FakeProcessRunner runner;
};

TEST_F(WorkerLoopTest, AGrantIsRunAndReportedAndAForgottenNodeRegistersAgain) {
  runner.Add("ok", {});
  daemon.lease_answers = {Grant(1), Answer(worker::LinkStatus::kUnknownNode), Answer(worker::LinkStatus::kUnavailable)};

  EXPECT_EQ(Run(), 0);

  const auto regs = daemon.registrations();
  ASSERT_EQ(regs.size(), 2u) << "once at start, once after the daemon forgot the node";
  EXPECT_EQ(regs[0]["name"], "fake-node");
  EXPECT_EQ(regs[0]["labels"]["pool"], "hopper");
  EXPECT_EQ(regs[0]["inventory"]["gpus"][0]["uuid"], "GPU-0");
  EXPECT_EQ(daemon.report("L1")["verdict"], "passed");
  EXPECT_EQ(runner.started().size(), 1u);
  const auto leases = daemon.lease_requests();
  ASSERT_GE(leases.size(), 4u);
  for (auto& [node, req] : leases) {
    EXPECT_EQ(node, 1);
    // One GPU, one trial at a time: the worker asks only while GPU 0 is free, and says so.
    EXPECT_EQ(req.free_gpus, std::vector<int>{0});
    EXPECT_EQ(req.wait_s, 1.0) << "an idle-exiting worker long-polls in short calls, to notice it is idle";
  }
  EXPECT_TRUE(leases[0].second.have_suites.empty());
  EXPECT_EQ(leases.back().second.have_suites, std::vector<std::string>{"s@1"})
      << "a suite definition travels once; later leases say the worker has it";
}

// NVML as a test sets it: GPU 1 lists `pid` for the first `busy_calls` questions about it, then
// nothing (the leftover went away). Thread-safe.
class FakeGpuProbe final : public worker::GpuProbe {
 public:
  unsigned pid = 0;
  int busy_calls = 0;
  std::optional<std::vector<unsigned>> Pids(int index) const override {
    std::lock_guard lock(mu_);
    if (index != 1 || asked_++ >= busy_calls) return std::vector<unsigned>{};
    return std::vector<unsigned>{pid};
  }

 private:
  mutable std::mutex mu_;
  mutable int asked_ = 0;
};

// A GPU that still lists a process the worker did not start is held back, and every lease request
// says so (index, reason, pids) while it lasts, without offering it as free; once NVML shows it
// free, it is offered again and no longer named as held back.
TEST_F(WorkerLoopTest, AHeldBackGpuIsToldToTheDaemonUntilItIsFree) {
  opts.inventory_file = dir.Write("inventory2.json", R"({"gpus": [
      {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0", "compute_capability": "9.0", "memory_mb": 143771},
      {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-1", "compute_capability": "9.0", "memory_mb": 143771}]})");
  opts.gpu_free_wait_s = 0;
  FakeGpuProbe gpus;
  gpus.pid = static_cast<unsigned>(getpid());  // not a trial's: it is never killed
  gpus.busy_calls = 3;  // the check at start, then the rechecks before the first two lease calls

  EXPECT_EQ(Run(&gpus), 0);

  const auto leases = daemon.lease_requests();
  ASSERT_GE(leases.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    const worker::LeaseRequest& r = leases[i].second;
    EXPECT_EQ(r.free_gpus, std::vector<int>{0}) << "lease " << i;
    ASSERT_EQ(r.held_back.size(), 1u) << "lease " << i;
    EXPECT_EQ(r.held_back[0].index, 1);
    EXPECT_EQ(r.held_back[0].pids, std::vector<unsigned>{gpus.pid});
    EXPECT_NE(r.held_back[0].reason.find(std::to_string(gpus.pid)), std::string::npos) << r.held_back[0].reason;
  }
  for (size_t i = 2; i < leases.size(); ++i) {
    EXPECT_EQ(leases[i].second.free_gpus, (std::vector<int>{0, 1})) << "lease " << i;
    EXPECT_TRUE(leases[i].second.held_back.empty()) << "lease " << i;
  }
}

TEST_F(WorkerLoopTest, ATrialLongerThanTheIdleLimitDoesNotMakeTheWorkerIdle) {
  test::FakeProgram slow;
  slow.on_start = [this](const ProcessSpec&) { clock.Advance(std::chrono::milliseconds(600)); };
  runner.Add("slow", slow);
  runner.Add("ok", {});
  // Its only slot is busy for twice the idle limit; the next lease must still be asked for.
  daemon.lease_answers = {Grant(1, "slow"), Grant(2)};

  EXPECT_EQ(Run(), 0);

  EXPECT_EQ(daemon.report("L1")["verdict"], "passed");
  EXPECT_EQ(daemon.report("L2")["verdict"], "passed");
}

TEST_F(WorkerLoopTest, ASigtermDrainPastItsTimeoutStopsTheTrialAndTheWorkerReturns) {
  test::FakeProgram forever;
  forever.until_stopped = true;
  runner.Add("forever", forever);
  daemon.lease_answers = {Grant(1, "forever")};
  opts.exit_when_idle = false;
  opts.drain_timeout_ms = 200;
  // SIGTERM goes to the process once the trial runs. It must reach only RunWorker's signal thread:
  // blocked here first, so every thread of this test inherits the block, as in `gauntlet worker`.
  BlockStopSignals();
  std::atomic<bool> sent{false};
  daemon.heartbeat = [&] {
    if (runner.live() > 0 && !sent.exchange(true)) kill(getpid(), SIGTERM);
    worker::HeartbeatAnswer a;
    a.status = worker::LinkStatus::kOk;
    return a;
  };
  // The only slot is busy, so the loop waits for room when the signal comes; and the drain times
  // out, which once left the signal thread waiting for a second signal. Either hang ends the run:
  // the watchdog's wait is woken at once when RunWorker returns, and times out (real time) only on
  // a hang.
  std::mutex mu;
  std::condition_variable cv;
  bool returned = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return returned; })) {
      std::fprintf(stderr, "RunWorker did not return 10 s after SIGTERM with a 200 ms drain timeout\n");
      std::_Exit(1);
    }
  });

  const int code = Run();
  {
    std::lock_guard lock(mu);
    returned = true;
  }
  cv.notify_all();
  watchdog.join();

  EXPECT_EQ(code, 0);
  EXPECT_TRUE(sent);
  const json r = daemon.report("L1");
  EXPECT_EQ(r["verdict"], "infra_error") << r.dump();
  EXPECT_EQ(r["signature"], "infra_error:worker_shutdown");
  EXPECT_EQ(runner.live(), 0);
}

TEST_F(WorkerLoopTest, ARefusedRegistrationEndsTheWorkerWithoutLeasing) {
  worker::RegisterAnswer refused;
  refused.status = worker::LinkStatus::kRefused;
  refused.detail = "401: bad token";
  daemon.register_answers = {refused};

  EXPECT_EQ(Run(), 3);
  EXPECT_TRUE(daemon.lease_requests().empty());
}

TEST_F(WorkerLoopTest, ARegistrationTheDaemonCannotTakeYetIsRetried) {
  worker::RegisterAnswer away;
  away.status = worker::LinkStatus::kUnavailable;
  daemon.register_answers = {away, away};

  EXPECT_EQ(Run(), 0);
  EXPECT_EQ(daemon.registrations().size(), 3u);
  EXPECT_FALSE(daemon.lease_requests().empty()) << "the idle clock starts once the node is registered";
}

}  // namespace
}  // namespace gauntlet
