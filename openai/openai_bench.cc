#include "openai/openai_bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "http/sse_reader.h"
#include "openai/bench_connection.h"
#include "classifier/garbage.h"
#include "openai/stream_event.h"

// The client must cost far less than the server it measures (issue 4: at most 100 us of CPU per
// streamed request against an instant-answer server on loopback; docs/BENCHMARKS.md). So, instead of
// the general REST client: one keep-alive connection per client thread (openai/bench_connection.h:
// no connect per request, a request written with one send, chunked decoding in place), SSE framing
// done in place and buffers reused across requests, and each event's text pulled out by a scanner
// that reads only the fields the numbers need, with a full JSON parse as the fallback for anything
// it does not recognise.

namespace gauntlet::openai {
using classifier::FindGarbage;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
}

namespace {

std::string Prompt(int tokens, int salt) {
  // Distinct prompts defeat prefix caches that would make the numbers too good to be true.
  std::string p = "Request " + std::to_string(salt) + ":";
  static const char* kWords[] = {" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog"};
  for (int i = 0; i < tokens; ++i) p += kWords[(i + salt) % 9];
  return p + ". Continue the story:";
}

double ThreadCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Where the requests go, shared read-only by every client thread.
struct BenchTarget {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string host_header, path;
  std::string model_json;  // the model name, escaped for a JSON string
};

// One client thread: takes request numbers until the spec's count, deadline or stop, each a
// streamed completion on the thread's keep-alive connection, and keeps its own numbers until
// MergeInto. It is the connection's body sink; its buffers are reused from request to request.
class BenchThread final : public BodySink {
 public:
  BenchThread(const BenchSpec& s, const BenchTarget& t, int concurrency) : s_(s), t_(t), conn_(t.addr, t.addr_len) {
    const size_t per_thread = static_cast<size_t>(s.requests / concurrency + 1);
    ttft_.reserve(per_thread);
    itl_.reserve(per_thread * static_cast<size_t>(std::max(1, s.output_tokens)));
  }

  void Run(std::atomic<int>& next) {
    while (true) {
      int i = next++;
      const auto now0 = Clock::now();
      if (i >= s_.requests || now0 >= s_.deadline || (s_.should_stop && s_.should_stop())) break;
      OneRequest(i, now0);
    }
  }

  // Adds this thread's numbers to the run's; the caller serialises the calls.
  void MergeInto(BenchResult* r, std::vector<double>* ttft, std::vector<double>* itl) const {
    ttft->insert(ttft->end(), ttft_.begin(), ttft_.end());
    itl->insert(itl->end(), itl_.begin(), itl_.end());
    r->ok += ok_;
    r->errors += errors_;
    r->output_tokens += tokens_;
    if (r->first_error.empty()) r->first_error = first_error_;
    if (r->garbage_key.empty() && !garbage_key_.empty()) {
      r->garbage_key = garbage_key_;
      r->garbage_reason = garbage_reason_;
      r->garbage_sample = garbage_sample_;
    }
    for (auto& smp : samples_)
      if (r->samples.size() < 5) r->samples.push_back(smp);
  }

  // SSE (http/sse_reader.h): each event's data is one streamed piece; complete lines are read in
  // place, without a copy.
  bool OnBody(std::string_view chunk) override {
    if (raw_.size() < 4096) raw_.append(chunk.substr(0, 4096 - raw_.size()));
    return sse_.Feed(chunk, on_sse_);
  }

 private:
  // The request, written by hand: it is the same every time but for the prompt.
  void BuildRequest(int i) {
    const std::string prompt = Prompt(s_.input_tokens, i);
    body_.clear();
    body_ += "{\"model\":\"";
    body_ += t_.model_json;
    body_ += "\",\"max_tokens\":" + std::to_string(s_.output_tokens) +
             ",\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true},";
    body_ += s_.chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"" : "\"prompt\":\"";
    JsonEscape(prompt, &body_);
    body_ += s_.chat ? "\"}]}" : "\"}";
    wire_.clear();
    wire_ += "POST " + t_.path + " HTTP/1.1\r\nHost: " + t_.host_header +
             "\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body_.size()) + "\r\n\r\n";
    wire_ += body_;
  }

  void OneRequest(int i, Clock::time_point now0) {
    BuildRequest(i);
    const auto idle = std::chrono::milliseconds(120000);
    const auto idle_limit =
        s_.deadline == Clock::time_point::max()
            ? idle
            : std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(s_.deadline - now0),
                         std::chrono::milliseconds(1000), idle);
    start_ = Clock::now();
    first_ = true;
    chunks_ = 0;
    usage_tokens_ = -1;
    text_.clear();
    raw_.clear();
    sse_.Reset();
    auto st = conn_.Request(wire_, idle_limit, *this, &err_);
    if (!st || *st != 200 || chunks_ == 0) {
      ++errors_;
      if (first_error_.empty())
        first_error_ = !st ? err_
                           : "HTTP " + std::to_string(*st) + (chunks_ == 0 ? " with no tokens: " : ": ") + raw_.substr(0, 300);
      return;
    }
    ++ok_;
    tokens_ += usage_tokens_ >= 0 ? usage_tokens_ : chunks_;
    if (samples_.size() < 3) samples_.push_back(text_);
    if (garbage_key_.empty())
      if (auto g = FindGarbage(text_)) {
        garbage_key_ = g->key;
        garbage_reason_ = g->reason;
        garbage_sample_ = text_.substr(0, 200);
      }
  }

