// What the server decides from a request's head, before any of its body is read: whether the head
// is acceptable (one Host), which body limit applies, what a request that could not be read is
// answered, and the http::Request a Beast request becomes. Used by the server (http_server.cc)
// alone. Pure; thread-safe.
#pragma once
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>
#include <optional>
#include <string_view>

#include "http/http.h"
#include "net/http_server.h"

namespace gauntlet::net {

// http/'s messages and routes, which the server carries: named once here for the server's own
// files (http_server.cc, request_head.cc), the only ones that include this header.
using http::Deferred;
using http::Lane;
using http::Problem;
using http::Request;
using http::Response;
using http::RouteMatch;
using http::Router;
using http::Stream;

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// The 400 for a head without exactly one Host (none in HTTP/1.1, or several), naming header.host;
// nullopt when the head is acceptable.
std::optional<http::Response> HostProblem(const BeastRequest& head);
// A Request holding only the head's method and parsed target: enough to match its route.
http::Request HeadProbe(const BeastRequest& head);

// The largest body any request may declare (opts.body_limit or a large_bodies limit): a head is
// read under it, since its route is not known yet.
size_t MostBodyLimit(const ServerOptions& opts);
// The body limit of a request to `target`: its first large_bodies prefix's, else opts.body_limit.
size_t BodyLimitFor(std::string_view target, const ServerOptions& opts);
// The body limit of a request whose route is matched: BodyLimitFor, lowered to the route's own
// body_limit when that is set and smaller.
size_t BodyLimitFor(std::string_view target, const ServerOptions& opts, const http::RouteMatch& match);

// The answer to a request whose reading failed with `ec`: a 413 naming the body and `limit` for a
// body over it, a 400 for a request Beast could not parse; nullopt when the connection just ended
// (closed, reset, timed out), which gets no answer.
std::optional<http::Response> ReadErrorProblem(const boost::system::error_code& ec, size_t limit);

// `in` as a Request: method, parsed target, headers with lower-case names; the body is moved out
// of `in`, not copied (a large upload travels once).
http::Request ToRequest(BeastRequest&& in);

}  // namespace gauntlet::net
