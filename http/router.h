// The route table: {verb, path pattern, role, handler}. Dispatch matches the path first, then the
// verb, so an unknown path is 404 and a known path with the wrong verb is 405 with Allow.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "http/auth.h"
#include "http/http.h"

namespace gauntlet::http {

// Runs on a server thread, once per request; may throw (Dispatch answers for it).
using Handler = std::function<Response(Request&)>;

// Where a route's handler runs. kIo: on the server's I/O threads, at once (the worker protocol:
// short, in memory, never a store read that grows with the data). kPool: on the server's handler
// pool, so that no read, however heavy or many, holds an I/O thread and delays a worker's call.
enum class Lane { kPool, kIo };

struct Route {
  std::string method;   // GET, POST, PUT
  std::string pattern;  // "/api/v1/sweeps/{id}"; a trailing "/*" matches any rest (static files)
  Role role;            // the least role allowed to call it
  Handler handler;
  Lane lane = Lane::kPool;
  // The largest body this route takes, in bytes (the server answers 413 past it before reading
  // it whole); 0: the server's own limit, which also caps this one.
  size_t body_limit = 0;
};

// Maps a bearer token that is not in the tokens file to the node it is the credential of (the
// per-node credential registration hands a worker), or nullopt. Called on server threads.
using NodeCredentials = std::function<std::optional<int64_t>(const std::string& token)>;

// What Router::Match found for a request: the route it goes to (null: none; `allowed` then says
// whether the path exists under other verbs: 405, or not: 404), and the path's parameters. A plain
// value pointing into the Router's table: valid while the Router lives.
struct RouteMatch {
  const Route* route = nullptr;
  std::map<std::string, std::string> params;
  std::vector<std::string> allowed;  // with no route: the verbs of every route whose pattern fits the path
  // Where the handler runs (kIo when no route matches: a 404 or 405 costs nothing).
  Lane lane() const { return route ? route->lane : Lane::kIo; }
};

// Immutable after construction: every method is thread-safe.
class Router {
 public:
  // Routes match in the order given. `auth` may be null (no tokens: every route open, role "admin");
  // else it must outlive the router.
  // `local_only`: the daemon listens on loopback without tokens, so anything that can reach the port
  // may call it; then a browser page must not: requests whose Host is not a loopback name (DNS
  // rebinding), whose Origin is another site, or writes from a page that are not JSON are 403.
  // `nodes` (may be empty) recognises node credentials: such a caller has role worker and
  // req.node set; handlers decide what it may touch.
  Router(std::vector<Route> routes, const Auth* auth, bool local_only = false, NodeCredentials nodes = {})
      : routes_(std::move(routes)), auth_(auth), local_only_(local_only), nodes_(std::move(nodes)) {}
  // Finds the route (HEAD is served by GET's), checks the token (401, 403), sets req.params and
  // req.role, runs the handler. A BadJson it throws is answered 400; any other std::exception is
  // logged and answered 500 without internals.
  Response Dispatch(Request& req) const { return Dispatch(req, Match(req)); }
  // Dispatch with the match already made (the server chose the lane by it): `m` must be
  // Match(req) of this router, so the route table is walked once per request.
  Response Dispatch(Request& req, RouteMatch m) const;
  // The route `req` goes to (HEAD is served by GET's: the first route whose pattern and verb fit),
  // its parameters and the verbs the path allows. Pure.
  RouteMatch Match(const Request& req) const;
  // The lane of the route `req` goes to (kIo when none matches). Pure.
  Lane LaneOf(const Request& req) const { return Match(req).lane(); }
  const std::vector<Route>& routes() const { return routes_; }

 private:
  // Whether `path` fits `pattern`; with `params` non-null, its parameters (decoded) too.
  static bool MatchPattern(const std::string& pattern, const std::string& path, std::map<std::string, std::string>* params);
  std::vector<Route> routes_;
  const Auth* auth_;
  bool local_only_;
  NodeCredentials nodes_;
};

}  // namespace gauntlet::http
