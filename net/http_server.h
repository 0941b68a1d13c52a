// The HTTP/1.1 server (Boost.Beast): keep-alive, several threads, per-connection timeouts and body
// limit, long-poll and SSE answers, and a graceful stop. Only its .cc (and the two it alone uses,
// request_head.h and server_resources.h) include Beast.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/router.h"

namespace gauntlet::net {

// How the server listens and bounds its connections.
struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (see Server::port())
  int threads = 2;       // I/O threads: they parse, write, and run the kIo routes' handlers
  int pool_threads = 0;  // handler pool (kPool routes); 0: as many as `threads`
  // Connections open at once; beyond it the server stops accepting (new ones wait in the listen
  // backlog) until one closes. 0: the descriptor limit (RLIMIT_NOFILE) less 128 for the store,
  // the local worker and the rest.
  int max_connections = 0;
  size_t body_limit = 1 << 20;  // the most any route takes; a route may take less (Route::body_limit)
  // Event streams (SSE) open at once, a budget of their own inside max_connections: one past it is
  // a 503, so streams can never take the connections the worker protocol needs. 0: a quarter of
  // max_connections (at least 1).
  int max_streams = 0;
  // A chunk of an event stream (an event, a keep-alive) must be written within this, else the
  // stream is closed: a reader that stopped reading holds its connection no longer.
  std::chrono::seconds stream_write_timeout{30};
  // Paths that take a larger body than body_limit (a suite bundle upload): a request whose target
  // starts with the prefix gets the paired limit instead; the first fitting prefix wins.
  std::vector<std::pair<std::string, size_t>> large_bodies;
  std::chrono::seconds read_timeout{30};   // a request must arrive whole within this
  std::chrono::seconds idle_timeout{75};   // an idle keep-alive connection is closed after this
  // PEM files: both set, every connection is HTTPS (TLS 1.2 or later); both empty, plain HTTP.
  std::string tls_cert, tls_key;
};

// kIo handlers run on the I/O threads, kPool handlers on the handler pool (at a lower CPU
// priority); a handler that blocks holds one thread of its lane. An accept that fails for want of
// descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) backs off instead of spinning, and its
// log lines are rate-limited.
class Server {
 public:
  // Loads the TLS files, binds and listens at once (throws std::runtime_error with the reason on
  // failure: an unreadable certificate, a key that does not match it, a busy port); serving
  // starts with Run(). The router must outlive the server.
  Server(const ServerOptions& opts, const http::Router& router);
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

}  // namespace gauntlet::net
