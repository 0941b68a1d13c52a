#include "workers/trial_runner.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <thread>

#include "http/http_client.h"
#include "workers/classifier/classifier.h"
#include "workers/command_stage.h"
#include "workers/process.h"
#include "workers/server_stage.h"

namespace gauntlet {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Ships the log and heartbeats the lease on its own thread while stages run.
class LeaseKeeper {
 public:
  LeaseKeeper(const TrialRunnerEnv& env, std::string lease, int64_t heartbeat_ms, LogSink& log)
      : client_(env.server, env.token), lease_(std::move(lease)), heartbeat_ms_(heartbeat_ms), log_(log),
        abort_all_(env.abort_all) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~LeaseKeeper() { Finish(); }
  bool cancel() const { return cancel_; }
  bool lost() const { return lost_; }
  // Stops the loop after shipping what is left (best effort, bounded).
  void Finish() {
    {
      std::lock_guard lock(mu_);
      if (done_) return;
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Wake() { cv_.notify_all(); }

 private:
  void Loop() {
    auto next_beat = std::chrono::steady_clock::now();  // the first beat says "running" at once
    bool first = true;
    int failures = 0;
    while (true) {
      bool done;
      {
        std::unique_lock lock(mu_);
        cv_.wait_until(lock, std::min(next_beat, std::chrono::steady_clock::now() + std::chrono::milliseconds(200)),
                       [&] { return done_; });
        done = done_;
      }
      if (lost_) return;
      Ship(done ? 20 : 1);
      if (done) return;
      if (std::chrono::steady_clock::now() >= next_beat) {
        auto r = client_.Send("POST", "/api/v1/leases/" + lease_ + "/heartbeat",
                              json{{"running", true}, {"log_size", log_.written()}}.dump(), "application/json",
                              std::chrono::seconds(10));
        if (r.ok() && r->status == 200) {
          json j = json::parse(r->body, nullptr, false);
          if (j.is_object() && j.value("cancel", false)) cancel_ = true;
          failures = 0;
        } else if (r.ok() && r->status == 409) {
          spdlog::warn("lease {} lost: {}", lease_, r->body);
          lost_ = true;
          return;
        } else {
          ++failures;  // daemon unreachable: the trial goes on; the report waits for it
        }
        first = false;
        next_beat = std::chrono::steady_clock::now() + std::chrono::milliseconds(heartbeat_ms_);
      }
      (void)first;
    }
  }

  // Sends pending log chunks; gives up for now after `rounds` failed attempts.
  void Ship(int rounds) {
    for (int i = 0; i < rounds && log_.pending(); ++i) {
      auto [offset, data] = log_.Peek(512 * 1024);
      if (data.empty()) return;
      auto r = client_.Send("POST", "/api/v1/leases/" + lease_ + "/log?offset=" + std::to_string(offset), data,
                            "text/plain", std::chrono::seconds(10));
      if (r.ok() && r->status == 200) {
        log_.Ack(offset + static_cast<int64_t>(data.size()));
        i = -1;  // progress: keep going while there is more
        continue;
      }
      if (r.ok() && r->status == 409) {
        lost_ = true;
        return;
      }
      if (abort_all_ && *abort_all_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * (i + 1)));  // backoff between retries
    }
  }

  http::Client client_;
  std::string lease_;
  int64_t heartbeat_ms_;
  LogSink& log_;
  std::atomic<bool>* abort_all_;
  std::atomic<bool> cancel_{false}, lost_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

json Fingerprint(const TrialRunnerEnv& env, const TrialContext& ctx) {
  const json& def = ctx.suite;
  if (!def.contains("fingerprint") || !def["fingerprint"].contains("argv")) return json::object();
  const std::string key = def.value("name", "") + "@" + std::to_string(def.value("version", 1)) + "@" + ctx.suite_dir;
  {
    std::lock_guard lock(*env.fp_mu);
    auto it = env.fingerprints->find(key);
    if (it != env.fingerprints->end()) return it->second;
  }
  ProcessSpec spec;
  auto vars = StageVars(ctx, 0);
  for (auto& a : def["fingerprint"]["argv"]) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, def["fingerprint"], 0, ctx.workdir + "/fingerprint.result.json");
  spec.cwd = ctx.workdir;
  json fp = json::object();
  auto p = Process::Start(spec);
  if (!p.ok()) {
    fp = {{"error", p.status().message()}};
  } else {
    std::string out;
    auto ex = (*p)->Run(std::chrono::steady_clock::now() + std::chrono::seconds(60),
                        [&](std::string_view c) {
                          if (out.size() < 65536) out.append(c);
                        },
                        nullptr, std::chrono::seconds(2));
    json j = json::parse(out, nullptr, false);
    if (j.is_object()) fp = j;
    else {
      while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
      fp = {{"output", out}};
    }
    if (ex.exit_code.value_or(1) != 0) fp["exit_code"] = ex.exit_code ? json(*ex.exit_code) : json();
  }
  std::lock_guard lock(*env.fp_mu);
  (*env.fingerprints)[key] = fp;
  return fp;
}

}  // namespace

void RunTrial(const TrialRunnerEnv& env, const json& g) {
  const int64_t trial = g.value("trial", int64_t{0});
  const std::string lease = g.value("lease", "");
  LogSink log;
  TrialContext ctx;
  ctx.trial = trial;
  ctx.node_name = env.node_name;
  ctx.suite = g["suite"].value("definition", json::object());
  ctx.suite_dir = g["suite"].value("source_dir", "");
  const json config = g.value("config", json::object());
  for (auto& [k, v] : config.items()) ctx.config[k] = v.is_string() ? v.get<std::string>() : v.dump();
  for (auto& x : g.value("gpus", json::array())) ctx.gpus.push_back(x.get<int>());
  ctx.inv = env.inv;
  ctx.workdir = env.workdir + "/trial-" + std::to_string(trial) + "-a" + std::to_string(g.value("attempt", 1));
  ctx.exe_dir = env.exe_dir;
  ctx.pass_env = env.pass_env;
  ctx.log = &log;
  ctx.kill_grace = env.kill_grace;
  std::error_code ec;
  fs::remove_all(ctx.workdir, ec);
  fs::create_directories(ctx.workdir, ec);

  LeaseKeeper keeper(env, lease, g.value("heartbeat_ms", int64_t{5000}), log);
  ctx.should_stop = [&] { return keeper.cancel() || keeper.lost() || (env.abort_all && *env.abort_all); };

  // The daemon ran the same validator when the suite was registered, so a refusal here means a
  // definition that did not come through it; the trial then runs on the built-in rules alone.
  std::vector<SignatureRule> rules;
  if (auto parsed = ParseSignatureRules(ctx.suite.value("signatures", json::array())); parsed.ok())
    rules = std::move(*parsed);
  else
    log.Append("gauntlet: ignoring the suite's signature rules: " + parsed.status().field() + ": " +
               parsed.status().message() + "\n");
  json fingerprint = Fingerprint(env, ctx);
  json stages = json::array();
  json metrics = json::object();
  StageOutcome last;
  last.verdict = "passed";
  for (auto& st : ctx.suite.value("stages", json::array())) {
    if (ctx.should_stop()) break;
    StageOutcome o = st.value("kind", "") == "server" ? RunServerStage(ctx, st, rules) : RunCommandStage(ctx, st, rules);
    json sj = {{"name", o.stage}, {"verdict", o.verdict}, {"seconds", o.seconds}};
    if (!o.signature.empty()) sj["signature"] = o.signature;
    if (o.exit_code) sj["exit_code"] = *o.exit_code;
    if (o.signal) sj["signal"] = *o.signal;
    stages.push_back(sj);
    for (auto& [k, v] : o.metrics.items()) metrics[k] = v;
    last = o;
    if (o.verdict != "passed") break;  // later stages depend on this one; a failure settles the trial
  }
  if (keeper.lost()) {
    keeper.Finish();
    spdlog::warn("trial {}: lease lost; not reporting", trial);
    return;
  }
  if (last.verdict == "passed" && ctx.should_stop()) {
    last.verdict = "cancelled";
    last.signature = "cancelled:stopped";
  }
  if (last.verdict == "cancelled" && !keeper.cancel() && env.abort_all && *env.abort_all) {
    // Stopped because this worker is shutting down: not the config's fault, so it runs again elsewhere.
    last.verdict = "infra_error";
    last.signature = "infra_error:worker_shutdown";
    last.evidence = "the worker was stopped before the trial finished";
  }
  log.Append("=== trial " + std::to_string(trial) + ": " + last.verdict + "\n");
  keeper.Finish();
  json report = {{"verdict", last.verdict}, {"signature", last.signature}, {"evidence", last.evidence},
                 {"failing_stage", last.verdict == "passed" ? "" : last.stage}, {"metrics", metrics},
                 {"stages", stages}, {"fingerprint", fingerprint}};
  if (last.exit_code) report["exit_code"] = *last.exit_code;
  if (last.signal) report["signal"] = *last.signal;
  // Deliver logs left over and then the report, retrying while the daemon is away (it may be
  // restarting); the report is idempotent, so a retry after a lost answer is harmless.
  http::Client client(env.server, env.token);
  int delay_ms = 50;
  while (true) {
    while (log.pending()) {
      auto [offset, data] = log.Peek(512 * 1024);
      auto r = client.Send("POST", "/api/v1/leases/" + lease + "/log?offset=" + std::to_string(offset), data,
                           "text/plain", std::chrono::seconds(10));
      if (!r.ok() || (r->status != 200 && r->status != 409)) break;
      if (r->status == 409) return;
      log.Ack(offset + static_cast<int64_t>(data.size()));
    }
    if (!log.pending()) {
      auto r = client.Send("POST", "/api/v1/leases/" + lease + "/result", report.dump(), "application/json",
                           std::chrono::seconds(10));
      if (r.ok() && r->status == 200) break;
      if (r.ok() && r->status == 409) {
        spdlog::warn("trial {}: the daemon refused the report: {}", trial, r->body);
        break;
      }
      if (r.ok() && r->status >= 400 && r->status != 503) {
        spdlog::error("trial {}: report rejected ({}): {}", trial, r->status, r->body);
        break;
      }
    }
    if (env.abort_all && *env.abort_all && delay_ms > 2000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // backoff while the daemon is away
    delay_ms = std::min(delay_ms * 2, 2000);
  }
  fs::remove_all(ctx.workdir, ec);
}

}  // namespace gauntlet
