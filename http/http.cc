#include "http/http.h"

#include <cctype>

#include "core/utf8.h"

namespace gauntlet::http {

std::optional<std::string> Request::Query(const std::string& key) const {
  auto it = query.find(key);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::string Request::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

bool Deferred::Complete(Response r) {
  std::function<void(Response)> cb;
  {
    std::lock_guard lock(mu_);
    if (done_) return false;
    done_ = true;
    if (!cb_) {
      ready_ = std::move(r);
      return true;
    }
    cb = std::move(cb_);
  }
  cb(std::move(r));
  return true;
}

void Deferred::Wait(std::function<void(Response)> cb) {
  std::optional<Response> r;
  {
    std::lock_guard lock(mu_);
    if (ready_) r = std::move(ready_);
    else cb_ = std::move(cb);
  }
  if (r) cb(std::move(*r));
}

void Deferred::Expire() {
  std::function<void(Response)> cb;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    cb = std::move(cb_);
  }
  if (on_abandon) on_abandon();
  Response r = on_timeout_();
  if (cb) return cb(std::move(r));
  // Nobody waits yet (the server expires a deferred it is about to wait on when it is stopping or
  // its client has closed): keep the answer for Wait, or it would never be sent and the connection
  // would hang until the client gave up. A Wait that came meanwhile took the callback slot.
  std::function<void(Response)> late;
  {
    std::lock_guard lock(mu_);
    if (cb_) late = std::move(cb_);
    else ready_ = std::move(r);
  }
  if (late) late(std::move(r));
}

std::optional<Response> Deferred::TakeReady() {
  std::lock_guard lock(mu_);
  std::optional<Response> r = std::move(ready_);
  ready_.reset();
  return r;
}

Response Later(std::shared_ptr<Deferred> d) {
  if (auto r = d->TakeReady()) return std::move(*r);
  Response out;
  out.deferred = std::move(d);
  return out;
}

bool Deferred::done() const {
  std::lock_guard lock(mu_);
  return done_;
}

Response Problem(int status, const std::string& title, const std::string& detail, const std::string& field) {
  nlohmann::json j = {{"type", "about:blank"}, {"title", title}, {"status", status}, {"detail", detail}};
  if (!field.empty()) j["field"] = field;
  Response r;
  r.status = status;
  r.content_type = "application/problem+json";
  r.body = SafeDump(j);  // a detail may quote the request's own bytes
  return r;
}

Response Text(int status, std::string content_type, std::string body) {
  Response r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

Response NoContent() { return Text(204, "application/json", ""); }

Response Json(int status, const nlohmann::json& body) {
  Response r;
  r.status = status;
  r.body = SafeDump(body);
  return r;
}

nlohmann::json ParseJson(const std::string& body, int max_depth) {
  struct TooDeep {};
  try {
    return nlohmann::json::parse(body, [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > max_depth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    throw BadJson("JSON is nested deeper than " + std::to_string(max_depth) + " levels");
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number past double's range (1e400): both the client's
    // text. Only parse_error was caught, so {"x": 1e400} was a 500.
    std::string what = e.what();
    auto pos = what.find("] ");
    throw BadJson("malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
  }
}

void ParseTarget(Request& r) {
  auto q = r.target.find('?');
  r.raw_path = r.target.substr(0, q);
  r.path = UrlDecode(r.raw_path);
  if (q == std::string::npos) return;
  std::string_view qs(r.target);
  qs.remove_prefix(q + 1);
  while (!qs.empty()) {
    auto amp = qs.find('&');
    std::string_view kv = qs.substr(0, amp);
    auto eq = kv.find('=');
    if (!kv.empty())
      r.query.emplace(UrlDecode(kv.substr(0, eq)), eq == std::string_view::npos ? "" : UrlDecode(kv.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    qs.remove_prefix(amp + 1);
  }
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') out += ' ';
    else if (s[i] == '%' && i + 2 < s.size() && isxdigit(s[i + 1]) && isxdigit(s[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else out += s[i];
  }
  return out;
}

std::string ReasonPhrase(int s) {
  switch (s) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status " + std::to_string(s);
  }
}

std::string UrlEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace gauntlet::http
