// What the benchmark client (openai/openai_bench.cc, RunBench) costs per request, so that a server
// stage's numbers measure the server and not the client. Target (issue 4): at most 100 us of client
// CPU per streamed request against an instant-answer server on loopback.
//
// Two servers, each answering at once:
//   cxx     an in-process C++ server: one thread per connection, every SSE event written with its own
//           send() as a streaming server does, shaped like the fixture's completion chunks;
//   python  tests/fixtures/openai_server.py --mode healthy (no token delay), a separate process.
// The metric is the client's CPU only: RunBench sums getrusage(RUSAGE_THREAD) over its own request
// threads, so the in-process server's threads and the Python process are not counted.
//
//   gauntlet-openai-client-bench [--server cxx|python|both] [--requests N] [--tokens T]
//                                [--concurrency 1,16] [--fixture PATH] [--chat 1]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "openai/openai_bench.h"

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Instant-answer OpenAI-compatible streaming server on 127.0.0.1, port chosen by the kernel.
class LoopbackServer {
 public:
  explicit LoopbackServer(int tokens) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 1024) != 0) {
      perror("bind/listen");
      std::exit(2);
    }
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    // The answer, precomputed: what the fixture sends, one chunked-encoding chunk per SSE event.
    auto chunk = [](const std::string& data) {
      std::string ev = "data: " + data + "\n\n";
      std::ostringstream o;
      o << std::hex << ev.size() << "\r\n" << ev << "\r\n";
      return o.str();
    };
    const std::string head = R"({"id":"cmpl-bench","object":"text_completion","created":1700000000,"model":"bench",)";
    events_.push_back("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < tokens; ++i)
      events_.push_back(chunk(head + R"("choices":[{"index":0,"text":" word)" + std::to_string(i % 10) +
                              R"(","finish_reason":null,"logprobs":null}]})"));
    events_.push_back(chunk(head + R"("choices":[{"index":0,"finish_reason":"length","text":""}]})"));
    events_.push_back(chunk(head + R"("choices":[],"usage":{"prompt_tokens":16,"completion_tokens":)" +
                            std::to_string(tokens) + R"(,"total_tokens":)" + std::to_string(16 + tokens) + "}}"));
    events_.push_back(chunk("[DONE]") + "0\r\n\r\n");
    models_ = R"({"object":"list","data":[{"id":"bench","object":"model"}]})";
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    close(fd_);
    while (live_ > 0) std::this_thread::sleep_for(1ms);  // connection threads end when clients close
  }
  int port() const { return port_; }

 private:
  void Accept() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) {
        if (stop_) return;
        continue;
      }
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ++live_;
      std::thread([this, c] {
        Serve(c);
        close(c);
        --live_;
      }).detach();
    }
  }
  // Keep-alive HTTP/1.1: reads each request (headers, Content-Length body), answers, repeats.
  void Serve(int c) {
    std::string buf;
    char tmp[16384];
    while (true) {
      size_t hdr_end;
      while ((hdr_end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = read(c, tmp, sizeof tmp);
        if (n <= 0) return;
        buf.append(tmp, static_cast<size_t>(n));
      }
      std::string head = buf.substr(0, hdr_end);
      for (auto& ch : head) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
      size_t body = 0;
      if (auto p = head.find("content-length:"); p != std::string::npos) body = std::stoul(head.substr(p + 15));
      while (buf.size() < hdr_end + 4 + body) {
        ssize_t n = read(c, tmp, sizeof tmp);
        if (n <= 0) return;
        buf.append(tmp, static_cast<size_t>(n));
      }
      const bool get = head.rfind("get ", 0) == 0;
      buf.erase(0, hdr_end + 4 + body);
      if (get) {
        std::string r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                        std::to_string(models_.size()) + "\r\n\r\n" + models_;
        if (send(c, r.data(), r.size(), MSG_NOSIGNAL) < 0) return;
        continue;
      }
      for (auto& e : events_)  // one send per event, as a server streaming tokens does
        if (send(c, e.data(), e.size(), MSG_NOSIGNAL) < 0) return;
    }
  }
  int fd_ = -1, port_ = 0;
  std::vector<std::string> events_;
  std::string models_;
  std::thread acceptor_;
  std::atomic<bool> stop_{false};
  std::atomic<int> live_{0};
};

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// The Python fixture server in healthy mode, stopped on destruction.
class PythonFixture {
 public:
  explicit PythonFixture(const std::string& path) : port_(FreePort()) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);  // its access log would cost the bench's terminal, not the client
      execlp("python3", "python3", path.c_str(), "--port", port.c_str(), "--mode", "healthy", nullptr);
      _exit(127);
    }
    gauntlet::net::Client c("http://127.0.0.1:" + std::to_string(port_), "");
    auto until = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < until) {  // nothing announces readiness but polling
      auto r = c.Send("GET", "/v1/models", "", "application/json", 1s);
      if (r.ok() && r->status == 200) return;
      std::this_thread::sleep_for(20ms);
    }
    std::cerr << "the fixture server did not start\n";
    std::exit(2);
  }
  ~PythonFixture() {
    kill(pid_, SIGTERM);
    int st;
    waitpid(pid_, &st, 0);
  }
  int port() const { return port_; }

 private:
  int port_;
  pid_t pid_;
};

