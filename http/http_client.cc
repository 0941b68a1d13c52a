#include "http/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>

#include <atomic>
#include <functional>

namespace gauntlet::http {
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string ClientResponse::Header(const std::string& name) const {
  for (auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return "";
}

std::string UrlEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

struct Client::Impl {
  asio::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  std::string host, port, prefix;
  beast::flat_buffer buffer;
  std::atomic<int> fd{-1};  // the socket in use, for Interrupt from another thread
  std::atomic<bool> interrupted{false};  // Interrupt came: the broken call must not be retried

  // Drops the connection; fd goes with it, so Interrupt never shuts down a descriptor number that
  // the process may since have reused for another socket.
  void Drop() {
    fd = -1;
    stream.reset();
    buffer.clear();
  }

  Status Connect(std::chrono::milliseconds timeout) {
    if (stream && stream->socket().is_open()) return Status::Ok();
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, port, ec);
    if (ec) return Status(Code::kUnavailable, "cannot resolve " + host + ": " + ec.message());
    stream.emplace(ioc);
    stream->expires_after(timeout);
    stream->connect(results, ec);
    if (ec) {
      stream.reset();
      return Status(Code::kUnavailable, "cannot connect to " + host + ":" + port + ": " + ec.message());
    }
    stream->socket().set_option(tcp::no_delay(true));
    fd = stream->socket().native_handle();
    buffer.clear();
    return Status::Ok();
  }
};

Client::Client(std::string base, std::string token) : base_(std::move(base)), token_(std::move(token)), impl_(new Impl) {
  std::string rest = base_;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  impl_->prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!impl_->prefix.empty() && impl_->prefix.back() == '/') impl_->prefix.pop_back();
  auto colon = hostport.rfind(':');
  impl_->host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  impl_->port = colon == std::string::npos ? "80" : hostport.substr(colon + 1);
  if (impl_->host.size() > 1 && impl_->host.front() == '[') impl_->host = impl_->host.substr(1, impl_->host.size() - 2);
}

Client::~Client() = default;

void Client::Interrupt() {
  int fd = impl_->fd.load();
  if (fd < 0) return;
  impl_->interrupted = true;
  ::shutdown(fd, SHUT_RDWR);
}

Result<ClientResponse> Client::Send(const std::string& method, const std::string& target, const std::string& body,
                                    const std::string& content_type, std::chrono::milliseconds timeout) {
  // One retry on a fresh connection: a keep-alive connection the server closed while idle fails
  // on first use, which says nothing about the server.
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = impl_->stream.has_value();
    if (Status s = impl_->Connect(timeout); !s.ok()) return s;
    bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), impl_->prefix + target, 11);
    req.set(bhttp::field::host, impl_->host);
    req.set(bhttp::field::user_agent, "gauntlet/" GAUNTLET_VERSION);
    if (!token_.empty()) req.set(bhttp::field::authorization, "Bearer " + token_);
    for (auto& [k, v] : extra_) req.set(k, v);
    if (!body.empty() || method == "POST" || method == "PUT") {
      req.set(bhttp::field::content_type, content_type);
      req.body() = body;
      req.prepare_payload();
    }
    req.keep_alive(true);
    beast::error_code ec;
    impl_->stream->expires_after(timeout);
    bhttp::write(*impl_->stream, req, ec);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(256u << 20);
    if (!ec) bhttp::read(*impl_->stream, impl_->buffer, parser, ec);
    if (ec) {
      impl_->Drop();
      // A broken keep-alive connection is retried once; one that Interrupt broke is not (the caller
      // is stopping, say a worker draining out of its lease long-poll).
      if (impl_->interrupted.exchange(false))
        return Status(Code::kUnavailable, method + " " + target + ": interrupted");
      if (reused && attempt == 0 && ec != beast::error::timeout) continue;
      return Status(Code::kUnavailable, method + " " + target + ": " + ec.message());
    }
    impl_->interrupted = false;
    auto res = parser.release();
    ClientResponse out;
    out.status = res.result_int();
    out.body = std::move(res.body());
    for (auto& f : res) out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.content_type = out.Header("content-type");
    if (!res.keep_alive()) impl_->Drop();
    return out;
  }
  return Status(Code::kUnavailable, "unreachable");
}

Result<int> Client::Stream(const std::string& target, const std::function<bool(std::string_view)>& on_data,
                           std::chrono::milliseconds idle_timeout) {
  return StreamRequest("GET", target, "", on_data, idle_timeout);
}

Result<int> Client::StreamRequest(const std::string& method, const std::string& target, const std::string& body,
                                  const std::function<bool(std::string_view)>& on_data,
                                  std::chrono::milliseconds idle_timeout) {
  // A stream leaves the connection in an unknown state; it always ends with a fresh one.
  impl_->Drop();
  impl_->interrupted = false;
  struct DropAtEnd {
    Impl* impl;
    ~DropAtEnd() { impl->Drop(); }
  } drop{impl_.get()};
  if (Status s = impl_->Connect(idle_timeout); !s.ok()) return s;
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), impl_->prefix + target, 11);
  req.set(bhttp::field::host, impl_->host);
  req.set(bhttp::field::accept, "text/event-stream");
  if (!token_.empty()) req.set(bhttp::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();
  beast::error_code ec;
  impl_->stream->expires_after(idle_timeout);
  bhttp::write(*impl_->stream, req, ec);
  if (ec) return Status(Code::kUnavailable, ec.message());
  bhttp::response_parser<bhttp::buffer_body> p;
  p.body_limit(boost::none);
  bhttp::read_header(*impl_->stream, impl_->buffer, p, ec);
  if (ec) return Status(Code::kUnavailable, ec.message());
  const int status = p.get().result_int();
  char buf[16384];
  while (!p.is_done()) {
    p.get().body().data = buf;
    p.get().body().size = sizeof buf;
    impl_->stream->expires_after(idle_timeout);
    // read_some: hand each chunk over as it arrives (SSE, streamed tokens); read() would wait
    // until the 16 KiB buffer filled or the stream ended.
    bhttp::read_some(*impl_->stream, impl_->buffer, p, ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) {
      if (ec == beast::error::timeout) return Status(Code::kUnavailable, "stream idle timeout");
      break;
    }
    size_t n = sizeof buf - p.get().body().size;
    if (n && !on_data(std::string_view(buf, n))) break;
  }
  return status;
}

}  // namespace gauntlet::http
