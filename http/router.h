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

struct Route {
  std::string method;   // GET, POST, PUT
  std::string pattern;  // "/api/v1/sweeps/{id}"; a trailing "/*" matches any rest (static files)
  Role role;            // the least role allowed to call it
  Handler handler;
};

// Immutable after construction: every method is thread-safe.
class Router {
 public:
  // Routes match in the order given. `auth` may be null (no tokens: every route open, role "admin");
  // else it must outlive the router.
  Router(std::vector<Route> routes, const Auth* auth) : routes_(std::move(routes)), auth_(auth) {}
  // Finds the route (HEAD is served by GET's), checks the token (401, 403), sets req.params and
  // req.role, runs the handler. A BadJson it throws is answered 400; any other std::exception is
  // logged and answered 500 without internals.
  Response Dispatch(Request& req) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  static bool Match(const std::string& pattern, const std::string& path, std::map<std::string, std::string>* params);
  std::vector<Route> routes_;
  const Auth* auth_;
};

}  // namespace gauntlet::http
