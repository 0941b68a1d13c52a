// What the server takes from the system and how it treats running short: its listening socket, its
// TLS context, loaded from the PEM files, and its connection cap, from the descriptor limit; an
// accept that fails for want of a resource. Used by the server (http_server.cc) alone.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include "net/http_server.h"

namespace gauntlet::net {

// Opens, binds and listens `acceptor` on opts.host:opts.port (reusing the address); throws
// std::runtime_error with the reason on a bad address or a busy port.
void Listen(boost::asio::ip::tcp::acceptor& acceptor, const ServerOptions& opts);
// Loads opts.tls_cert and opts.tls_key into `ctx` (TLS 1.2 or later); throws std::runtime_error
// naming what is wrong: one of the two unset, a file unreadable, a key that does not match.
void LoadTls(boost::asio::ssl::context& ctx, const ServerOptions& opts);
// The connection cap when none is set: the descriptor limit (RLIMIT_NOFILE) less what the store,
// the local worker and the rest need, at least 16. Thread-safe.
int DefaultMaxConnections();
// True for an accept that failed for want of a resource that frees up with time (EMFILE, ENFILE,
// ENOBUFS, ENOMEM): retrying at once would fail again at once. Pure.
bool ResourceShortage(const boost::system::error_code& ec);

}  // namespace gauntlet::net
