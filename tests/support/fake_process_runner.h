// A ProcessRunner (proc/process_runner.h) whose processes are scripts: each program, named by
// argv[0], prints what it is given and ends as told, without fork or exec, so stage and trial logic
// is tested without processes. It keeps what was started and how each process ended, for tests to
// check that no process outlives its stage. Thread-safe, as the seam requires (the server stage
// pumps its process on a thread of its own, and trials run concurrently).
#pragma once
#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proc/process_runner.h"
#include "workers/worker_clock.h"

namespace gauntlet::test {

struct FakeProgram {
  std::vector<std::string> output;  // chunks written to stdout/stderr, in order
  std::optional<int> exit_code = 0;  // how it ends on its own
  std::optional<int> signal;
  bool until_stopped = false;  // a server or a hang: it ends only when stopped or at its deadline
  // Ends as one the kernel killed at its cgroup's memory.max does: SIGKILL, memory.events oom_kill
  // raised (the real runner reads it from the stage's cgroup).
  bool oom_killed = false;
  // What the program does when it starts, beyond printing (write its result file, say).
  std::function<void(const proc::ProcessSpec&)> on_start;
  // Lets one program behave by its spec before it runs (a rank by its RANK, say).
  std::function<void(const proc::ProcessSpec&, FakeProgram&)> adapt;
};

class FakeProcessRunner : public proc::ProcessRunner {
 public:
  // The clock a running program keeps its deadline and poll interval on (borrowed; set before any
  // Start). Null: the steady clock, polled in real time. A FakeWorkerClock makes each poll of a
  // program that runs until stopped move the clock on by the poll interval, at once.
  worker::WorkerClock* clock = nullptr;

  // Programs by argv[0]; Start refuses any other name as a missing program would be (NotFound).
  void Add(const std::string& argv0, FakeProgram p) {
    std::lock_guard lock(mu_);
    programs_[argv0] = std::move(p);
  }

  Result<std::unique_ptr<proc::RunningProcess>> Start(const proc::ProcessSpec& spec) override {
    FakeProgram p;
    {
      std::lock_guard lock(mu_);
      if (spec.argv.empty()) return Status::Invalid("empty argv", "argv");
      auto it = programs_.find(spec.argv[0]);
      if (it == programs_.end())
        return Status::NotFound("program '" + spec.argv[0] + "' was not found or is not executable");
      p = it->second;
      started_.push_back(spec);
      ++live_;
    }
    if (p.adapt) p.adapt(spec, p);
    if (p.on_start) p.on_start(spec);
    auto proc = std::make_unique<Proc>(this, std::move(p), clock);
    proc->memory_limit_ = spec.memory_limit_bytes;
    return std::unique_ptr<proc::RunningProcess>(std::move(proc));
  }

  std::vector<proc::ProcessSpec> started() const {  // every spec Start took, in order
    std::lock_guard lock(mu_);
    return started_;
  }
  int live() const {  // processes started and not yet ended
    std::lock_guard lock(mu_);
    return live_;
  }
  int stopped() const {  // processes ended by a stop, a timeout or StopGroup, not on their own
    std::lock_guard lock(mu_);
    return stopped_;
  }
  int timed_out() const {  // processes whose Run reached its deadline
    std::lock_guard lock(mu_);
    return timed_out_;
  }

 private:
  class Proc : public proc::RunningProcess {
   public:
    Proc(FakeProcessRunner* owner, FakeProgram p, worker::WorkerClock* clock)
        : owner_(owner), p_(std::move(p)), clock_(clock ? *clock : worker::SteadyWorkerClock()) {}
    ~Proc() override { StopGroup(std::chrono::milliseconds(0)); }  // as the real one: no group outlives its handle

    proc::ExitInfoProc Run(std::chrono::steady_clock::time_point deadline,
                     const std::function<void(std::string_view)>& on_output, const std::function<bool()>& should_stop,
                     std::chrono::milliseconds, std::chrono::milliseconds poll) override {
      for (auto& chunk : p_.output) on_output(chunk);
      // The real pump checks its deadline and stop before it reaps a leader that has exited.
      while (true) {
        const auto now = clock_.Now();
        if (now >= deadline) return End(true, false);
        if (should_stop && should_stop()) return End(false, true);
        if (!p_.until_stopped) return End(false, false);
        clock_.SleepFor(std::min<std::chrono::steady_clock::duration>(
            poll, std::max<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(1))));
      }
    }
    void StopGroup(std::chrono::milliseconds) override {
      if (ended_) return;
      exit_ = proc::ExitInfoProc{};
      exit_.signal = SIGTERM;
      Ended(true);
    }

   private:
    proc::ExitInfoProc End(bool timed_out, bool stopped) {
      if (timed_out) {
        std::lock_guard lock(owner_->mu_);
        ++owner_->timed_out_;
      }
      if (timed_out || stopped) {
        StopGroup(std::chrono::milliseconds(0));
      } else if (!ended_) {
        exit_.exit_code = p_.exit_code;
        exit_.signal = p_.signal;
        exit_.oom_killed = p_.oom_killed;
        if (p_.oom_killed) exit_.memory_limit_bytes = memory_limit_;
        Ended(false);
      }
      proc::ExitInfoProc out = exit_;
      out.timed_out = timed_out;
      out.stopped = stopped;
      return out;
    }
    void Ended(bool by_stop) {
      ended_ = true;
      std::lock_guard lock(owner_->mu_);
      --owner_->live_;
      if (by_stop) ++owner_->stopped_;
    }

    FakeProcessRunner* owner_;
    FakeProgram p_;
    worker::WorkerClock& clock_;
    bool ended_ = false;
    proc::ExitInfoProc exit_;

   public:
    int64_t memory_limit_ = 0;  // the spec's, as a cgroup would hold it
  };

  mutable std::mutex mu_;
  std::map<std::string, FakeProgram> programs_;
  std::vector<proc::ProcessSpec> started_;
  int live_ = 0, stopped_ = 0, timed_out_ = 0;
};

}  // namespace gauntlet::test
