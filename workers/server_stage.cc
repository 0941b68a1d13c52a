#include "workers/server_stage.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <regex>
#include <thread>

#include "api/http_client.h"
#include "daemon/suite.h"
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
      exit_ = proc_->Run(
          Clock::time_point::max(),
          [&](std::string_view chunk) {
            ctx.log->Append(chunk);
            std::lock_guard lock(mu_);
            classifier_.Feed(chunk);
          },
          [this] { return stop_.load(); }, ctx.kill_grace, std::chrono::milliseconds(50));
      exited_ = true;
    });
  }
  ~RunningServer() { Stop(); }
  bool exited() const { return exited_; }
  // Stops the whole group (SIGTERM, grace, SIGKILL) and waits for the pump.
  ExitInfoProc Stop() {
    stop_ = true;
    if (pump_.joinable()) pump_.join();
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
  const ExitInfoProc& exit() const { return exit_; }

 private:
  std::unique_ptr<Process> proc_;
  std::mutex mu_;
  Classifier classifier_;
  std::thread pump_;
  std::atomic<bool> stop_{false}, exited_{false};
  ExitInfoProc exit_;
};

// Judges a server that died on its own (while loading, or on a request).
void JudgeDeath(RunningServer& srv, StageOutcome* out, const std::string& when) {
  ExitInfoProc e = srv.Stop();
  out->exit_code = e.exit_code;
  if (e.signal) out->signal = SignalName(*e.signal);
  Classification c = srv.Classify(e);
  if (c.verdict == "passed") {  // exit 0 without evidence: still a server that should not have exited
    c.verdict = "crashed";
    c.signature = "crashed:server_exited" + when;
    c.evidence = "the server exited (" + (e.exit_code ? "code " + std::to_string(*e.exit_code) : "signal") + ") " + when;
  }
  Judge(c, std::nullopt, "", false, false, out);
}

bool Fail(StageOutcome* out, const std::string& verdict, const std::string& sig, const std::string& evidence) {
  out->verdict = verdict;
  out->signature = sig;
  out->evidence = evidence.substr(0, 500);
  return false;
}

}  // namespace

