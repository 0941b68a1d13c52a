#include "workers/server_stage.h"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/user_regex.h"
#include "core/suite.h"
#include "net/http_client.h"
#include "classifier/garbage.h"
#include "core/signal_names.h"
#include "workers/command_stage.h"
#include "workers/differential.h"
#include "workers/nvml.h"
#include "openai/openai_bench.h"
#include "workers/running_server.h"

namespace gauntlet::worker {
using openai::BenchMetrics;
using openai::BenchResult;
using openai::BenchSpec;
using openai::RunBench;
using proc::ExitInfoProc;
using proc::ProcessSpec;
using classifier::Classification;
using classifier::FindGarbage;
using classifier::GarbageSignature;
using classifier::HasNanLogprobs;
using classifier::JsonTextHasNan;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Judges a server that died on its own (while loading, on a request, during the benchmark).
// `when` is a signature-safe key ("while_starting").
void JudgeDeath(RunningServer& srv, StageOutcome* out, const std::string& when) {
  ExitInfoProc e = srv.Stop();
  out->exit_code = e.exit_code;
  if (e.signal) out->signal = SignalName(*e.signal);
  Classification c = srv.Classify(e);
  if (c.verdict == Verdict::kPassed) {  // exit 0 without evidence: still a server that should not have exited
    c.verdict = Verdict::kCrashed;
    c.signature = "crashed:server_exited_" + when;
    c.evidence = "the server exited (" + (e.exit_code ? "code " + std::to_string(*e.exit_code) : std::string("signal")) +
                 ") " + when;
    c.basis = Basis::kWorker;
  }
  Judge(c, std::nullopt, "", false, false, out);
}

void Fail(StageOutcome* out, Verdict verdict, const std::string& sig, const std::string& evidence) {
  out->verdict = verdict;
  out->signature = sig;
  out->evidence = evidence.substr(0, 500);
  out->basis = Basis::kWorker;
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

// What is left of `deadline` on `clock`, as a client timeout: a second at least.
std::chrono::milliseconds Left(WorkerClock& clock, Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1000),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now()));
}

// One server stage, step by step: launch, ready, smoke, bench, finish. Each step returns true when
// the stage goes on, false when it has settled the outcome (`out` then says how); Finish stops the
// server whatever happened, so every path after a successful Launch ends there.
class ServerStageRun {
 public:
  ServerStageRun(const TrialContext& ctx, const json& stage, StageOutcome& out, Clock::time_point t0)
      : ctx_(ctx), stage_(stage), out_(out), t0_(t0), chat_default_(stage.value("chat", false)),
        diff_(ctx, stage.value("name", "serve")) {}

  // false: the stage is settled with no server started (a bad timeout, a missing program).
  bool Launch(const std::vector<SignatureRule>& rules);
  // 1. Ready: the ready path answers 200 and /v1/models lists a model. A server that exits meanwhile
  //    is judged at once (WaitExit wakes on its exit), not after the ready timeout.
  bool WaitReady();
  // 2. Smoke prompts, each checked for NaN logprobs, garbage and its expected answer.
  bool Smoke();
  // 3. Benchmark each concurrency level with streamed requests.
  bool Bench();
  StageOutcome Finish();

 private:
  bool Stopped() const { return ctx_.should_stop && ctx_.should_stop(); }
  bool Cancel() {
    Judge({}, std::nullopt, "", false, true, &out_);
    return false;
  }
  bool ProbeReady(net::Client& probe);
  void NotReady();
  bool SmokeOne(const json& sm, int index);
  bool SmokeRequestFailed(const Result<net::ClientResponse>& r, const std::string& what);
  bool CheckSmokeAnswer(const json& sm, const std::string& what, const std::string& body, int index);
  bool BenchLevel(const json& b, int concurrency);
  void WaitGpusFree();

  const TrialContext& ctx_;
  const json& stage_;
  StageOutcome& out_;
  const Clock::time_point t0_;
  const bool chat_default_;
  std::string base_, model_, ready_path_;
  std::string last_probe_;  // what the latest readiness probe saw, for a server never ready
  double ready_s_ = 0;
  Clock::time_point ready_deadline_, stage_deadline_, ready_at_;
  std::unique_ptr<RunningServer> srv_;
  ProcessSpec spec_;  // as started: its limits name the verdict of a server the kernel killed
  DifferentialCheck diff_;
};

