// Transport-neutral HTTP request/response types: handlers see these, never Beast types, so only
// api/http_server.cc and api/http_client.cc pay Beast's compile time.
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

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // raw target, path and query
  std::string path;    // decoded path without query
  std::multimap<std::string, std::string> query;  // decoded
  std::map<std::string, std::string> headers;     // lower-case names
  std::string body;
  std::map<std::string, std::string> params;  // path parameters from the route pattern ({id} -> "12")
  std::string role;                           // the caller's token role ("admin" where no token is needed)

  // First query value for `key`, if any.
  std::optional<std::string> Query(const std::string& key) const;
  std::string Header(const std::string& lower_name) const;
};

class Deferred;
class Stream;

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
// to complete it.
class Deferred {
 public:
  Deferred(std::chrono::milliseconds timeout, std::function<Response()> on_timeout)
      : timeout_(timeout), on_timeout_(std::move(on_timeout)) {}
  // Delivers the answer; returns false if it was already answered (or timed out).
  bool Complete(Response r);
  // Called once by the server: `cb` receives the answer (possibly at once).
  void Wait(std::function<void(Response)> cb);
  // Called by the server when the timeout passes; answers with on_timeout() unless answered.
  void Expire();
  // Called by the server if the client went away; the owner may drop its reference.
  bool done() const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Optional hook run when the wait ends without Complete (timeout or disconnect).
  std::function<void()> on_abandon;
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
// thread, with a chunk or nullopt for the end. The server pulls again after each write.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual void Pull(std::function<void(std::optional<std::string>)> cb) = 0;
  // Called when the client disconnects.
  virtual void Close() {}
};

// How a handler answers through `d`: directly with its answer when it is already complete (no
// deferred round trip), else as a deferred response the server waits on.
Response Later(std::shared_ptr<Deferred> d);

// application/problem+json with the field at fault (when there is one).
Response Problem(int status, const std::string& title, const std::string& detail, const std::string& field = {});
Response Json(int status, const nlohmann::json& body);
// A body of any type (CSV, Prometheus text, a prebuilt JSON document); 204 with no body.
Response Text(int status, std::string content_type, std::string body);
Response NoContent();
inline Response Json(const nlohmann::json& body) { return Json(200, body); }

// Parses a JSON body; throws BadJson (with a message fit for the client) on syntax errors or
// nesting deeper than `max_depth`.
struct BadJson : std::runtime_error {
  using std::runtime_error::runtime_error;
};
nlohmann::json ParseJson(const std::string& body, int max_depth = 64);

std::string UrlDecode(std::string_view s);
std::string ReasonPhrase(int status);

}  // namespace gauntlet::http
