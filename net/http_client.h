// A small blocking HTTP/1.1 client (Boost.Beast) for the CLI and the worker: one keep-alive
// connection, reconnected on failure. Not thread-safe: one client per thread.
#pragma once
#include <chrono>
#include <functional>
#include <string_view>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace gauntlet::net {

// An answer as received; a plain value.
struct ClientResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string Header(const std::string& name) const;  // case-insensitive; empty if absent
};

class Client {
 public:
  // `base` is "http://host:port" or "https://host:port" (a path prefix is allowed); `token` may be
  // empty. HTTPS verifies the server's certificate and its host name against the trust store named
  // by SetDefaultCaFile when the client is made, else the system's.
  Client(std::string base, std::string token);
  ~Client();
  // Sends a request and returns the answer; Unavailable when the server can't be reached or the
  // connection broke (callers decide whether to retry). A reused keep-alive connection that fails is
  // retried once on a fresh one. `timeout` bounds the whole call (resolve, connect, TLS handshake,
  // write, read, the retry included): past it the call is Unavailable, "... timed out after N s".
  Result<ClientResponse> Send(const std::string& method, const std::string& target, const std::string& body = {},
                              const std::string& content_type = "application/json",
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // The timeout of a Send given none (zero): 30 s unless set here. Not thread-safe, as the rest.
  void SetTimeout(std::chrono::milliseconds t) { timeout_ = t; }
  // Streams a GET (for SSE): calls `on_data` with each chunk of body as it arrives, until it returns
  // false, the server ends the stream, or an error. Returns the status line's code or an error.
  // `idle_timeout` bounds connecting, sending, the status line and each wait for more body.
  Result<int> Stream(const std::string& target, const std::function<bool(std::string_view)>& on_data,
                     std::chrono::milliseconds idle_timeout = std::chrono::seconds(60));
  // The same with any method and a JSON body (streamed completions). Any answer's body (a non-200
  // one too) goes to on_data as it arrives; the status is returned. A stream always ends its
  // connection; an idle timeout is Unavailable.
  Result<int> StreamRequest(const std::string& method, const std::string& target, const std::string& body,
                            const std::function<bool(std::string_view)>& on_data,
                            std::chrono::milliseconds idle_timeout = std::chrono::seconds(60));
  const std::string& base() const { return base_; }
  // Headers Send adds to every request from now on (e.g. a webhook's signature), replacing earlier ones.
  void SetExtraHeaders(std::vector<std::pair<std::string, std::string>> headers) { extra_ = std::move(headers); }
  // The bearer token later calls send (empty: none). Not thread-safe, as the rest.
  void SetToken(std::string token) { token_ = std::move(token); }
  // Breaks a call in progress on another thread (it returns Unavailable, "interrupted"), or, when
  // none has its connection yet, the next Send. The one thread-safe method.
  void Interrupt();

 private:
  struct Impl;
  std::string base_, token_;
  std::chrono::milliseconds timeout_ = std::chrono::seconds(30);
  std::vector<std::pair<std::string, std::string>> extra_;
  std::unique_ptr<Impl> impl_;
};

// The PEM file of CA certificates that clients made from now on trust for https:// ("" : the
// system's store). Thread-safe; set it once at start (--ca-file).
void SetDefaultCaFile(std::string path);

}  // namespace gauntlet::net