bool ServerStageRun::Launch(const std::vector<SignatureRule>& rules) {
  const int port = FreePort();
  auto vars = StageVars(ctx_, port);
  ProcessSpec& spec = spec_;
  for (auto& a : stage_.value("argv", json::array())) spec.argv.push_back(Substitute(a.get<std::string>(), vars));
  spec.env = StageEnv(ctx_, stage_, port, ctx_.workdir + "/" + out_.stage + ".result.json");
  spec.cwd = ctx_.workdir;
  SetStageLimits(ctx_, stage_, &spec);
  RunAsTrialUser(ctx_, &spec);

  const json ready = stage_.value("ready", json::object());
  ready_path_ = ready.value("path", "/health");
  auto stage_s = Seconds(stage_.value("timeout_s", json()), vars).value_or(3600);
  ready_s_ = Seconds(ready.value("timeout_s", json()), vars).value_or(std::min(stage_s, 1800.0));
  if (stage_s <= 0 || ready_s_ <= 0) {
    Fail(&out_, Verdict::kCrashed, "crashed:invalid_stage", "timeout_s and ready.timeout_s must be positive numbers of seconds");
    return false;
  }
  ready_deadline_ = t0_ + Secs(ready_s_);
  stage_deadline_ = t0_ + Secs(std::max(stage_s, ready_s_));

  std::string header = "=== stage " + out_.stage + " (server on port " + std::to_string(port) + "):";
  for (auto& a : spec.argv) header += " " + a;
  ctx_.log->Append(header + "\n");
  auto proc = ctx_.processes->Start(spec);
  if (!proc.ok()) {
    SettleNotStarted(ctx_, proc.status(), spec.argv.empty() ? "" : spec.argv[0], &out_);
    return false;
  }
  srv_ = std::make_unique<RunningServer>(std::move(*proc), ctx_, rules);
  base_ = "http://127.0.0.1:" + std::to_string(port);
  return true;
}

bool ServerStageRun::WaitReady() {
  net::Client probe(base_, "");
  auto delay = std::chrono::milliseconds(20);
  while (true) {
    if (srv_->exited()) {
      JudgeDeath(*srv_, &out_, "while_starting");
      return false;
    }
    if (Stopped()) return Cancel();
    if (ctx_.clock->Now() >= ready_deadline_) {
      NotReady();
      return false;
    }
    if (ProbeReady(probe)) break;
    // Nothing announces readiness but polling; the wait ends early if the process exits.
    const auto until_deadline = ready_deadline_ - ctx_.clock->Now();
    srv_->WaitExit(std::min<Clock::duration>(delay, std::max<Clock::duration>(until_deadline, Clock::duration::zero())));
    delay = std::min(delay * 2, std::chrono::milliseconds(500));
  }
  ready_at_ = ctx_.clock->Now();
  out_.metrics["ready_s"] = {{"value", std::chrono::duration<double>(ready_at_ - t0_).count()}, {"unit", "s"}};
  ctx_.log->Append("gauntlet: server ready (model " + model_ + ")\n");
  return true;
}

// One probe: the ready path, then the model list; true (with model_ set) when both answer.
bool ServerStageRun::ProbeReady(net::Client& probe) {
  // Short per-probe limits: a server that accepts but never answers must not hold the loop past
  // its deadline or keep a death from being noticed.
  const auto probe_limit =
      std::min<std::chrono::milliseconds>(std::chrono::seconds(5), Left(*ctx_.clock, ready_deadline_));
  // What each probe saw is kept: a server that never became ready is judged with the last answer.
  auto saw = [&](const std::string& path, const Result<net::ClientResponse>& r, const std::string& what) {
    last_probe_ = "GET " + path + ": " +
                  (!r.ok() ? r.status().message()
                           : std::to_string(r->status) + (what.empty() ? "" : " " + what) +
                                 (r->body.empty() ? "" : " (" + r->body.substr(0, 200) + ")"));
    return false;
  };
  auto h = probe.Send("GET", ready_path_, "", "application/json", probe_limit);
  if (!h.ok() || h->status != 200) return saw(ready_path_, h, "");
  auto m = probe.Send("GET", "/v1/models", "", "application/json", probe_limit);
  if (!m.ok() || m->status != 200) return saw("/v1/models", m, "");
  json j = json::parse(m->body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() && j["data"][0].is_object() &&
      j["data"][0].contains("id") && j["data"][0]["id"].is_string()) {
    model_ = j["data"][0]["id"];
    return true;
  }
  return saw("/v1/models", m, "but no model listed");
}

