// The benchmark client for OpenAI-compatible servers: streamed completions at a fixed concurrency,
// measuring output tokens/s, requests/s, time to first token and inter-token latency.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace gauntlet::openai {

// One benchmark level: where, what, how hard, and until when. A plain value.
struct BenchSpec {
  std::string base;     // "http://127.0.0.1:PORT"
  std::string model;
  int concurrency = 1;
  int requests = 16;
  int input_tokens = 128;   // approximated by repeated words
  int output_tokens = 64;
  bool chat = false;
  // No request starts after the deadline, and one in flight is cut when it passes.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<bool()> should_stop;  // checked between requests (e.g. the server died, cancel)
};

// What one level measured (times in ms, rates per second). A plain value.
struct BenchResult {
  int concurrency = 0, ok = 0, errors = 0;
  double seconds = 0, output_tokens = 0;
  double output_tok_s = 0, req_s = 0;
  double ttft_ms_mean = 0, ttft_ms_p50 = 0, ttft_ms_p99 = 0;
  double itl_ms_mean = 0, itl_ms_p50 = 0, itl_ms_p99 = 0;
  double client_cpu_s = 0;  // CPU time of the client's own threads (user + system), all requests
  std::string first_error;
  std::vector<std::string> samples;  // a few generated texts, for the log
  // Every generated text is checked for garbage (classifier/garbage.h); the first that failed, with
  // its key ("repeated_char") and reason, or empty.
  std::string garbage_key, garbage_reason, garbage_sample;
};

// Runs one concurrency level on `concurrency` threads of its own and returns when they are done
// (requests run out, the deadline passes or should_stop says so). No shared state: callers may run
// several at once. spec.should_stop is called from those threads.
BenchResult RunBench(const BenchSpec& spec);
// Metrics named "<name>@c<concurrency>" with units, ready for a stage's metrics. Pure.
nlohmann::json BenchMetrics(const BenchResult& r);
// The p-th percentile (0..100) of values (copied; nearest-rank on sorted data); 0 for none. Pure.
double Percentile(std::vector<double> v, double p);

}  // namespace gauntlet::openai
