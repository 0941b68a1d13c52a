#include "net/server_resources.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <cerrno>
#include <stdexcept>

namespace gauntlet::net {
namespace asio = boost::asio;
namespace ssl = asio::ssl;

void Listen(asio::ip::tcp::acceptor& acceptor, const ServerOptions& opts) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(opts.host, ec);
  if (ec) throw std::runtime_error("bad listen address '" + opts.host + "': " + ec.message());
  asio::ip::tcp::endpoint ep(addr, opts.port);
  acceptor.open(ep.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(ep, ec);
  if (ec) throw std::runtime_error("cannot listen on " + opts.host + ":" + std::to_string(opts.port) + ": " + ec.message());
  acceptor.listen(asio::socket_base::max_listen_connections);
}

void LoadTls(ssl::context& ctx, const ServerOptions& opts) {
  boost::system::error_code ec;
  if (opts.tls_cert.empty() || opts.tls_key.empty())
    throw std::runtime_error("TLS needs both a certificate (--tls-cert) and its private key (--tls-key)");
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  ctx.use_certificate_chain_file(opts.tls_cert, ec);
  if (ec) throw std::runtime_error("cannot load the TLS certificate " + opts.tls_cert + ": " + ec.message());
  ctx.use_private_key_file(opts.tls_key, ssl::context::pem, ec);
  if (ec) throw std::runtime_error("cannot load the TLS private key " + opts.tls_key + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw std::runtime_error("the TLS private key " + opts.tls_key + " does not match " + opts.tls_cert);
}

int DefaultMaxConnections() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  const rlim_t n = rl.rlim_cur == RLIM_INFINITY ? 65536 : rl.rlim_cur;
  return static_cast<int>(std::max<rlim_t>(16, std::min<rlim_t>(n, 1 << 20) - std::min<rlim_t>(n / 2, 128)));
}

// The spin issue 19 measured at 98% CPU came from retrying these at once.
bool ResourceShortage(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::error_code(ENFILE, asio::error::get_system_category()) ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

}  // namespace gauntlet::net