// {user, system} CPU seconds of the whole process.
std::pair<double, double> ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6,
          static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6};
}

bool g_chat = false;  // --chat: /v1/chat/completions (the Python fixture only; the C++ server speaks completions)

json Measure(const std::string& server, int port, int concurrency, int requests, int tokens) {
  gauntlet::openai::BenchSpec s;
  s.base = "http://127.0.0.1:" + std::to_string(port);
  s.model = "bench";
  s.concurrency = concurrency;
  s.input_tokens = 16;
  s.output_tokens = tokens;
  s.chat = g_chat;
  s.requests = std::max(concurrency * 4, requests / 10);
  gauntlet::openai::RunBench(s);  // warm-up: first connections, allocator, page faults
  s.requests = requests;
  const auto cpu0 = ProcessCpu();
  gauntlet::openai::BenchResult r = gauntlet::openai::RunBench(s);
  const auto cpu1 = ProcessCpu();
  const double user = cpu1.first - cpu0.first, sys = cpu1.second - cpu0.second;
  const double per_req_us = r.ok ? r.client_cpu_s / r.ok * 1e6 : 0;
  json j = {{"server", server},
            {"concurrency", concurrency},
            {"chat", g_chat},
            {"requests", requests},
            {"ok", r.ok},
            {"errors", r.errors},
            {"output_tokens_per_request", r.ok ? r.output_tokens / r.ok : 0},
            {"seconds", r.seconds},
            {"req_s", r.req_s},
            {"output_tok_s", r.output_tok_s},
            {"ttft_ms_p50", r.ttft_ms_p50},
            {"itl_ms_p50", r.itl_ms_p50},
            {"itl_ms_p99", r.itl_ms_p99},
            {"client_cpu_us_per_request", per_req_us},
            {"client_cpu_us_per_token", r.output_tokens > 0 ? r.client_cpu_s / r.output_tokens * 1e6 : 0},
            {"client_cpu_share_of_wall", r.seconds > 0 ? r.client_cpu_s / r.seconds : 0},
            {"meets_100us", r.ok == requests && per_req_us <= 100}};
  // With the Python server out of process, the whole process's CPU is the client's too: a check on
  // the per-thread sum, split into user space and kernel (the loopback TCP path).
  if (server == "python" && r.ok) {
    j["process_cpu_us_per_request"] = (user + sys) / r.ok * 1e6;
    j["process_user_us_per_request"] = user / r.ok * 1e6;
    j["process_sys_us_per_request"] = sys / r.ok * 1e6;
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "both", fixture = GAUNTLET_FIXTURE_SERVER;
  int requests = 4000, tokens = 16;
  std::vector<int> levels = {1, 16};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--server") which = v;
    else if (k == "--requests") requests = std::stoi(v);
    else if (k == "--tokens") tokens = std::stoi(v);
    else if (k == "--fixture") fixture = v;
    else if (k == "--chat") g_chat = v == "1" || v == "true";
    else if (k == "--concurrency") {
      levels.clear();
      std::stringstream ss(v);
      for (std::string x; std::getline(ss, x, ',');) levels.push_back(std::stoi(x));
    } else {
      std::cerr << "unknown option " << k << "\n";
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  utsname u{};
  uname(&u);
  char date[32];
  time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  json out = {{"bench", "openai_client"},
              {"date", date},
              {"machine", {{"kernel", std::string(u.sysname) + " " + u.release}, {"arch", u.machine},
                           {"cpus", std::thread::hardware_concurrency()}}},
              {"target_client_cpu_us_per_request", 100},
              {"results", json::array()}};
  if (which == "cxx" || which == "both") {
    LoopbackServer srv(tokens);
    for (int c : levels) out["results"].push_back(Measure("cxx", srv.port(), c, requests, tokens));
  }
  if (which == "python" || which == "both") {
    PythonFixture py(fixture);
    // The Python server answers far slower than the C++ one; fewer requests keep the run short.
    for (int c : levels) out["results"].push_back(Measure("python", py.port(), c, std::min(requests, 1000), tokens));
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}
