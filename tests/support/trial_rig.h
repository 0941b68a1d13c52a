// A RunTrial environment (workers/trial_runner.h) over the fakes of its two seams: a daemon in
// memory (fake_daemon_link.h), scripted processes (fake_process_runner.h), a fingerprint cache and a
// fresh workdir, wired into `env`. Shared by the trial runner's tests; one per test.
#pragma once
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fake_daemon_link.h"
#include "tests/support/fake_process_runner.h"
#include "tests/support/harness.h"
#include "workers/fingerprint.h"
#include "workers/trial_runner.h"

namespace gauntlet::test {

struct TrialRig {
  TrialRig() {
    env.daemon = &daemon;
    env.processes = &runner;
    env.fingerprints = &fingerprints;
    env.node_name = "n1";
    env.workdir = dir.path();
    env.kill_grace = std::chrono::milliseconds(10);
    env.abort_all = &abort_all;
  }

  // A grant as the daemon sends it for trial `trial` (lease "L<trial>", 20 ms heartbeats) of suite
  // s@1 with these stages and `extra_suite`'s fields, at `config` on `gpus`.
  static nlohmann::json Grant(int64_t trial, const std::vector<nlohmann::json>& stages, const nlohmann::json& config,
                              const nlohmann::json& gpus, const nlohmann::json& extra_suite = nlohmann::json::object()) {
    nlohmann::json def = {{"name", "s"}, {"version", 1}, {"stages", nlohmann::json(stages)}};
    def.update(extra_suite);
    return {{"trial", trial}, {"lease", "L" + std::to_string(trial)}, {"attempt", 1}, {"heartbeat_ms", 20},
            {"suite", {{"key", "s@1"}, {"definition", def}}}, {"config", config}, {"gpus", gpus}};
  }

  TempDir dir;
  FakeDaemonLink daemon;
  FakeProcessRunner runner;
  worker::FingerprintCache fingerprints;
  std::atomic<bool> abort_all{false};
  worker::TrialRunnerEnv env;
};

}  // namespace gauntlet::test
