#include "net/request_head.h"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <cctype>
#include <string>

namespace gauntlet::net {
namespace bhttp = boost::beast::http;

std::optional<Response> HostProblem(const BeastRequest& h) {
  // Two Hosts that may disagree are how requests are smuggled: which one a proxy and this server
  // each believe is not defined, so neither is served (RFC 9112 3.2).
  const size_t hosts = h.count(bhttp::field::host);
  if (hosts == 1 || (hosts == 0 && h.version() < 11)) return std::nullopt;
  return Problem(400, "Bad Request",
                 hosts > 1 ? "the request has " + std::to_string(hosts) + " Host headers; send one"
                           : "an HTTP/1.1 request needs a Host header",
                 "header.host");
}

Request HeadProbe(const BeastRequest& h) {
  Request probe;
  probe.method = std::string(h.method_string());
  probe.target = std::string(h.target());
  ParseTarget(probe);
  return probe;
}

size_t MostBodyLimit(const ServerOptions& opts) {
  size_t most = opts.body_limit;
  for (auto& [prefix, limit] : opts.large_bodies) most = std::max(most, limit);
  return most;
}

size_t BodyLimitFor(std::string_view target, const ServerOptions& opts) {
  for (auto& [prefix, limit] : opts.large_bodies)
    if (target.substr(0, prefix.size()) == prefix) return limit;
  return opts.body_limit;
}

size_t BodyLimitFor(std::string_view target, const ServerOptions& opts, const RouteMatch& match) {
  const size_t limit = BodyLimitFor(target, opts);
  if (match.route && match.route->body_limit > 0 && match.route->body_limit < limit) return match.route->body_limit;
  return limit;
}

std::optional<Response> ReadErrorProblem(const boost::system::error_code& ec, size_t limit) {
  namespace asio = boost::asio;
  if (ec == bhttp::error::body_limit)
    return Problem(413, "Payload Too Large", "the body is over this request's limit of " + std::to_string(limit) + " bytes",
                   "body");
  if (ec == bhttp::error::end_of_stream || ec == boost::beast::error::timeout || ec == asio::error::operation_aborted ||
      ec == asio::error::connection_reset || ec == asio::error::eof)
    return std::nullopt;
  if (ec.category() == boost::system::error_code(bhttp::error::bad_method).category())
    return Problem(400, "Bad Request", "malformed HTTP request: " + ec.message());
  return std::nullopt;
}

Request ToRequest(BeastRequest&& in) {
  Request r;
  r.method = std::string(in.method_string());
  r.target = std::string(in.target());
  ParseTarget(r);
  for (auto& f : in) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(tolower(c));
    r.headers[name] = std::string(f.value());
  }
  r.body = std::move(in.body());
  return r;
}

}  // namespace gauntlet::net
