// Transport-neutral HTTP request/response types: handlers see these, never Beast types, so only
// net/http_server.cc and net/http_client.cc pay Beast's compile time.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gauntlet::http {

// A parsed request; the server owns it, the handler may change it during its call.
struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // raw target, path and query
  std::string path;    // decoded path without query
  // The path as sent, still percent-encoded: routes match on it, each parameter decoded once, so
  // an encoded slash (%2F) stays inside its segment. Empty: `path` is matched (a hand-made request).
  std::string raw_path;
  std::multimap<std::string, std::string> query;  // decoded
  std::map<std::string, std::string> headers;     // lower-case names
  std::string body;
  std::map<std::string, std::string> params;  // path parameters from the route pattern ({id} -> "12")
  std::string role;                           // the caller's token role ("admin" where no token is needed)
  // The node a worker's node credential speaks for (role "worker"); 0 for any other caller. A
  // worker-role caller with node 0 holds only the tokens file's worker token.
  int64_t node = 0;
  // The NAME its tokens-file line gives the caller's token; "" when it gives none, for a node
  // credential, and where no token is needed.
  std::string caller;

  // First query value for `key`, if any.
  std::optional<std::string> Query(const std::string& key) const;
  std::string Header(const std::string& lower_name) const;  // empty if absent
};

class Deferred;
class Stream;

// A value, except the deferred or stream it may carry, which the handler's side shares.
struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set for a long-poll: the server waits for Deferred::Complete (or its timeout) to answer.
  std::shared_ptr<Deferred> deferred;
  // Set for Server-Sent Events: the server writes chunks as the stream yields them.
  std::shared_ptr<Stream> stream;
};

// An answer given later (long-poll, or an acknowledgement waiting for its commit). Complete() may
// be called from any thread, at most once counts. A zero timeout arms no timer: the owner promises
// to complete it. Thread-safe, except on_abandon: set it before the handler returns.
class Deferred {
 public:
  Deferred(std::chrono::milliseconds timeout, std::function<Response()> on_timeout)
      : timeout_(timeout), on_timeout_(std::move(on_timeout)) {}
  // Delivers the answer; returns false if it was already answered (or timed out).
  bool Complete(Response r);
  // Called once by the server: `cb` receives the answer, at once or on the thread that calls
  // Complete (possibly under that caller's locks, so the server's `cb` only posts).
  void Wait(std::function<void(Response)> cb);
  // Called by the server when the timeout passes; answers with on_timeout() unless answered.
  void Expire();
  // True once answered or expired: a waiter that sees it may drop its reference.
  bool done() const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Optional hook run by Expire (the timeout, the server stopping, or the client closing its end
  // while it waits), before the timeout answer.
  std::function<void()> on_abandon;
  // Optional hook the server runs (on its I/O thread, no lock held) when the answer Complete gave
  // never reached the client: it had closed its end before the answer was written, or the write
  // failed. An answer that was written may still be lost in transit; this is what the server knows.
  std::function<void()> on_undelivered;
  // The answer, if Complete came before anyone waited (it is then taken: Wait sees nothing).
  std::optional<Response> TakeReady();

 private:
  mutable std::mutex mu_;
  bool done_ = false;
  std::optional<Response> ready_;
  std::function<void(Response)> cb_;
  std::chrono::milliseconds timeout_;
  std::function<Response()> on_timeout_;
};

// A stream of text chunks (SSE). Pull asks for the next chunk; the source calls `cb` once, from any
// thread (possibly under its own locks: the server's `cb` only posts), with a chunk or nullopt for
// the end. The server pulls again after each write, one Pull at a time.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual void Pull(std::function<void(std::optional<std::string>)> cb) = 0;
  // Called once the server is done with the stream: its end, or a failed write (how a client that
  // went away shows).
  virtual void Close() {}
};

// How a handler answers through `d`: directly with its answer when it is already complete (no
// deferred round trip), else as a deferred response the server waits on.
Response Later(std::shared_ptr<Deferred> d);

// The builders below are pure and thread-safe.
// application/problem+json with the field at fault (when there is one).
Response Problem(int status, const std::string& title, const std::string& detail, const std::string& field = {});
Response Json(int status, const nlohmann::json& body);  // invalid UTF-8 replaced, not thrown
// A body of any type (CSV, Prometheus text, a prebuilt JSON document).
Response Text(int status, std::string content_type, std::string body);
Response NoContent();  // 204 with no body
inline Response Json(const nlohmann::json& body) { return Json(200, body); }

// Parses a JSON body; throws BadJson (with a message fit for the client) on syntax errors or
// nesting deeper than `max_depth`.
struct BadJson : std::runtime_error {
  using std::runtime_error::runtime_error;
};
nlohmann::json ParseJson(const std::string& body, int max_depth = 64);

// %XX decoded and '+' read as a space (form encoding), in paths as in queries.
std::string UrlDecode(std::string_view s);
// Sets `r.path` (decoded), `r.raw_path` (as sent) and `r.query` (each key=value decoded, in order)
// from `r.target`. Pure.
void ParseTarget(Request& r);
std::string ReasonPhrase(int status);  // "Not Found"; "Status N" for codes it doesn't name
// URL-encodes a query value (RFC 3986 unreserved characters kept). Pure; thread-safe.
std::string UrlEncode(const std::string& s);

}  // namespace gauntlet::http
