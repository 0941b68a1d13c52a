#include "http/router.h"

#include <spdlog/spdlog.h>

#include "core/utf8.h"

namespace gauntlet::http {

bool Router::MatchPattern(const std::string& pattern, const std::string& path, std::map<std::string, std::string>* params) {
  // `params` null: whether the path fits, with no allocation (most routes of a request do not fit).
  size_t pi = 0, si = 0;
  if (params) params->clear();
  while (pi < pattern.size() && si <= path.size()) {
    if (pi + 2 == pattern.size() && pattern[pi] == '/' && pattern[pi + 1] == '*') {
      if (si < path.size() && path[si] != '/') return false;
      if (params) (*params)["*"] = si < path.size() ? UrlDecode(path.substr(si + 1)) : "";
      return true;
    }
    if (pattern[pi] == '{') {
      size_t end = pattern.find('}', pi);
      size_t seg_end = path.find('/', si);
      if (seg_end == std::string::npos) seg_end = path.size();
      if (seg_end == si) return false;
      if (params) (*params)[pattern.substr(pi + 1, end - pi - 1)] = UrlDecode(path.substr(si, seg_end - si));
      pi = end + 1;
      si = seg_end;
      continue;
    }
    if (si >= path.size() || pattern[pi] != path[si]) return false;
    ++pi;
    ++si;
  }
  return pi == pattern.size() && si == path.size();
}

namespace {
// The part of a request that is not UTF-8, or "" when all of it is: such bytes are refused at the
// door (400), so nothing inside ever handles, stores or echoes them.
std::string NotUtf8(const Request& req) {
  if (!ValidUtf8(req.path)) return "path";
  for (auto& [k, v] : req.query)
    if (!ValidUtf8(k) || !ValidUtf8(v)) return "query." + (ValidUtf8(k) ? k : std::string("?"));
  for (auto& [k, v] : req.headers)
    if (!ValidUtf8(k) || !ValidUtf8(v)) return "header." + (ValidUtf8(k) ? k : std::string("?"));
  return "";
}
}  // namespace

namespace {
// The host part of a Host or Origin value ("http://127.0.0.1:8080" -> "127.0.0.1", "[::1]:80" -> "::1").
std::string HostOf(std::string v) {
  if (auto s = v.find("://"); s != std::string::npos) v = v.substr(s + 3);
  if (!v.empty() && v[0] == '[') return v.substr(1, v.find(']') - 1);
  return v.substr(0, v.find(':'));
}

bool LoopbackName(const std::string& h) {
  if (h == "localhost" || h == "::1") return true;
  int a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  return sscanf(h.c_str(), "%d.%d.%d.%d%c", &a, &b, &c, &d, &tail) == 4 && a == 127;
}

// Why a request to a token-less loopback daemon must be refused as coming from a web page; "" if not.
std::string CrossSite(const Request& req) {
  const std::string host = req.Header("host"), origin = req.Header("origin");
  if (!host.empty() && !LoopbackName(HostOf(host)))
    return "Host '" + host + "' is not this daemon's loopback address";
  if (origin.empty()) return "";  // not a browser: the CLI, a worker, curl
  if (origin == "null" || !LoopbackName(HostOf(origin)) || origin.substr(origin.find("://") + 3) != host)
    return "a page from " + origin + " may not call this daemon";
  const bool write = req.method != "GET" && req.method != "HEAD";
  const std::string type = req.Header("content-type");
  if (write && type.find("application/json") == std::string::npos && type.find("yaml") == std::string::npos)
    return "a write from a page must be application/json";
  return "";
}
}  // namespace

RouteMatch Router::Match(const Request& req) const {
  RouteMatch m;
  std::map<std::string, std::string> p;
  // Matched as sent: decoding first would let "%2F" split a parameter into two segments.
  const std::string& path = req.raw_path.empty() ? req.path : req.raw_path;
  for (const auto& r : routes_) {
    // The path is tried first without its parameters: they are decoded for the route that wins only.
    if (!MatchPattern(r.pattern, path, nullptr)) continue;
    bool method_ok = r.method == req.method || (r.method == "GET" && req.method == "HEAD");
    if (method_ok) {  // the first fit wins; `allowed` matters only when none fits
      MatchPattern(r.pattern, path, &p);
      m.route = &r;
      m.params = std::move(p);
      return m;
    }
    m.allowed.push_back(r.method);
  }
  return m;
}

Response Router::Dispatch(Request& req, RouteMatch m) const {
  if (std::string bad = NotUtf8(req); !bad.empty())
    return Problem(400, "Bad Request", "the request's " + bad + " is not valid UTF-8", bad);
  if (local_only_)
    if (std::string why = CrossSite(req); !why.empty()) return Problem(403, "Forbidden", why);
  const Route* hit = m.route;
  if (!hit) {
    if (m.allowed.empty()) return Problem(404, "Not Found", "no route for " + req.path);
    std::string allow;
    for (auto& verb : m.allowed)
      if (allow.find(verb) == std::string::npos) allow += (allow.empty() ? "" : ", ") + verb;
    Response r = Problem(405, "Method Not Allowed", req.method + " is not allowed on " + req.path + "; use " + allow);
    r.headers.emplace_back("Allow", allow);
    return r;
  }
  req.params = std::move(m.params);
  if (auth_ && hit->role != Role::kPublic) {
    auto token = auth_->Find(req.Header("authorization"));
    std::optional<Role> who;
    if (token) {
      who = token->role;
      req.caller = token->name;
    }
    const std::optional<std::string> bearer = BearerToken(req.Header("authorization"));
    if (!who && nodes_ && bearer) {
      if (auto node = nodes_(*bearer)) {
        who = Role::kWorker;
        req.node = *node;
      }
    }
    if (!who) {
      // Two different mistakes with two different fixes: send a token, or send the right one.
      const bool sent = bearer.has_value();
      return Problem(401, "Unauthorized", sent ? "token not recognised: it is not in the daemon's tokens file"
                                               : "a bearer token is required (Authorization: Bearer TOKEN)");
    }
    if (!Allows(*who, hit->role))
      return Problem(403, "Forbidden", "the token's role '" + RoleName(*who) + "' may not do this; it needs '" +
                                           RoleName(hit->role) + "'");
    req.role = RoleName(*who);
  } else {
    req.role = "admin";
  }
  try {
    return hit->handler(req);
  } catch (const BadJson& e) {
    return Problem(400, "Bad Request", e.what(), "body");
  } catch (const nlohmann::json::type_error& e) {
    // A handler read a field of the body as the type it must be and it was not (a string where a
    // boolean goes): the client's mistake, whatever field it was, never the server's.
    return Problem(400, "Bad Request", std::string("a field of the body has the wrong type: ") + e.what(), "body");
  } catch (const std::exception& e) {
    spdlog::error("{} {}: handler failed: {}", req.method, req.path, e.what());
    return Problem(500, "Internal Server Error", "the server failed to answer; see its log");
  }
}

}  // namespace gauntlet::http
