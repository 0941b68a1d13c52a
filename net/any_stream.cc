#include "net/any_stream.h"

#include <boost/asio/append.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>

#include <optional>

namespace gauntlet::net {
namespace beast = boost::beast;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// Exactly one of the two is set, for the stream's whole life.
struct AnyStream::Impl {
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
};

AnyStream::AnyStream(tcp::socket&& socket) : impl_(new Impl) { impl_->plain.emplace(std::move(socket)); }
AnyStream::AnyStream(const executor_type& ex) : impl_(new Impl) { impl_->plain.emplace(ex); }
AnyStream::AnyStream(tcp::socket&& socket, ssl::context& ctx) : impl_(new Impl) {
  impl_->secure.emplace(std::move(socket), ctx);
}
AnyStream::AnyStream(const executor_type& ex, ssl::context& ctx) : impl_(new Impl) { impl_->secure.emplace(ex, ctx); }
AnyStream::~AnyStream() = default;

beast::tcp_stream& AnyStream::tcp() { return impl_->secure ? beast::get_lowest_layer(*impl_->secure) : *impl_->plain; }

bool AnyStream::tls() const { return impl_->secure.has_value(); }

AnyStream::executor_type AnyStream::get_executor() { return tcp().get_executor(); }

void AnyStream::VerifyHostName(const std::string& host) {
  if (!impl_->secure) return;
  SSL_set_tlsext_host_name(impl_->secure->native_handle(), host.c_str());
  impl_->secure->set_verify_callback(ssl::host_name_verification(host));
}

// Boost 1.81's any_completion_executor cannot be required to be blocking.never, which Beast's
// tcp_stream asks of a handler's executor: the erased handler runs on the stream's executor
// instead. That is where its unerased self would have run: none of the server's or the client's
// handlers names an executor of its own, and the composed operations above them complete through
// the stream's.
void AnyStream::ReadSome(asio::mutable_buffer b, ReadWriteHandler h) {
  auto bound = asio::bind_executor(get_executor(), std::move(h));
  if (impl_->secure) impl_->secure->async_read_some(b, std::move(bound));
  else impl_->plain->async_read_some(b, std::move(bound));
}

void AnyStream::WriteSome(std::span<const asio::const_buffer> b, ReadWriteHandler h) {
  auto bound = asio::bind_executor(get_executor(), std::move(h));
  if (impl_->secure) impl_->secure->async_write_some(b, std::move(bound));
  else impl_->plain->async_write_some(b, std::move(bound));
}

void AnyStream::Handshake(ssl::stream_base::handshake_type t, HandshakeHandler h) {
  if (impl_->secure) return impl_->secure->async_handshake(t, asio::bind_executor(get_executor(), std::move(h)));
  // Nothing to do: complete as an asynchronous operation does, never inside the call.
  asio::post(get_executor(), asio::append(std::move(h), boost::system::error_code{}));
}

}  // namespace gauntlet::net
