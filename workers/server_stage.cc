#include "workers/server_stage.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <thread>

#include "http/http_client.h"
#include "core/suite.h"
#include "workers/classifier/garbage.h"
#include "workers/command_stage.h"
#include "workers/nvml.h"
#include "workers/openai_bench.h"
#include "workers/process.h"

namespace gauntlet {
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The server process with its output pumped into the log and the classifier on a thread.
class RunningServer {
 public:
  RunningServer(std::unique_ptr<Process> p, const TrialContext& ctx, std::vector<SignatureRule> rules)
      : proc_(std::move(p)), classifier_(std::move(rules)) {
    pump_ = std::thread([this, &ctx] {
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
  ~RunningServer() { Stop(); }
  pid_t pid() const { return proc_->pid(); }
  bool exited() {
    std::lock_guard lock(mu_);
    return exited_;
  }
  // Waits up to `d` for the process to exit on its own; true if it has. This is how the ready loop
  // and a failed request learn of a death at once instead of after a fixed pause.
  bool WaitExit(Clock::duration d) {
    std::unique_lock lock(mu_);
    return exited_cv_.wait_for(lock, d, [this] { return exited_; });
  }
  // Stops the whole group (SIGTERM, grace, SIGKILL) and waits for the pump; idempotent.
  ExitInfoProc Stop() {
    stop_ = true;
    if (pump_.joinable()) pump_.join();
    std::lock_guard lock(mu_);
    return exit_;
  }
  Classification Classify(const ExitInfoProc& e) {
    ExitInfo ei;
    ei.exit_code = e.exit_code;
    ei.signal = e.signal;
    ei.timed_out = e.timed_out;
    std::lock_guard lock(mu_);
    return classifier_.Finish(ei);
  }

 private:
  std::unique_ptr<Process> proc_;
  std::mutex mu_;
  std::condition_variable exited_cv_;
  Classifier classifier_;
  std::thread pump_;
  std::atomic<bool> stop_{false};
  bool exited_ = false;  // guarded by mu_
  ExitInfoProc exit_;    // guarded by mu_
};

// Judges a server that died on its own (while loading, on a request, during the benchmark).
// `when` is a signature-safe key ("while_starting").
void JudgeDeath(RunningServer& srv, StageOutcome* out, const std::string& when) {
  ExitInfoProc e = srv.Stop();
  out->exit_code = e.exit_code;
  if (e.signal) out->signal = SignalName(*e.signal);
  Classification c = srv.Classify(e);
  if (c.verdict == "passed") {  // exit 0 without evidence: still a server that should not have exited
    c.verdict = "crashed";
    c.signature = "crashed:server_exited_" + when;
    c.evidence = "the server exited (" + (e.exit_code ? "code " + std::to_string(*e.exit_code) : std::string("signal")) +
                 ") " + when;
  }
  Judge(c, std::nullopt, "", false, false, out);
}

void Fail(StageOutcome* out, const std::string& verdict, const std::string& sig, const std::string& evidence) {
  out->verdict = verdict;
  out->signature = sig;
  out->evidence = evidence.substr(0, 500);
}

// A number of seconds, given as a JSON number or as a string that becomes one after placeholder
// substitution ("{ready_timeout_s}"), so a suite can let each config choose: a 400B model loads
// in half an hour, a small one in a minute. nullopt when absent; -1 when not a positive number.
std::optional<double> Seconds(const json& v, const std::map<std::string, std::string>& vars) {
  if (v.is_null()) return std::nullopt;
  if (v.is_number()) return v.get<double>() > 0 ? v.get<double>() : -1;
  if (!v.is_string()) return -1;
  std::string s = Substitute(v.get<std::string>(), vars);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && !s.empty() && d > 0 ? d : -1;
}

Clock::duration Secs(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

std::chrono::milliseconds Left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1000),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

StageOutcome Run(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules, StageOutcome& out,
                 const Clock::time_point t0) {
  const int port = FreePort();
  auto vars = StageVars(ctx, port);
  ProcessSpec spec;
  for (auto& a : stage.value("argv", json::array())) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, stage, port, ctx.workdir + "/" + out.stage + ".result.json");
  spec.cwd = ctx.workdir;

  const json ready = stage.value("ready", json::object());
  const std::string ready_path = ready.value("path", "/health");
  auto stage_s = Seconds(stage.value("timeout_s", json()), vars).value_or(3600);
  auto ready_s = Seconds(ready.value("timeout_s", json()), vars).value_or(std::min(stage_s, 1800.0));
  if (stage_s <= 0 || ready_s <= 0) {
    Fail(&out, "crashed", "crashed:invalid_stage", "timeout_s and ready.timeout_s must be positive numbers of seconds");
    return out;
  }
  const auto ready_deadline = t0 + Secs(ready_s);
  const auto stage_deadline = t0 + Secs(std::max(stage_s, ready_s));

  std::string header = "=== stage " + out.stage + " (server on port " + std::to_string(port) + "):";
  for (auto& a : spec.argv) header += " " + a;
  ctx.log->Append(header + "\n");
  auto proc = Process::Start(spec);
  if (!proc.ok()) {
    Fail(&out, "crashed", "crashed:program_not_found", proc.status().message());
    ctx.log->Append("gauntlet: " + out.evidence + "\n");
    return out;
  }
  RunningServer srv(std::move(*proc), ctx, rules);
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  std::string model;
  auto stopped = [&] { return ctx.should_stop && ctx.should_stop(); };
  auto finish = [&](StageOutcome& o) -> StageOutcome {
    ExitInfoProc e = srv.Stop();
    if (!o.exit_code && e.exit_code) o.exit_code = e.exit_code;
    o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // Where NVML exists, wait until the trial's GPUs hold no process before the node takes more work:
    // a server's CUDA context can outlive its process group for a moment (driver teardown).
    std::string why;
    if (auto nvml = Nvml::Open(&why); nvml && !ctx.gpus.empty()) {
      auto until = Clock::now() + std::chrono::seconds(60);
      bool busy = true;
      while (busy && Clock::now() < until) {
        busy = false;
        for (int g : ctx.gpus)
          if (auto s = nvml->State(g); s && !s->pids.empty()) busy = true;
        if (busy) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // NVML has no event for this
      }
      ctx.log->Append(busy ? "gauntlet: GPUs still busy 60 s after the server stopped\n"
                           : "gauntlet: GPUs confirmed free after the server stopped\n");
    }
    ctx.log->Append("=== stage " + o.stage + " ended: " + o.verdict + (o.signature.empty() ? "" : " (" + o.signature + ")") +
                    " after " + std::to_string(static_cast<int>(o.seconds * 1000)) + " ms\n");
    return o;
  };
  auto cancelled = [&]() -> StageOutcome {
    Judge({}, std::nullopt, "", false, true, &out);
    return finish(out);
  };

  // 1. Ready: the ready path answers 200 and /v1/models lists a model. A server that exits meanwhile
  //    is judged at once (WaitExit wakes on its exit), not after the ready timeout.
  {
    http::Client probe(base, "");
    auto delay = std::chrono::milliseconds(20);
    while (true) {
      if (srv.exited()) {
        JudgeDeath(srv, &out, "while_starting");
        return finish(out);
      }
      if (stopped()) return cancelled();
      if (Clock::now() >= ready_deadline) {
        srv.Stop();
        ExitInfoProc hung;
        hung.timed_out = true;
        Classification c = srv.Classify(hung);
        // A log that already explains the hang (one rank's illegal memory access, an NCCL watchdog,
        // an OOM) says more than "not ready": keep it unless it is only the time limit itself.
        const bool only_the_limit =
            c.verdict == "passed" ||
            (c.verdict == "timeout" && (c.signature.empty() || c.signature.rfind("timeout:stage_limit", 0) == 0));
        if (!only_the_limit) {
          out.verdict = c.verdict;
          out.signature = c.signature;
          out.evidence = c.evidence;
        } else {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%g", ready_s);
          Fail(&out, "timeout", "timeout:server_not_ready",
               "the server was not ready (" + ready_path + " 200 and a model in /v1/models) after " + buf + " s");
        }
        return finish(out);
      }
      // Short per-probe limits: a server that accepts but never answers must not hold the loop past
      // its deadline or keep a death from being noticed.
      const auto probe_limit = std::min<std::chrono::milliseconds>(std::chrono::seconds(5), Left(ready_deadline));
      auto h = probe.Send("GET", ready_path, "", "application/json", probe_limit);
      if (h.ok() && h->status == 200) {
        auto m = probe.Send("GET", "/v1/models", "", "application/json", probe_limit);
        if (m.ok() && m->status == 200) {
          json j = json::parse(m->body, nullptr, false);
          if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
              j["data"][0].is_object() && j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
            model = j["data"][0]["id"];
            break;
          }
        }
      }
      // Nothing announces readiness but polling; the wait ends early if the process exits.
      const auto until_deadline = ready_deadline - Clock::now();
      srv.WaitExit(std::min<Clock::duration>(delay, std::max<Clock::duration>(until_deadline, Clock::duration::zero())));
      delay = std::min(delay * 2, std::chrono::milliseconds(500));
    }
    out.metrics["ready_s"] = {{"value", std::chrono::duration<double>(Clock::now() - t0).count()}, {"unit", "s"}};
    ctx.log->Append("gauntlet: server ready (model " + model + ")\n");
  }

  // 2. Smoke prompts, each checked for NaN logprobs, garbage and its expected answer.
  const bool chat_default = stage.value("chat", false);
  int i = 0;
  for (auto& sm : stage.value("smoke", json::array())) {
    if (stopped()) return cancelled();
    const bool chat = sm.value("chat", chat_default);
    json body = {{"model", model}, {"max_tokens", sm.value("max_tokens", 16)}, {"temperature", 0}};
    if (chat) {
      body["messages"] = json::array({{{"role", "user"}, {"content", sm.value("prompt", "")}}});
      body["logprobs"] = true;  // NaN logprobs are the cheapest sign of a broken kernel
    } else {
      body["prompt"] = sm.value("prompt", "");
      body["logprobs"] = 1;
    }
    http::Client c(base, "");
    auto r = c.Send("POST", chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), "application/json",
                    Left(stage_deadline));
    const std::string f = "smoke[" + std::to_string(i++) + "]" + (chat ? " (chat)" : "");
    if (!r.ok() || r->status != 200) {
      // A server that drops the request while dying is judged by its traceback, not by the broken
      // connection: give it a moment to exit (woken at once when it does).
      if (srv.WaitExit(std::chrono::seconds(r.ok() ? 1 : 3))) {
        JudgeDeath(srv, &out, "on_request");
        return finish(out);
      }
      if (stopped()) return cancelled();
      if (Clock::now() >= stage_deadline) {
        Fail(&out, "timeout", "timeout:" + out.stage, f + ": no answer before the stage timeout");
        return finish(out);
      }
      Fail(&out, "crashed", "crashed:smoke_http_" + (r.ok() ? std::to_string(r->status) : std::string("error")),
           f + ": " + (r.ok() ? r->body : r.status().message()));
      return finish(out);
    }
    // Python servers write NaN as a bare token, which is not JSON: look for it before parsing.
    if (JsonTextHasNan(r->body)) {
      Fail(&out, "wrong_output", "wrong_output:garbage:nan_logprobs", f + ": NaN in the answer: " + r->body.substr(0, 200));
      return finish(out);
    }
    json j = json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
        !j["choices"][0].is_object()) {
      Fail(&out, "wrong_output", "wrong_output:bad_response", f + ": not an OpenAI completion: " + r->body.substr(0, 200));
      return finish(out);
    }
    const json& ch = j["choices"][0];
    std::string text;
    if (ch.contains("text") && ch["text"].is_string()) text = ch["text"];
    else if (ch.contains("message") && ch["message"].is_object() && ch["message"].contains("content") &&
             ch["message"]["content"].is_string())
      text = ch["message"]["content"];
    if (ch.contains("logprobs") && HasNanLogprobs(ch["logprobs"])) {
      Fail(&out, "wrong_output", "wrong_output:garbage:nan_logprobs", f + ": NaN in logprobs");
      return finish(out);
    }
    ctx.log->Append("gauntlet: " + f + " answered: " + text.substr(0, 200) + "\n");
    if (auto g = FindGarbage(text)) {
      Fail(&out, "wrong_output", GarbageSignature(*g), f + ": " + g->reason + ": \"" + text.substr(0, 120) + "\"");
      return finish(out);
    }
    if (sm.contains("expect") && text.find(sm["expect"].get<std::string>()) == std::string::npos) {
      Fail(&out, "wrong_output", "wrong_output:smoke_expect", f + ": expected \"" + sm["expect"].get<std::string>() +
                                                                   "\", got \"" + text.substr(0, 120) + "\"");
      return finish(out);
    }
    if (sm.contains("regex") && !std::regex_search(text, std::regex(sm["regex"].get<std::string>()))) {
      Fail(&out, "wrong_output", "wrong_output:smoke_regex", f + ": no match for /" + sm["regex"].get<std::string>() +
                                                                  "/ in \"" + text.substr(0, 120) + "\"");
      return finish(out);
    }
  }

