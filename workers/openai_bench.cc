#include "workers/openai_bench.h"

#include "workers/classifier/garbage.h"
#include "workers/stream_event.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

// The client must cost far less than the server it measures (issue 4: at most 100 us of CPU per
// streamed request against an instant-answer server on loopback; docs/BENCHMARKS.md). So, instead of
// the general REST client: one keep-alive connection per client thread (no connect per request), a
// request written with one send, chunked decoding and SSE framing done in place, and each event's
// text pulled out by a scanner that reads only the fields the numbers need, with a full JSON parse
// as the fallback for anything it does not recognise.

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

// ---- a minimal HTTP/1.1 client: keep-alive, chunked or sized bodies -----------------------------

class Connection {
 public:
  Connection(const sockaddr_storage& addr, socklen_t len, std::string host) : addr_(addr), len_(len), host_(std::move(host)) {}
  ~Connection() { Close(); }

  // One request; on_body gets the decoded body as it arrives (return false to stop reading).
  // Returns the status, or nullopt with *error set. A reused connection that the server closed
  // while idle is retried once on a fresh one (nothing was answered, so nothing is lost).
  template <typename F>
  std::optional<int> Request(const std::string& wire, std::chrono::milliseconds idle, F&& on_body, std::string* error) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = fd_ >= 0;
      if (fd_ < 0 && !Connect(idle, error)) return std::nullopt;
      SetIdle(idle);
      bool got_any = false;
      auto st = Exchange(wire, on_body, error, &got_any);
      if (st || !reused || got_any) return st;
      Close();
    }
    return std::nullopt;
  }

 private:
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    pos_ = end_ = 0;
  }
  bool Connect(std::chrono::milliseconds timeout, std::string* error) {
    fd_ = ::socket(addr_.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return Err(error, std::string("socket: ") + std::strerror(errno));
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr_), len_) != 0) {
      if (errno != EINPROGRESS) return Err(error, std::string("connect: ") + std::strerror(errno));
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return Err(error, "connect: timed out");
      int soerr = 0;
      socklen_t l = sizeof soerr;
      getsockopt(fd_, SOL_SOCKET, SO_ERROR, &soerr, &l);
      if (soerr) return Err(error, std::string("connect: ") + std::strerror(soerr));
    }
    // Blocking from here on: SO_RCVTIMEO bounds each read (the idle timeout) without a poll per read.
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    idle_set_ = std::chrono::milliseconds(-1);
    return true;
  }
  void SetIdle(std::chrono::milliseconds idle) {
    if (idle == idle_set_) return;
    timeval tv{static_cast<time_t>(idle.count() / 1000), static_cast<suseconds_t>((idle.count() % 1000) * 1000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    idle_set_ = idle;
  }
  bool Err(std::string* error, std::string what) {
    *error = std::move(what);
    Close();
    return false;
  }
  // Acknowledge what arrives at once. A server that streams without TCP_NODELAY (Python's
  // http.server) holds each small token write until the previous one is acknowledged (Nagle); with
  // the client's delayed ACK that is 40 ms per token, and TTFT and ITL would measure the client.
  // Linux clears the flag as it goes, so it is set again after the request and after every read.
  void QuickAck() {
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }
  // Reads more into buf_; false on EOF, error or idle timeout.
  bool Fill(std::string* error) {
    // buf_ only grows (resizing it per read would zero 16 KiB every time); end_ marks the data.
    if (pos_ == end_) {
      pos_ = end_ = 0;
    } else if (pos_ > 65536) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() - end_ < 16384) buf_.resize(std::max<size_t>(buf_.size() * 2, end_ + 16384));
    ssize_t n = ::recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
    if (n > 0) end_ += static_cast<size_t>(n);
    QuickAck();
    if (n > 0) return true;
    if (n == 0) *error = "the server closed the connection";
    else *error = errno == EAGAIN || errno == EWOULDBLOCK ? "idle timeout" : std::string("recv: ") + std::strerror(errno);
    return false;
  }
  // A line ending in CRLF at pos_ (without it); false when the connection ends first.
  bool Line(std::string_view* line, std::string* error) {
    size_t eol;
    while ((eol = std::string_view(buf_.data(), end_).find("\r\n", pos_)) == std::string_view::npos)
      if (!Fill(error)) return false;
    *line = std::string_view(buf_.data() + pos_, eol - pos_);
    pos_ = eol + 2;
    return true;
  }
  template <typename F>
  std::optional<int> Exchange(const std::string& wire, F&& on_body, std::string* error, bool* got_any) {
    for (size_t off = 0; off < wire.size();) {
      ssize_t n = ::send(fd_, wire.data() + off, wire.size() - off, MSG_NOSIGNAL);
      if (n <= 0) {
        Err(error, std::string("send: ") + std::strerror(errno));
        return std::nullopt;
      }
      off += static_cast<size_t>(n);
    }
    QuickAck();
    std::string_view line;
    if (!Line(&line, error)) {
      Close();
      return std::nullopt;
    }
    *got_any = true;
    // "HTTP/1.1 200 OK"
    if (line.size() < 12 || line.substr(0, 5) != "HTTP/") {
      Err(error, "not an HTTP answer: " + std::string(line.substr(0, 80)));
      return std::nullopt;
    }
    const bool http10 = line.substr(5, 3) == "1.0";
    const int status = std::atoi(std::string(line.substr(9, 3)).c_str());
    bool chunked = false, close_after = http10;
    int64_t length = -1;
    while (true) {
      if (!Line(&line, error)) {
        Close();
        return std::nullopt;
      }
      if (line.empty()) break;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      auto is = [&](std::string_view a, std::string_view b) {
        return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
      };
      if (is(name, "content-length")) length = std::atoll(std::string(value).c_str());
      else if (is(name, "transfer-encoding")) chunked = value.find("chunked") != std::string_view::npos;
      else if (is(name, "connection")) {
        if (is(value, "close")) close_after = true;
        else if (is(value, "keep-alive")) close_after = false;
      }
    }
    bool more = true;
    if (chunked) {
      while (true) {
        if (!Line(&line, error)) {
          Close();
          return std::nullopt;
        }
        const int64_t size = std::strtoll(std::string(line).c_str(), nullptr, 16);
        if (size <= 0) {
          do {  // trailers, then the empty line
            if (!Line(&line, error)) {
              Close();
              return std::nullopt;
            }
          } while (!line.empty());
          break;
        }
        while (end_ - pos_ < static_cast<size_t>(size) + 2)
          if (!Fill(error)) {
            Close();
            return std::nullopt;
          }
        if (more) more = on_body(std::string_view(buf_.data() + pos_, static_cast<size_t>(size)));
        pos_ += static_cast<size_t>(size) + 2;
        if (!more) {  // the caller has what it needs; the rest of the stream is not worth reading
          Close();
          return status;
        }
      }
    } else if (length >= 0) {
      int64_t left = length;
      while (left > 0) {
        if (pos_ == end_ && !Fill(error)) {
          Close();
          return std::nullopt;
        }
        size_t n = std::min<size_t>(end_ - pos_, static_cast<size_t>(left));
        if (more) more = on_body(std::string_view(buf_.data() + pos_, n));
        pos_ += n;
        left -= static_cast<int64_t>(n);
      }
    } else {  // neither: the body ends when the connection does
      std::string ignored;
      while (true) {
        if (pos_ < end_ && more) more = on_body(std::string_view(buf_.data() + pos_, end_ - pos_));
        pos_ = end_;
        if (!Fill(&ignored)) break;
      }
      close_after = true;
    }
    if (close_after) Close();
    return status;
  }

  sockaddr_storage addr_;
  socklen_t len_;
  std::string host_;
  int fd_ = -1;
  std::string buf_;  // storage; [pos_, end_) is unread data
  size_t pos_ = 0, end_ = 0;
  std::chrono::milliseconds idle_set_{-1};
};

