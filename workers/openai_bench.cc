#include "workers/openai_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include <sys/resource.h>

#include "api/http_client.h"

namespace gauntlet {
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

// Parses SSE frames incrementally; calls on_event for each "data:" payload.
class SseParser {
 public:
  template <typename F>
  void Feed(std::string_view chunk, F&& on_event) {
    buf_.append(chunk);
    size_t pos;
    while ((pos = buf_.find('\n')) != std::string::npos) {
      std::string_view line(buf_.data(), pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        on_event(line);
      }
      buf_.erase(0, pos + 1);
    }
  }

 private:
  std::string buf_;
};
}  // namespace

BenchResult RunBench(const BenchSpec& s) {
  BenchResult r;
  r.concurrency = s.concurrency;
  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> ttft, itl;
  const auto t0 = Clock::now();
  auto worker = [&] {
    http::Client client(s.base, "");
    std::vector<double> my_ttft, my_itl;
    int ok = 0, errors = 0;
    double tokens = 0;
    std::string first_error;
    std::vector<std::string> samples;
    while (true) {
      int i = next++;
      if (i >= s.requests || Clock::now() >= s.deadline || (s.should_stop && s.should_stop())) break;
      json body = {{"model", s.model}, {"max_tokens", s.output_tokens}, {"temperature", 0}, {"stream", true},
                   {"stream_options", {{"include_usage", true}}}};
      if (s.chat) body["messages"] = json::array({{{"role", "user"}, {"content", Prompt(s.input_tokens, i)}}});
      else body["prompt"] = Prompt(s.input_tokens, i);
      const auto start = Clock::now();
      Clock::time_point last{};
      bool first = true;
      int chunks = 0;
      double usage_tokens = -1;
      std::string text, raw;
      SseParser sse;
      auto st = client.StreamRequest(
          "POST", s.chat ? "/v1/chat/completions" : "/v1/completions", body.dump(),
          [&](std::string_view chunk) {
            if (raw.size() < 4096) raw.append(chunk.substr(0, 4096 - raw.size()));
            sse.Feed(chunk, [&](std::string_view data) {
              if (data == "[DONE]") return;
              json j = json::parse(data, nullptr, false);
              if (!j.is_object()) return;
              if (j.contains("usage") && j["usage"].is_object() && j["usage"].contains("completion_tokens"))
                usage_tokens = j["usage"]["completion_tokens"].get<double>();
              if (!j.contains("choices") || j["choices"].empty()) return;
              const json& c = j["choices"][0];
              std::string piece;
              if (c.contains("text") && c["text"].is_string()) piece = c["text"];
              else if (c.contains("delta") && c["delta"].contains("content") && c["delta"]["content"].is_string())
                piece = c["delta"]["content"];
              if (piece.empty()) return;
              auto now = Clock::now();
              if (first) {
                my_ttft.push_back(std::chrono::duration<double, std::milli>(now - start).count());
                first = false;
              } else {
                my_itl.push_back(std::chrono::duration<double, std::milli>(now - last).count());
              }
              last = now;
              ++chunks;
              if (text.size() < 2048) text += piece;
            });
            return true;
          },
          std::min<std::chrono::milliseconds>(
              std::chrono::seconds(120),
              std::max(std::chrono::milliseconds(1000),
                       s.deadline == Clock::time_point::max()
                           ? std::chrono::milliseconds(120000)
                           : std::chrono::duration_cast<std::chrono::milliseconds>(s.deadline - Clock::now()))));
      if (!st.ok() || *st != 200 || chunks == 0) {
        ++errors;
        if (first_error.empty())
          first_error = !st.ok() ? st.status().message()
                                 : "HTTP " + std::to_string(*st) + (chunks == 0 ? " with no tokens: " : ": ") + raw.substr(0, 300);
        continue;
      }
      ++ok;
      tokens += usage_tokens >= 0 ? usage_tokens : chunks;
      if (samples.size() < 3) samples.push_back(text);
    }
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    std::lock_guard lock(mu);
    r.client_cpu_s += cpu;
    ttft.insert(ttft.end(), my_ttft.begin(), my_ttft.end());
    itl.insert(itl.end(), my_itl.begin(), my_itl.end());
    r.ok += ok;
    r.errors += errors;
    r.output_tokens += tokens;
    if (r.first_error.empty()) r.first_error = first_error;
    for (auto& smp : samples)
      if (r.samples.size() < 5) r.samples.push_back(smp);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(1, s.concurrency); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  r.output_tok_s = r.seconds > 0 ? r.output_tokens / r.seconds : 0;
  r.req_s = r.seconds > 0 ? r.ok / r.seconds : 0;
  r.ttft_ms_mean = mean(ttft);
  r.ttft_ms_p50 = Percentile(ttft, 50);
  r.ttft_ms_p99 = Percentile(ttft, 99);
  r.itl_ms_mean = mean(itl);
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
          {"errors" + c, m(r.errors, "requests")}};
}

}  // namespace gauntlet