void ServerStageRun::NotReady() {
  srv_->Stop();
  ExitInfoProc hung;
  hung.timed_out = true;
  Classification c = srv_->Classify(hung);
  // A log that already explains the hang (one rank's illegal memory access, an NCCL watchdog, an
  // OOM) says more than "not ready": keep it unless it is only the time limit itself.
  const bool only_the_limit =
      c.verdict == Verdict::kPassed ||
      (c.verdict == Verdict::kTimeout && (c.signature.empty() || c.signature.rfind("timeout:stage_limit", 0) == 0));
  if (!only_the_limit) {
    out_.verdict = c.verdict;
    out_.signature = c.signature;
    out_.evidence = c.evidence;
    out_.basis = c.basis;
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", ready_s_);
  Fail(&out_, Verdict::kTimeout, "timeout:server_not_ready",
       "the server was not ready (" + ready_path_ + " 200 and a model in /v1/models) after " + buf + " s" +
           (last_probe_.empty() ? "" : "; the last probe: " + last_probe_));
  ctx_.log->Append("gauntlet: " + out_.evidence + "\n");
}

bool ServerStageRun::Smoke() {
  if (diff_.active()) ctx_.log->Append(diff_.Plan() + "\n");
  int i = 0;
  bool ok = true;
  for (auto& sm : SmokePrompts(stage_)) {
    if (Stopped()) {
      ok = Cancel();
      break;
    }
    if (!SmokeOne(sm, i++)) {
      ok = false;
      break;
    }
  }
  out_.summary = diff_.Summary();
  return ok;
}

bool ServerStageRun::SmokeOne(const json& sm, int index) {
  const bool chat = sm.value("chat", chat_default_);
  json body = {{"model", model_}, {"max_tokens", sm.value("max_tokens", 16)}, {"temperature", 0}};
  if (chat) {
    body["messages"] = json::array({{{"role", "user"}, {"content", sm.value("prompt", "")}}});
    body["logprobs"] = true;  // NaN logprobs are the cheapest sign of a broken kernel
    if (diff_.active()) body["top_logprobs"] = diff_.top_k();
  } else {
    body["prompt"] = sm.value("prompt", "");
    body["logprobs"] = diff_.active() ? diff_.top_k() : 1;
  }
  net::Client c(base_, "");
  auto r = c.Send("POST", chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), "application/json",
                  Left(*ctx_.clock, stage_deadline_));
  const std::string what = "smoke[" + std::to_string(index) + "]" + (chat ? " (chat)" : "");
  if (!r.ok() || r->status != 200) return SmokeRequestFailed(r, what);
  return CheckSmokeAnswer(sm, what, r->body, index);
}

bool ServerStageRun::SmokeRequestFailed(const Result<net::ClientResponse>& r, const std::string& what) {
  // A server that drops the request while dying is judged by its traceback, not by the broken
  // connection: give it a moment to exit (woken at once when it does).
  if (srv_->WaitExit(std::chrono::seconds(r.ok() ? 1 : 3))) {
    JudgeDeath(*srv_, &out_, "on_request");
    return false;
  }
  if (Stopped()) return Cancel();
  if (ctx_.clock->Now() >= stage_deadline_) {
    Fail(&out_, Verdict::kTimeout, "timeout:" + out_.stage, what + ": no answer before the stage timeout");
    return false;
  }
  Fail(&out_, Verdict::kCrashed, "crashed:smoke_http_" + (r.ok() ? std::to_string(r->status) : std::string("error")),
       what + ": " + (r.ok() ? r->body : r.status().message()));
  return false;
}

// The suite's validator compiled the pattern already; one that does not compile (a definition that
// bypassed it) fails the check rather than passing it.
bool SmokeRegexMatches(const json& pattern, const std::string& text) {
  if (!pattern.is_string()) return false;
  auto re = UserRegex::Compile(pattern.get<std::string>());
  return re.ok() && re->Search(text);
}

