// The HTTP/1.1 server (Boost.Beast): keep-alive, several threads, per-connection timeouts and body
// limit, long-poll and SSE answers, and a graceful stop. Only this header's .cc includes Beast.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "http/router.h"

namespace gauntlet::http {

// How the server listens and bounds its connections.
struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (see Server::port())
  int threads = 2;
  size_t body_limit = 1 << 20;
  std::chrono::seconds read_timeout{30};   // a request must arrive whole within this
  std::chrono::seconds idle_timeout{75};   // an idle keep-alive connection is closed after this
};

// Handlers run on the server's threads: one that blocks holds one of them.
class Server {
 public:
  // Binds and listens at once (throws std::runtime_error with the reason on failure); serving
  // starts with Run(). The router must outlive the server.
  Server(const ServerOptions& opts, const Router& router);
  ~Server();  // Stop(); destroy it only after Run() has returned
  uint16_t port() const;  // the bound port; thread-safe
  // Serves on opts.threads threads until Stop(); blocks the caller (who is one of the threads). Once.
  void Run();
  // Stops accepting, lets in-flight requests finish, closes idle connections, ends long-polls and
  // event streams, then makes Run() return. Thread-safe; callable from a signal-handling thread. An
  // event stream ends at its next chunk or its end: end the sources first (EventBus::CloseAll).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet::http