// "http://host:port[/prefix]" -> address, Host header value, path prefix.
bool ParseBase(const std::string& base, sockaddr_storage* addr, socklen_t* len, std::string* host_header,
               std::string* prefix, std::string* error) {
  std::string rest = base.rfind("http://", 0) == 0 ? base.substr(7) : base;
  auto slash = rest.find('/');
  *host_header = rest.substr(0, slash);
  *prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!prefix->empty() && prefix->back() == '/') prefix->pop_back();
  std::string host = *host_header, port = "80";
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    if (close != std::string::npos && close + 1 < host.size() && host[close + 1] == ':') port = host.substr(close + 2);
    host = host.substr(1, close == std::string::npos ? std::string::npos : close - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0 || !res) {
    *error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return false;
  }
  std::memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

double ThreadCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

BenchResult RunBench(const BenchSpec& s) {
  BenchResult r;
  r.concurrency = std::max(1, s.concurrency);
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string host_header, prefix, error;
  if (!ParseBase(s.base, &addr, &addr_len, &host_header, &prefix, &error)) {
    r.errors = s.requests;
    r.first_error = error;
    return r;
  }
  const std::string path = prefix + (s.chat ? "/v1/chat/completions" : "/v1/completions");
  std::string model_json;
  JsonEscape(s.model, &model_json);
  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> ttft, itl;
  const auto t0 = Clock::now();
  auto worker = [&] {
    const double cpu0 = ThreadCpuSeconds();
    Connection conn(addr, addr_len, host_header);
    std::vector<double> my_ttft, my_itl;
    my_ttft.reserve(static_cast<size_t>(s.requests / r.concurrency + 1));
    my_itl.reserve(static_cast<size_t>((s.requests / r.concurrency + 1) * std::max(1, s.output_tokens)));
    int ok = 0, errors = 0;
    double tokens = 0;
    std::string garbage_key, garbage_reason, garbage_sample;
    std::string first_error, body, wire, text, raw, sse, err;
    std::vector<std::string> samples;
    StreamEvent ev;
    while (true) {
      int i = next++;
      const auto now0 = Clock::now();
      if (i >= s.requests || now0 >= s.deadline || (s.should_stop && s.should_stop())) break;
      // The request, written by hand: it is the same every time but for the prompt.
      const std::string prompt = Prompt(s.input_tokens, i);
      body.clear();
      body += "{\"model\":\"";
      body += model_json;
      body += "\",\"max_tokens\":" + std::to_string(s.output_tokens) +
              ",\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true},";
      body += s.chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"" : "\"prompt\":\"";
      JsonEscape(prompt, &body);
      body += s.chat ? "\"}]}" : "\"}";
      wire.clear();
      wire += "POST " + path + " HTTP/1.1\r\nHost: " + host_header +
              "\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(body.size()) + "\r\n\r\n";
      wire += body;
      const auto idle = std::chrono::milliseconds(120000);
      const auto idle_limit =
          s.deadline == Clock::time_point::max()
              ? idle
              : std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(s.deadline - now0),
                           std::chrono::milliseconds(1000), idle);
      const auto start = Clock::now();
      Clock::time_point last{};
      bool first = true;
      int chunks = 0;
      double usage_tokens = -1;
      text.clear();
      raw.clear();
      sse.clear();
      size_t sse_pos = 0;
      auto on_event = [&](std::string_view data) {
        if (data == "[DONE]") return;
        ev.piece.clear();
        ev.usage_tokens = -1;
        if (!ScanStreamEvent(data, &ev)) {
          ev.piece.clear();
          ev.usage_tokens = -1;
          if (!ParseStreamEvent(data, &ev)) return;
        }
        if (ev.usage_tokens >= 0) usage_tokens = ev.usage_tokens;
        if (ev.piece.empty()) return;
        auto now = Clock::now();
        if (first) {
          my_ttft.push_back(std::chrono::duration<double, std::milli>(now - start).count());
          first = false;
        } else {
          my_itl.push_back(std::chrono::duration<double, std::milli>(now - last).count());
        }
        last = now;
        ++chunks;
        if (text.size() < 2048) text += ev.piece;
      };
      auto st = conn.Request(
          wire, idle_limit,
          [&](std::string_view chunk) {
            if (raw.size() < 4096) raw.append(chunk.substr(0, 4096 - raw.size()));
            // SSE: events are "data: ..." lines; complete lines are handled in place.
            sse.append(chunk);
            size_t eol;
            while ((eol = sse.find('\n', sse_pos)) != std::string::npos) {
              std::string_view line(sse.data() + sse_pos, eol - sse_pos);
              sse_pos = eol + 1;
              if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
              if (line.size() >= 5 && line.substr(0, 5) == "data:") {
                line.remove_prefix(5);
                if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
                on_event(line);
              }
            }
            if (sse_pos == sse.size()) {
              sse.clear();
              sse_pos = 0;
            }
            return true;
          },
          &err);
      if (!st || *st != 200 || chunks == 0) {
        ++errors;
        if (first_error.empty())
          first_error = !st ? err : "HTTP " + std::to_string(*st) + (chunks == 0 ? " with no tokens: " : ": ") + raw.substr(0, 300);
        continue;
      }
      ++ok;
      tokens += usage_tokens >= 0 ? usage_tokens : chunks;
      if (samples.size() < 3) samples.push_back(text);
      if (garbage_key.empty())
        if (auto g = FindGarbage(text)) {
          garbage_key = g->key;
          garbage_reason = g->reason;
          garbage_sample = text.substr(0, 200);
        }
    }
    const double cpu = ThreadCpuSeconds() - cpu0;
    std::lock_guard lock(mu);
    r.client_cpu_s += cpu;
    ttft.insert(ttft.end(), my_ttft.begin(), my_ttft.end());
    itl.insert(itl.end(), my_itl.begin(), my_itl.end());
    r.ok += ok;
    r.errors += errors;
    r.output_tokens += tokens;
    if (r.first_error.empty()) r.first_error = first_error;
    if (r.garbage_key.empty() && !garbage_key.empty()) {
      r.garbage_key = garbage_key;
      r.garbage_reason = garbage_reason;
      r.garbage_sample = garbage_sample;
    }
    for (auto& smp : samples)
      if (r.samples.size() < 5) r.samples.push_back(smp);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < r.concurrency; ++i) threads.emplace_back(worker);
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
          {"errors" + c, m(r.errors, "requests")},
          // What the client itself cost, so a reader can tell the numbers measure the server.
          {"client_cpu_us_per_req" + c, m(r.ok ? r.client_cpu_s / r.ok * 1e6 : 0, "us")}};
}

}  // namespace gauntlet
