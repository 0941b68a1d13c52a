// The benchmark client's HTTP/1.1 connection (openai/openai_bench.cc): one keep-alive socket per
// client thread, a request written with one send, chunked or sized bodies decoded in place. It is
// not the general REST client because the client must cost far less than the server it measures.
#pragma once
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gauntlet::openai {

// Receives a response body as it arrives, decoded; returns false to stop reading (the connection
// is then closed, since the rest of the stream is not worth reading).
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual bool OnBody(std::string_view data) = 0;
};

// One connection to one address, owned by one thread (not thread-safe). Closes its socket on
// destruction.
class BenchConnection {
 public:
  BenchConnection(const sockaddr_storage& addr, socklen_t len) : addr_(addr), len_(len) {}
  ~BenchConnection() { Close(); }
  BenchConnection(const BenchConnection&) = delete;
  BenchConnection& operator=(const BenchConnection&) = delete;

  // Sends `wire` (a whole request) and feeds the answer's body to `sink`. Returns the status, or
  // nullopt with *error set; `idle` bounds each read and write. A reused connection that the server
  // closed while idle is retried once on a fresh one (nothing was answered, so nothing is lost).
  std::optional<int> Request(const std::string& wire, std::chrono::milliseconds idle, BodySink& sink, std::string* error);

 private:
  struct Head {
    int status = 0;
    bool chunked = false, close_after = false;
    int64_t length = -1;
  };
  void Close();
  bool Connect(std::chrono::milliseconds timeout, std::string* error);
  void SetIdle(std::chrono::milliseconds idle);
  bool Err(std::string* error, std::string what);
  void QuickAck();
  bool Fill(std::string* error);
  bool Line(std::string_view* line, std::string* error);
  std::optional<int> Exchange(const std::string& wire, BodySink& sink, std::string* error, bool* got_any);
  bool ReadHead(Head* head, std::string* error, bool* got_any);
  bool ReadChunked(BodySink& sink, std::string* error, bool* stopped);
  bool ReadSized(int64_t length, BodySink& sink, std::string* error);
  void ReadToClose(BodySink& sink);

  sockaddr_storage addr_;
  socklen_t len_;
  int fd_ = -1;
  std::string buf_;  // storage; [pos_, end_) is unread data
  size_t pos_ = 0, end_ = 0;
  std::chrono::milliseconds idle_set_{-1};
};

// "http://host:port[/prefix]" -> address, Host header value, path prefix; false with *error when
// the host does not resolve. Thread-safe.
bool ParseBase(const std::string& base, sockaddr_storage* addr, socklen_t* len, std::string* host_header,
               std::string* prefix, std::string* error);

}  // namespace gauntlet::openai