bool ServerStageRun::CheckSmokeAnswer(const json& sm, const std::string& f, const std::string& body, int index) {
  // Python servers write NaN as a bare token, which is not JSON: look for it before parsing.
  if (JsonTextHasNan(body)) {
    Fail(&out_, Verdict::kWrongOutput, "wrong_output:garbage:nan_logprobs", f + ": NaN in the answer: " + body.substr(0, 200));
    return false;
  }
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
      !j["choices"][0].is_object()) {
    Fail(&out_, Verdict::kWrongOutput, "wrong_output:bad_response", f + ": not an OpenAI completion: " + body.substr(0, 200));
    return false;
  }
  const json& ch = j["choices"][0];
  std::string text;
  if (ch.contains("text") && ch["text"].is_string()) text = ch["text"];
  else if (ch.contains("message") && ch["message"].is_object() && ch["message"].contains("content") &&
           ch["message"]["content"].is_string())
    text = ch["message"]["content"];
  if (ch.contains("logprobs") && HasNanLogprobs(ch["logprobs"])) {
    Fail(&out_, Verdict::kWrongOutput, "wrong_output:garbage:nan_logprobs", f + ": NaN in logprobs");
    return false;
  }
  if (index == 0)  // the server's first real answer: the part of bring-up that is not loading
    out_.metrics["first_smoke_s"] = {{"value", std::chrono::duration<double>(ctx_.clock->Now() - ready_at_).count()},
                                     {"unit", "s"}};
  ctx_.log->Append("gauntlet: " + f + " answered: " + text.substr(0, 200) + "\n");
  if (auto g = FindGarbage(text)) {
    Fail(&out_, Verdict::kWrongOutput, GarbageSignature(*g), f + ": " + g->reason + ": \"" + text.substr(0, 120) + "\"");
    return false;
  }
  if (sm.contains("expect") && text.find(sm["expect"].get<std::string>()) == std::string::npos) {
    Fail(&out_, Verdict::kWrongOutput, "wrong_output:smoke_expect",
         f + ": expected \"" + sm["expect"].get<std::string>() + "\", got \"" + text.substr(0, 120) + "\"");
    return false;
  }
  if (sm.contains("regex") && !SmokeRegexMatches(sm["regex"], text)) {
    Fail(&out_, Verdict::kWrongOutput, "wrong_output:smoke_regex",
         f + ": no match for /" + sm["regex"].get<std::string>() + "/ in \"" + text.substr(0, 120) + "\"");
    return false;
  }
  // Last: an answer that is garbage or misses its expectation says so plainly; one that looks fine
  // may still be a wrong answer, which only the reference config's answer can show.
  if (auto d = diff_.Check(index, sm.value("prompt", ""), text, ch.value("logprobs", json()))) {
    out_.verdict = Verdict::kWrongOutput;
    out_.signature = d->signature;
    out_.evidence = d->evidence;
    out_.basis = Basis::kWorker;
    ctx_.log->Append("gauntlet: " + d->evidence + "\n");
    return false;
  }
  return true;
}

bool ServerStageRun::Bench() {
  if (!stage_.contains("bench") || !stage_["bench"].is_object()) return true;
  const json& b = stage_["bench"];
  json levels = b.value("concurrency", json::array({1}));
  if (!levels.is_array()) levels = json::array({levels});
  for (auto& lv : levels) {
    if (Stopped()) return Cancel();
    if (!BenchLevel(b, lv.get<int>())) return false;
  }
  return true;
}