  // 3. Benchmark each concurrency level with streamed requests.
  if (stage.contains("bench") && stage["bench"].is_object()) {
    const json& b = stage["bench"];
    json levels = b.value("concurrency", json::array({1}));
    if (!levels.is_array()) levels = json::array({levels});
    for (auto& lv : levels) {
      if (stopped()) return cancelled();
      BenchSpec bs;
      bs.base = base;
      bs.model = model;
      bs.concurrency = std::max(1, lv.get<int>());
      bs.requests = b.value("requests", std::max(16, bs.concurrency * 2));
      bs.input_tokens = b.value("input_tokens", 128);
      bs.output_tokens = b.value("output_tokens", 64);
      bs.chat = b.value("chat", chat_default);
      bs.deadline = stage_deadline;
      bs.should_stop = [&] { return stopped() || srv.exited(); };
      BenchResult br = RunBench(bs);
      // Named, not iterated as a temporary: items() of a temporary dangles (range-for keeps only the
      // last temporary alive before C++23), which once looped forever here.
      const json metrics = BenchMetrics(br);
      for (auto& [k, v] : metrics.items()) out.metrics[k] = v;
      ctx.log->Append("gauntlet: bench c=" + std::to_string(bs.concurrency) + ": " + std::to_string(br.ok) + " ok, " +
                      std::to_string(br.errors) + " errors, " + std::to_string(static_cast<int>(br.output_tok_s)) +
                      " output tok/s, TTFT p50 " + std::to_string(br.ttft_ms_p50) + " ms\n");
      if (br.errors > 0 && srv.WaitExit(std::chrono::seconds(1))) {
        JudgeDeath(srv, &out, "during_bench");
        return finish(out);
      }
      if (stopped()) return cancelled();
      if (!br.garbage_key.empty()) {  // every benchmark answer was checked, not only the smoke prompts
        Fail(&out, "wrong_output", GarbageSignature({br.garbage_key, br.garbage_reason}),
             "bench output: " + br.garbage_reason + ": \"" + br.garbage_sample.substr(0, 120) + "\"");
        return finish(out);
      }
      if (Clock::now() >= stage_deadline) {
        Fail(&out, "timeout", "timeout:" + out.stage, "the benchmark outlived the stage timeout");
        return finish(out);
      }
      if (br.ok == 0) {
        Fail(&out, "crashed", "crashed:bench_all_failed", br.first_error);
        return finish(out);
      }
    }
  }
  out.verdict = "passed";
  return finish(out);
}

}  // namespace

StageOutcome RunServerStage(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules) {
  StageOutcome out;
  const auto t0 = Clock::now();
  try {
    out.stage = stage.value("name", "serve");
    return Run(ctx, stage, rules, out, t0);
  } catch (const std::exception& e) {
    // A malformed stage spec (a string where a number belongs): the suite's fault, reported as such;
    // the server, if it started, was stopped by RunningServer's destructor during unwinding.
    Fail(&out, "crashed", "crashed:invalid_stage", std::string("invalid server stage: ") + e.what());
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (ctx.log) ctx.log->Append("gauntlet: " + out.evidence + "\n");
    return out;
  }
}

}  // namespace gauntlet
