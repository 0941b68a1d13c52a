#include "openai/bench_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gauntlet::openai {

std::optional<int> BenchConnection::Request(const std::string& wire, std::chrono::milliseconds idle, BodySink& sink,
                                            std::string* error) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = fd_ >= 0;
    if (fd_ < 0 && !Connect(idle, error)) return std::nullopt;
    SetIdle(idle);
    bool got_any = false;
    auto st = Exchange(wire, sink, error, &got_any);
    if (st || !reused || got_any) return st;
    Close();
  }
  return std::nullopt;
}

void BenchConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pos_ = end_ = 0;
}

bool BenchConnection::Connect(std::chrono::milliseconds timeout, std::string* error) {
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

void BenchConnection::SetIdle(std::chrono::milliseconds idle) {
  if (idle == idle_set_) return;
  timeval tv{static_cast<time_t>(idle.count() / 1000), static_cast<suseconds_t>((idle.count() % 1000) * 1000)};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  idle_set_ = idle;
}

bool BenchConnection::Err(std::string* error, std::string what) {
  *error = std::move(what);
  Close();
  return false;
}

// Acknowledge what arrives at once. A server that streams without TCP_NODELAY (Python's
// http.server) holds each small token write until the previous one is acknowledged (Nagle); with
// the client's delayed ACK that is 40 ms per token, and TTFT and ITL would measure the client.
// Linux clears the flag as it goes, so it is set again after the request and after every read.
void BenchConnection::QuickAck() {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

// Reads more into buf_; false on EOF, error or idle timeout.
bool BenchConnection::Fill(std::string* error) {
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
bool BenchConnection::Line(std::string_view* line, std::string* error) {
  size_t eol;
  while ((eol = std::string_view(buf_.data(), end_).find("\r\n", pos_)) == std::string_view::npos)
    if (!Fill(error)) return false;
  *line = std::string_view(buf_.data() + pos_, eol - pos_);
  pos_ = eol + 2;
  return true;
}

std::optional<int> BenchConnection::Exchange(const std::string& wire, BodySink& sink, std::string* error,
                                             bool* got_any) {
  for (size_t off = 0; off < wire.size();) {
    ssize_t n = ::send(fd_, wire.data() + off, wire.size() - off, MSG_NOSIGNAL);
    if (n <= 0) {
      Err(error, std::string("send: ") + std::strerror(errno));
      return std::nullopt;
    }
    off += static_cast<size_t>(n);
  }
  QuickAck();
  Head head;
  if (!ReadHead(&head, error, got_any)) return std::nullopt;
  if (head.chunked) {
    bool stopped = false;
    if (!ReadChunked(sink, error, &stopped)) return std::nullopt;
    if (stopped) return head.status;
  } else if (head.length >= 0) {
    if (!ReadSized(head.length, sink, error)) return std::nullopt;
  } else {  // neither: the body ends when the connection does
    ReadToClose(sink);
    head.close_after = true;
  }
  if (head.close_after) Close();
  return head.status;
}

// The status line and the headers that frame the body. False (connection closed) when the answer
// is not HTTP or ends early; *got_any once the status line came.
bool BenchConnection::ReadHead(Head* head, std::string* error, bool* got_any) {
  std::string_view line;
  if (!Line(&line, error)) {
    Close();
    return false;
  }
  *got_any = true;
  // "HTTP/1.1 200 OK"
  if (line.size() < 12 || line.substr(0, 5) != "HTTP/") return Err(error, "not an HTTP answer: " + std::string(line.substr(0, 80)));
  head->close_after = line.substr(5, 3) == "1.0";
  head->status = std::atoi(std::string(line.substr(9, 3)).c_str());
  auto is = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
  };
  while (true) {
    if (!Line(&line, error)) {
      Close();
      return false;
    }
    if (line.empty()) return true;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (is(name, "content-length")) head->length = std::atoll(std::string(value).c_str());
    else if (is(name, "transfer-encoding")) head->chunked = value.find("chunked") != std::string_view::npos;
    else if (is(name, "connection")) {
      if (is(value, "close")) head->close_after = true;
      else if (is(value, "keep-alive")) head->close_after = false;
    }
  }
}

// A chunked body to its last chunk and trailers. *stopped when the sink wanted no more (the
// connection is then closed).
bool BenchConnection::ReadChunked(BodySink& sink, std::string* error, bool* stopped) {
  std::string_view line;
  while (true) {
    if (!Line(&line, error)) {
      Close();
      return false;
    }
    const int64_t size = std::strtoll(std::string(line).c_str(), nullptr, 16);
    if (size <= 0) {
      do {  // trailers, then the empty line
        if (!Line(&line, error)) {
          Close();
          return false;
        }
      } while (!line.empty());
      return true;
    }
    while (end_ - pos_ < static_cast<size_t>(size) + 2)
      if (!Fill(error)) {
        Close();
        return false;
      }
    const bool more = sink.OnBody(std::string_view(buf_.data() + pos_, static_cast<size_t>(size)));
    pos_ += static_cast<size_t>(size) + 2;
    if (!more) {  // the caller has what it needs; the rest of the stream is not worth reading
      Close();
      *stopped = true;
      return true;
    }
  }
}

bool BenchConnection::ReadSized(int64_t length, BodySink& sink, std::string* error) {
  bool more = true;
  for (int64_t left = length; left > 0;) {
    if (pos_ == end_ && !Fill(error)) {
      Close();
      return false;
    }
    size_t n = std::min<size_t>(end_ - pos_, static_cast<size_t>(left));
    if (more) more = sink.OnBody(std::string_view(buf_.data() + pos_, n));
    pos_ += n;
    left -= static_cast<int64_t>(n);
  }
  return true;
}

void BenchConnection::ReadToClose(BodySink& sink) {
  std::string ignored;
  bool more = true;
  while (true) {
    if (pos_ < end_ && more) more = sink.OnBody(std::string_view(buf_.data() + pos_, end_ - pos_));
    pos_ = end_;
    if (!Fill(&ignored)) break;
  }
}

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

}  // namespace gauntlet::openai