bool ServerStageRun::BenchLevel(const json& b, int concurrency) {
  BenchSpec bs;
  bs.base = base_;
  bs.model = model_;
  bs.concurrency = std::max(1, concurrency);
  bs.requests = b.value("requests", std::max(16, bs.concurrency * 2));
  bs.input_tokens = b.value("input_tokens", 128);
  bs.output_tokens = b.value("output_tokens", 64);
  bs.chat = b.value("chat", chat_default_);
  bs.deadline = stage_deadline_;
  bs.should_stop = [&] { return Stopped() || srv_->exited(); };
  BenchResult br = RunBench(bs);
  // Named, not iterated as a temporary: items() of a temporary dangles (range-for keeps only the
  // last temporary alive before C++23), which once looped forever here.
  const json metrics = BenchMetrics(br);
  for (auto& [k, v] : metrics.items()) out_.metrics[k] = v;
  ctx_.log->Append("gauntlet: bench c=" + std::to_string(bs.concurrency) + ": " + std::to_string(br.ok) + " ok, " +
                   std::to_string(br.errors) + " errors, " + std::to_string(static_cast<int>(br.output_tok_s)) +
                   " output tok/s, TTFT p50 " + std::to_string(br.ttft_ms_p50) + " ms\n");
  if (br.errors > 0 && srv_->WaitExit(std::chrono::seconds(1))) {
    JudgeDeath(*srv_, &out_, "during_bench");
    return false;
  }
  if (Stopped()) return Cancel();
  if (!br.garbage_key.empty()) {  // every benchmark answer was checked, not only the smoke prompts
    Fail(&out_, Verdict::kWrongOutput, GarbageSignature({br.garbage_key, br.garbage_reason}),
         "bench output: " + br.garbage_reason + ": \"" + br.garbage_sample.substr(0, 120) + "\"");
    return false;
  }
  if (ctx_.clock->Now() >= stage_deadline_) {
    Fail(&out_, Verdict::kTimeout, "timeout:" + out_.stage, "the benchmark outlived the stage timeout");
    return false;
  }
  if (br.ok == 0) {
    Fail(&out_, Verdict::kCrashed, "crashed:bench_all_failed", br.first_error);
    return false;
  }
  return true;
}

StageOutcome ServerStageRun::Finish() {
  ExitInfoProc e = srv_->Stop();
  if (!out_.exit_code && e.exit_code) out_.exit_code = e.exit_code;
  // A server that died on its own (not one we stopped) is judged by its cgroup's memory.events too,
  // as a command stage is: the kernel's SIGKILL at memory.max is oom naming the limit, not a crash.
  if (out_.verdict != Verdict::kPassed && out_.verdict != Verdict::kCancelled) JudgeLimits(e, spec_, &out_);
  NoteUnenforcedLimits(ctx_, stage_, e, &out_);
  out_.seconds = std::chrono::duration<double>(ctx_.clock->Now() - t0_).count();
  WaitGpusFree();
  ctx_.log->Append("=== stage " + out_.stage + " ended: " + std::string(Name(out_.verdict)) +
                   (out_.signature.empty() ? "" : " (" + out_.signature + ")") + " after " +
                   std::to_string(static_cast<int>(out_.seconds * 1000)) + " ms\n");
  return out_;
}

// Where NVML exists, waits until the trial's GPUs hold no process before the node takes more work:
// a server's CUDA context can outlive its process group for a moment (driver teardown).
void ServerStageRun::WaitGpusFree() {
  std::string why;
  auto nvml = Nvml::Open(&why);
  if (!nvml || ctx_.gpus.empty()) return;
  auto until = ctx_.clock->Now() + std::chrono::seconds(60);
  bool busy = true;
  while (busy && ctx_.clock->Now() < until) {
    busy = false;
    for (int g : ctx_.gpus)
      if (auto s = nvml->State(g); s && !s->pids.empty()) busy = true;
    if (busy) ctx_.clock->SleepFor(std::chrono::milliseconds(200));  // NVML has no event for this
  }
  ctx_.log->Append(busy ? "gauntlet: GPUs still busy 60 s after the server stopped\n"
                        : "gauntlet: GPUs confirmed free after the server stopped\n");
}

StageOutcome Run(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules, StageOutcome& out,
                 const Clock::time_point t0) {
  ServerStageRun run(ctx, stage, out, t0);
  if (!run.Launch(rules)) return out;
  if (run.WaitReady() && run.Smoke() && run.Bench()) out.verdict = Verdict::kPassed;
  return run.Finish();
}

}  // namespace

StageOutcome RunServerStage(const TrialContext& ctx, const json& stage, const std::vector<SignatureRule>& rules) {
  StageOutcome out;
  const auto t0 = ctx.clock->Now();
  try {
    out.stage = stage.value("name", "serve");
    return Run(ctx, stage, rules, out, t0);
  } catch (const std::exception& e) {
    // A malformed stage spec (a string where a number belongs): the suite's fault, reported as such;
    // the server, if it started, was stopped by RunningServer's destructor during unwinding.
    Fail(&out, Verdict::kCrashed, "crashed:invalid_stage", std::string("invalid server stage: ") + e.what());
    out.seconds = std::chrono::duration<double>(ctx.clock->Now() - t0).count();
    if (ctx.log) ctx.log->Append("gauntlet: " + out.evidence + "\n");
    return out;
  }
}

}  // namespace gauntlet::worker
