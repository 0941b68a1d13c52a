#include "net/http_client.h"

#include "net/any_stream.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>

namespace gauntlet::net {
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {
std::mutex ca_mu;
std::string ca_file;  // guarded by ca_mu

using Deadline = std::chrono::steady_clock::time_point;

// "timed out after 1.5 s" for an error that is the stream's expiry, else the error's own words.
std::string Why(const beast::error_code& ec, std::chrono::milliseconds limit) {
  if (ec != beast::error::timeout) return ec.message();
  char buf[64];
  snprintf(buf, sizeof buf, "timed out after %.3g s", static_cast<double>(limit.count()) / 1000.0);
  return buf;
}
}  // namespace

void SetDefaultCaFile(std::string path) {
  std::lock_guard lock(ca_mu);
  ca_file = std::move(path);
}

std::string ClientResponse::Header(const std::string& name) const {
  for (auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return "";
}

struct Client::Impl {
  asio::io_context ioc;
  bool https = false;
  std::string ca_file;  // "" : the system's trust store
  std::optional<ssl::context> tls_ctx;  // made on the first https connection
  std::optional<AnyStream> stream;  // the connection, http or https (net/any_stream.h)
  std::string host, port, prefix;
  beast::flat_buffer buffer;
  std::atomic<int> fd{-1};  // the socket in use, for Interrupt from another thread
  std::atomic<bool> interrupted{false};  // Interrupt came: the broken call must not be retried

  bool connected() const { return stream.has_value(); }
  beast::tcp_stream& raw() { return stream->tcp(); }

  // The completion handler of every operation Run runs: one type, so that each of Beast's
  // operations is compiled once for all the calls that use it.
  struct Done {
    beast::error_code* out;
    template <class... Rest>
    void operator()(beast::error_code ec, Rest&&...) const { *out = ec; }
  };

  // Runs the asynchronous operation that `start` begins (given a completion handler) until it
  // ends, and returns its error. Every I/O goes this way because beast::tcp_stream applies its
  // expiry (expires_at) to asynchronous operations only: a synchronous read from a server that
  // never answers blocks forever, whatever the expiry says. The expiry ends it as error::timeout.
  template <class Start>
  beast::error_code Run(Start&& start) {
    beast::error_code result = asio::error::would_block;
    start(Done{&result});
    ioc.restart();
    ioc.run();
    return result;
  }

  // Resolves host:port, giving up at `deadline` (a resolver has no expiry of its own).
  beast::error_code Resolve(Deadline deadline, tcp::resolver::results_type* out) {
    tcp::resolver resolver(ioc);
    asio::steady_timer timer(ioc, deadline);
    beast::error_code result = asio::error::would_block;
    bool timed_out = false;
    resolver.async_resolve(host, port, [&](beast::error_code ec, tcp::resolver::results_type r) {
      result = ec;
      *out = std::move(r);
      timer.cancel();
    });
    timer.async_wait([&](beast::error_code ec) {
      if (ec) return;
      timed_out = true;
      resolver.cancel();
    });
    ioc.restart();
    ioc.run();
    return timed_out ? beast::error_code(beast::error::timeout) : result;
  }

  // Drops the connection; fd goes with it, so Interrupt never shuts down a descriptor number that
  // the process may since have reused for another socket.
  void Drop() {
    fd = -1;
    stream.reset();
    buffer.clear();
  }

  // The context that verifies the server: its chain against the trust store (or ca_file) and its
  // name against the URL's host.
  Status MakeTlsContext() {
    if (tls_ctx) return Status::Ok();
    auto& ctx = tls_ctx.emplace(ssl::context::tls_client);
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    beast::error_code ec;
    if (ca_file.empty()) ctx.set_default_verify_paths(ec);
    else ctx.load_verify_file(ca_file, ec);
    if (ec) {
      tls_ctx.reset();
      return Status(Code::kUnavailable, "cannot load trusted certificates" + (ca_file.empty() ? "" : " from " + ca_file) +
                                            ": " + ec.message());
    }
    ctx.set_verify_mode(ssl::verify_peer);
    return Status::Ok();
  }

  // Connects (resolve, TCP, TLS handshake) unless connected, all by `deadline`; `limit` is the
  // call's whole timeout, for the message.
  Status Connect(Deadline deadline, std::chrono::milliseconds limit) {
    if (connected() && raw().socket().is_open()) return Status::Ok();
    tcp::resolver::results_type results;
    beast::error_code ec = Resolve(deadline, &results);
    if (ec) return Status(Code::kUnavailable, "cannot resolve " + host + ": " + Why(ec, limit));
    if (https) {
      if (Status s = MakeTlsContext(); !s.ok()) return s;
      stream.emplace(ioc.get_executor(), *tls_ctx);
    } else {
      stream.emplace(ioc.get_executor());
    }
    raw().expires_at(deadline);
    ec = Run([&](auto handler) { raw().async_connect(results, std::move(handler)); });
    if (ec) {
      Drop();
      return Status(Code::kUnavailable, "cannot connect to " + host + ":" + port + ": " + Why(ec, limit));
    }
    raw().socket().set_option(tcp::no_delay(true));
    fd = raw().socket().native_handle();
    if (https) {
      // SNI, and the certificate must name the host the URL names.
      stream->VerifyHostName(host);
      raw().expires_at(deadline);
      ec = Run([&](auto handler) { stream->async_handshake(ssl::stream_base::client, std::move(handler)); });
      if (ec) {
        Drop();
        std::string why = Why(ec, limit);
        if (ec.category() == asio::error::get_ssl_category())
          why += " (the server's certificate is not trusted for " + host +
                 "? give its CA with --ca-file, or check the URL's host name)";
        return Status(Code::kUnavailable, "TLS handshake with " + host + ":" + port + " failed: " + why);
      }
    }
    buffer.clear();
    return Status::Ok();
  }
};

Client::Client(std::string base, std::string token) : base_(std::move(base)), token_(std::move(token)), impl_(new Impl) {
  std::string rest = base_;
  {
    std::lock_guard lock(ca_mu);
    impl_->ca_file = ca_file;
  }
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  else if (rest.rfind("https://", 0) == 0) {
    rest = rest.substr(8);
    impl_->https = true;
  }
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  impl_->prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!impl_->prefix.empty() && impl_->prefix.back() == '/') impl_->prefix.pop_back();
  auto colon = hostport.rfind(':');
  impl_->host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  impl_->port = colon == std::string::npos ? (impl_->https ? "443" : "80") : hostport.substr(colon + 1);
  if (impl_->host.size() > 1 && impl_->host.front() == '[') impl_->host = impl_->host.substr(1, impl_->host.size() - 2);
}

Client::~Client() = default;

void Client::Interrupt() {
  // Set first: a call still connecting (no descriptor yet) sees it once connected.
  impl_->interrupted = true;
  int fd = impl_->fd.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

Result<ClientResponse> Client::Send(const std::string& method, const std::string& target, const std::string& body,
                                    const std::string& content_type, std::chrono::milliseconds timeout) {
  // One retry on a fresh connection: a keep-alive connection the server closed while idle fails
  // on first use, which says nothing about the server. Both share the call's one deadline.
  if (timeout.count() <= 0) timeout = timeout_;
  const Deadline deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = impl_->connected();
    if (Status s = impl_->Connect(deadline, timeout); !s.ok()) return s;
    if (impl_->interrupted.exchange(false)) {  // Interrupt came before the descriptor was there to shut
      impl_->Drop();
      return Status(Code::kUnavailable, method + " " + target + ": interrupted");
    }
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
    impl_->raw().expires_at(deadline);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(256u << 20);
    AnyStream& s = *impl_->stream;
    beast::error_code ec = impl_->Run([&](auto handler) { bhttp::async_write(s, req, std::move(handler)); });
    if (!ec) ec = impl_->Run([&](auto handler) { bhttp::async_read(s, impl_->buffer, parser, std::move(handler)); });
    if (ec) {
      impl_->Drop();
      // A broken keep-alive connection is retried once; one that Interrupt broke is not (the caller
      // is stopping, say a worker draining out of its lease long-poll).
      if (impl_->interrupted.exchange(false))
        return Status(Code::kUnavailable, method + " " + target + ": interrupted");
      if (reused && attempt == 0 && ec != beast::error::timeout) continue;
      return Status(Code::kUnavailable, method + " " + target + ": " + Why(ec, timeout));
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
  if (Status s = impl_->Connect(std::chrono::steady_clock::now() + idle_timeout, idle_timeout); !s.ok()) return s;
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), impl_->prefix + target, 11);
  req.set(bhttp::field::host, impl_->host);
  req.set(bhttp::field::accept, "text/event-stream");
  if (!token_.empty()) req.set(bhttp::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();
  impl_->raw().expires_after(idle_timeout);
  AnyStream& s = *impl_->stream;
  beast::error_code ec = impl_->Run([&](auto handler) { bhttp::async_write(s, req, std::move(handler)); });
  if (ec) return Status(Code::kUnavailable, Why(ec, idle_timeout));
  bhttp::response_parser<bhttp::buffer_body> p;
  p.body_limit(boost::none);
  impl_->raw().expires_after(idle_timeout);
  ec = impl_->Run([&](auto handler) { bhttp::async_read_header(s, impl_->buffer, p, std::move(handler)); });
  if (ec) return Status(Code::kUnavailable, Why(ec, idle_timeout));
  const int status = p.get().result_int();
  char buf[16384];
  while (!p.is_done()) {
    p.get().body().data = buf;
    p.get().body().size = sizeof buf;
    impl_->raw().expires_after(idle_timeout);
    // read_some: hand each chunk over as it arrives (SSE, streamed tokens); read() would wait
    // until the 16 KiB buffer filled or the stream ended.
    ec = impl_->Run([&](auto handler) { bhttp::async_read_some(s, impl_->buffer, p, std::move(handler)); });
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) {
      if (ec == beast::error::timeout) return Status(Code::kUnavailable, "stream idle: " + Why(ec, idle_timeout));
      break;
    }
    size_t n = sizeof buf - p.get().body().size;
    if (n && !on_data(std::string_view(buf, n))) break;
  }
  return status;
}

}  // namespace gauntlet::net
