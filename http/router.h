// The route table: {verb, path pattern, role, handler}. Dispatch matches the path first, then the
// verb, so an unknown path is 404 and a known path with the wrong verb is 405 with Allow.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "http/auth.h"
#include "http/http.h"

namespace gauntlet::http {

using Handler = std::function<Response(Request&)>;

struct Route {
  std::string method;   // GET, POST, PUT
  std::string pattern;  // "/api/v1/sweeps/{id}"; a trailing "/*" matches any rest (static files)
  Role role;            // the least role allowed to call it
  Handler handler;
};

class Router {
 public:
  Router(std::vector<Route> routes, const Auth* auth) : routes_(std::move(routes)), auth_(auth) {}
  // Finds the route, checks the token, runs the handler. Never throws: a handler's exception is
  // logged and answered 500 without internals. Thread-safe (the table is immutable).
  Response Dispatch(Request& req) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  static bool Match(const std::string& pattern, const std::string& path, std::map<std::string, std::string>* params);
  std::vector<Route> routes_;
  const Auth* auth_;
};

}  // namespace gauntlet::http