  void OnEvent(std::string_view data) {
    if (data == "[DONE]") return;
    ev_.piece.clear();
    ev_.usage_tokens = -1;
    if (!ScanStreamEvent(data, &ev_)) {
      ev_.piece.clear();
      ev_.usage_tokens = -1;
      if (!ParseStreamEvent(data, &ev_)) return;
    }
    if (ev_.usage_tokens >= 0) usage_tokens_ = ev_.usage_tokens;
    if (ev_.piece.empty()) return;
    auto now = Clock::now();
    if (first_) {
      ttft_.push_back(std::chrono::duration<double, std::milli>(now - start_).count());
      first_ = false;
    } else {
      itl_.push_back(std::chrono::duration<double, std::milli>(now - last_).count());
    }
    last_ = now;
    ++chunks_;
    if (text_.size() < 2048) text_ += ev_.piece;
  }

  const BenchSpec& s_;
  const BenchTarget& t_;
  BenchConnection conn_;
  // What the thread measured, over all its requests.
  std::vector<double> ttft_, itl_;
  int ok_ = 0, errors_ = 0;
  double tokens_ = 0;
  std::string first_error_, garbage_key_, garbage_reason_, garbage_sample_;
  std::vector<std::string> samples_;
  // The request in flight.
  Clock::time_point start_, last_;
  bool first_ = true;
  int chunks_ = 0;
  double usage_tokens_ = -1;
  std::string body_, wire_, text_, raw_, err_;
  http::SseReader sse_;
  // Made once, so a chunk costs no std::function of its own.
  const http::SseReader::OnEvent on_sse_ = [this](const http::SseEvent& e) {
    OnEvent(e.data);
    return true;
  };
  StreamEvent ev_;
};

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

BenchResult RunBench(const BenchSpec& s) {
  BenchResult r;
  r.concurrency = std::max(1, s.concurrency);
  BenchTarget t;
  std::string prefix, error;
  if (!ParseBase(s.base, &t.addr, &t.addr_len, &t.host_header, &prefix, &error)) {
    r.errors = s.requests;
    r.first_error = error;
    return r;
  }
  t.path = prefix + (s.chat ? "/v1/chat/completions" : "/v1/completions");
  JsonEscape(s.model, &t.model_json);
  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> ttft, itl;
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < r.concurrency; ++i)
    threads.emplace_back([&] {
      const double cpu0 = ThreadCpuSeconds();
      BenchThread b(s, t, r.concurrency);
      b.Run(next);
      const double cpu = ThreadCpuSeconds() - cpu0;
      std::lock_guard lock(mu);
      r.client_cpu_s += cpu;
      b.MergeInto(&r, &ttft, &itl);
    });
  for (auto& th : threads) th.join();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.output_tok_s = r.seconds > 0 ? r.output_tokens / r.seconds : 0;
  r.req_s = r.seconds > 0 ? r.ok / r.seconds : 0;
  r.ttft_ms_mean = Mean(ttft);
  r.ttft_ms_p50 = Percentile(ttft, 50);
  r.ttft_ms_p99 = Percentile(ttft, 99);
  r.itl_ms_mean = Mean(itl);
  r.itl_ms_p50 = Percentile(itl, 50);
  r.itl_ms_p99 = Percentile(itl, 99);
  return r;
}

json BenchMetrics(const BenchResult& r) {
  const std::string c = "@c" + std::to_string(r.concurrency);
  auto m = [](double v, const char* unit) { return json{{"value", std::round(v * 1000) / 1000}, {"unit", unit}}; };
  return {{"output_tok_s" + c, m(r.output_tok_s, "tok/s")}, {"req_s" + c, m(r.req_s, "req/s")},
          {"ttft_ms_mean" + c, m(r.ttft_ms_mean, "ms")},   {"ttft_ms_p50" + c, m(r.ttft_ms_p50, "ms")},
          {"ttft_ms_p99" + c, m(r.ttft_ms_p99, "ms")},     {"itl_ms_mean" + c, m(r.itl_ms_mean, "ms")},
          {"itl_ms_p50" + c, m(r.itl_ms_p50, "ms")},       {"itl_ms_p99" + c, m(r.itl_ms_p99, "ms")},
          {"errors" + c, m(r.errors, "requests")},
          // What the client itself cost, so a reader can tell the numbers measure the server.
          {"client_cpu_us_per_req" + c, m(r.ok ? r.client_cpu_s / r.ok * 1e6 : 0, "us")}};
}

}  // namespace gauntlet::openai
