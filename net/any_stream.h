#pragma once
// One connection's byte stream, plain TCP or TLS over TCP, behind one type. Beast's HTTP operations
// (read a header, a body, write a message, a chunk) are templates over the stream and the handler;
// over two stream types every one of them was compiled twice in the server and twice in the client,
// most of the two heaviest translation units of the build (docs/DECISIONS.md "Build time"). Over
// this type they compile once: what differs (the TLS layer) is one branch in any_stream.cc, reached
// with the handler type-erased (asio::any_completion_handler: one allocation per read or write).
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace gauntlet::net {

// An AsyncReadStream and AsyncWriteStream (Beast's and Asio's composed operations accept it). Not
// thread-safe: like the streams it wraps, one read and one write at a time, from its executor.
class AnyStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using ReadWriteHandler = boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;
  using HandshakeHandler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

  // A plain stream over `socket`.
  explicit AnyStream(boost::asio::ip::tcp::socket&& socket);
  // A plain stream, not yet connected, on `ex`.
  explicit AnyStream(const executor_type& ex);
  // A TLS stream over `socket` (or, second form, not yet connected, on `ex`); `ctx` must outlive it.
  AnyStream(boost::asio::ip::tcp::socket&& socket, boost::asio::ssl::context& ctx);
  AnyStream(const executor_type& ex, boost::asio::ssl::context& ctx);
  ~AnyStream();
  AnyStream(const AnyStream&) = delete;
  AnyStream& operator=(const AnyStream&) = delete;

  // The TCP stream under it: the expiry (expires_after), the socket, connect and close.
  boost::beast::tcp_stream& tcp();
  bool tls() const;
  executor_type get_executor();

  // TLS only: the server name sent (SNI) and the name the server's certificate must carry.
  void VerifyHostName(const std::string& host);

  template <class MutableBufferSequence, class Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [](auto handler, AnyStream* self, boost::asio::mutable_buffer b) { self->ReadSome(b, std::move(handler)); },
        token, this, First(buffers));
  }

  template <class ConstBufferSequence, class Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [](auto handler, AnyStream* self, std::span<const boost::asio::const_buffer> b) {
          self->WriteSome(b, std::move(handler));
        },
        token, this, Gather(buffers));
  }

  // TLS only (a plain stream completes at once with no error).
  template <class Token>
  auto async_handshake(boost::asio::ssl::stream_base::handshake_type type, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [](auto handler, AnyStream* self, boost::asio::ssl::stream_base::handshake_type t) {
          self->Handshake(t, std::move(handler));
        },
        token, this, type);
  }

 private:
  struct Impl;
  void ReadSome(boost::asio::mutable_buffer b, ReadWriteHandler h);
  void WriteSome(std::span<const boost::asio::const_buffer> b, ReadWriteHandler h);
  void Handshake(boost::asio::ssl::stream_base::handshake_type t, HandshakeHandler h);

  // A read_some may fill any prefix of its buffers: the first that is not empty is enough.
  template <class MutableBufferSequence>
  static boost::asio::mutable_buffer First(const MutableBufferSequence& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it)
      if (boost::asio::mutable_buffer b(*it); b.size() > 0) return b;
    return {};
  }
  // A write_some may write any prefix of its buffers: up to kGather of them, copied here, where they
  // stay until it completes (one write at a time).
  template <class ConstBufferSequence>
  std::span<const boost::asio::const_buffer> Gather(const ConstBufferSequence& buffers) {
    std::size_t n = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && n < gather_.size(); ++it)
      if (boost::asio::const_buffer b(*it); b.size() > 0) gather_[n++] = b;
    return {gather_.data(), n};
  }

  static constexpr std::size_t kGather = 64;
  std::array<boost::asio::const_buffer, kGather> gather_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet::net