StageOutcome RunServerStage(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules) {
  StageOutcome out;
  out.stage = stage.value("name", "serve");
  const auto t0 = Clock::now();
  const int port = FreePort();
  auto vars = StageVars(ctx, port);
  ProcessSpec spec;
  for (auto& a : stage.value("argv", json::array())) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx, stage, port, ctx.workdir + "/" + out.stage + ".result.json");
  spec.cwd = ctx.workdir;
  std::string header = "=== stage " + out.stage + " (server on port " + std::to_string(port) + "):";
  for (auto& a : spec.argv) header += " " + a;
  ctx.log->Append(header + "\n");
  auto proc = Process::Start(spec);
  if (!proc.ok()) {
    Fail(&out, "crashed", "crashed:program_not_found", proc.status().message());
    return out;
  }
  RunningServer srv(std::move(*proc), ctx, rules);
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  const json ready = stage.value("ready", json::object());
  const std::string ready_path = ready.value("path", "/health");
  const auto ready_deadline = t0 + std::chrono::seconds(ready.value("timeout_s", stage.value("timeout_s", 1800)));
  const auto stage_deadline = t0 + std::chrono::seconds(stage.value("timeout_s", 3600));
  std::string model;
  auto finish = [&](StageOutcome& o) {
    ExitInfoProc e = srv.Stop();
    if (!o.exit_code && e.exit_code) o.exit_code = e.exit_code;
    o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // Where NVML exists, wait until the trial's GPUs hold no process before the node takes more work.
    std::string why;
    if (auto nvml = Nvml::Open(&why); nvml && !ctx.gpus.empty()) {
      auto until = Clock::now() + std::chrono::seconds(60);
      bool busy = true;
      while (busy && Clock::now() < until) {
        busy = false;
        for (int g : ctx.gpus)
          if (auto s = nvml->State(g); s && !s->pids.empty()) busy = true;
        if (busy) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      ctx.log->Append(busy ? "gauntlet: GPUs still busy 60 s after the server stopped\n"
                           : "gauntlet: GPUs confirmed free after the server stopped\n");
    }
    ctx.log->Append("=== stage " + o.stage + " ended: " + o.verdict + (o.signature.empty() ? "" : " (" + o.signature + ")") +
                    "\n");
    return o;
  };

  // 1. Ready: the ready path answers 200 and /v1/models lists a model. A server that exits meanwhile
  //    is judged at once, not after the ready timeout.
  {
    http::Client probe(base, "");
    auto delay = std::chrono::milliseconds(50);
    while (true) {
      if (srv.exited()) {
        JudgeDeath(srv, &out, "while starting");
        return finish(out);
      }
      if (ctx.should_stop && ctx.should_stop()) {
        Judge({}, std::nullopt, "", false, true, &out);
        return finish(out);
      }
      if (Clock::now() > ready_deadline) {
        srv.Stop();
        ExitInfoProc hung;
        hung.timed_out = true;
        Classification c = srv.Classify(hung);
        // A log that already explains the hang (one rank's illegal memory access, an NCCL watchdog,
        // an OOM) says more than "not ready": keep it unless it is only the time limit itself.
        if (c.verdict != "passed" && c.signature.rfind("timeout:stage_limit", 0) != 0) {
          out.verdict = c.verdict;
          out.signature = c.signature;
          out.evidence = c.evidence;
        } else Fail(&out, "timeout", "timeout:server_not_ready", "the server was not ready after " +
                  std::to_string(ready.value("timeout_s", stage.value("timeout_s", 1800))) + " s");
        return finish(out);
      }
      auto h = probe.Send("GET", ready_path, "", "application/json", std::chrono::seconds(5));
      if (h.ok() && h->status == 200) {
        auto m = probe.Send("GET", "/v1/models", "", "application/json", std::chrono::seconds(5));
        if (m.ok() && m->status == 200) {
          json j = json::parse(m->body, nullptr, false);
          if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty()) {
            model = j["data"][0].value("id", "");
            break;
          }
        }
      }
      std::this_thread::sleep_for(delay);  // a server's start is not observable any other way
      delay = std::min(delay * 2, std::chrono::milliseconds(500));
    }
    out.metrics["ready_s"] = {{"value", std::chrono::duration<double>(Clock::now() - t0).count()}, {"unit", "s"}};
    ctx.log->Append("gauntlet: server ready (model " + model + ")\n");
  }

  // 2. Smoke prompts, each checked for garbage and for its expected answer.
  const bool chat_default = stage.value("chat", false);
  int i = 0;
  for (auto& sm : stage.value("smoke", json::array())) {
    const bool chat = sm.value("chat", chat_default);
    json body = {{"model", model}, {"max_tokens", sm.value("max_tokens", 16)}, {"temperature", 0}};
    if (chat) body["messages"] = json::array({{{"role", "user"}, {"content", sm.value("prompt", "")}}});
    else {
      body["prompt"] = sm.value("prompt", "");
      body["logprobs"] = 1;
    }
    http::Client c(base, "");
    auto r = c.Send("POST", chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), "application/json",
                    std::chrono::seconds(std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(
                                                                  stage_deadline - Clock::now()).count())));
    const std::string f = "smoke[" + std::to_string(i++) + "]";
    if (!r.ok() || r->status != 200) {
      // Give a dying server a moment to exit, so its traceback, not the refused request, is the verdict.
      for (int k = 0; k < 20 && !srv.exited(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (srv.exited()) {
        JudgeDeath(srv, &out, "on a request");
        return finish(out);
      }
      Fail(&out, "crashed", "crashed:smoke_http_" + (r.ok() ? std::to_string(r->status) : std::string("error")),
           f + ": " + (r.ok() ? r->body : r.status().message()));
      return finish(out);
    }
    json j = json::parse(r->body, nullptr, false);
    std::string text;
    if (j.is_object() && j.contains("choices") && !j["choices"].empty()) {
      const json& ch = j["choices"][0];
      if (ch.contains("text") && ch["text"].is_string()) text = ch["text"];
      else if (ch.contains("message") && ch["message"].contains("content") && ch["message"]["content"].is_string())
        text = ch["message"]["content"];
      if (ch.contains("logprobs") && HasNanLogprobs(ch["logprobs"])) {
        Fail(&out, "wrong_output", "wrong_output:garbage:nan_logprobs", f + ": NaN in logprobs");
        return finish(out);
      }
    } else if (JsonTextHasNan(r->body)) {
      Fail(&out, "wrong_output", "wrong_output:garbage:nan_logprobs", f + ": NaN in the answer");
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
      BenchSpec bs;
      bs.base = base;
      bs.model = model;
      bs.concurrency = lv.get<int>();
      bs.requests = b.value("requests", std::max(16, bs.concurrency * 2));
      bs.input_tokens = b.value("input_tokens", 128);
      bs.output_tokens = b.value("output_tokens", 64);
      bs.chat = b.value("chat", chat_default);
      bs.should_stop = ctx.should_stop;
      BenchResult br = RunBench(bs);
      for (auto& [k, v] : BenchMetrics(br).items()) out.metrics[k] = v;
      ctx.log->Append("gauntlet: bench c=" + std::to_string(bs.concurrency) + ": " + std::to_string(br.ok) + " ok, " +
                      std::to_string(br.errors) + " errors, " + std::to_string(static_cast<int>(br.output_tok_s)) +
                      " output tok/s\n");
      if (srv.exited()) {
        JudgeDeath(srv, &out, "during the benchmark");
        return finish(out);
      }
      for (auto& smp : br.samples)
        if (auto g = FindGarbage(smp)) {
          Fail(&out, "wrong_output", GarbageSignature(*g), "bench output: " + g->reason + ": \"" + smp.substr(0, 120) + "\"");
          return finish(out);
        }
      if (br.ok == 0) {
        Fail(&out, "crashed", "crashed:bench_all_failed", br.first_error);
        return finish(out);
      }
      if (Clock::now() > stage_deadline) {
        Fail(&out, "timeout", "timeout:" + out.stage, "the benchmark outlived the stage timeout");
        return finish(out);
      }
    }
  }
  out.verdict = "passed";
  return finish(out);
}

}  // namespace gauntlet
