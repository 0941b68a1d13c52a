#include "http/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <array>
#include <mutex>
#include <set>
#include <thread>

namespace gauntlet::http {
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

class Session;

struct Shared {
  Shared(const Router& r, ServerOptions o) : router(r), opts(std::move(o)) {}
  const Router& router;
  ServerOptions opts;
  std::mutex mu;
  std::set<std::weak_ptr<Session>, std::owner_less<std::weak_ptr<Session>>> sessions;
  std::atomic<bool> stopping{false};
};

Request ToRequest(const bhttp::request<bhttp::string_body>& in) {
  Request r;
  r.method = std::string(in.method_string());
  r.target = std::string(in.target());
  auto q = r.target.find('?');
  r.path = UrlDecode(r.target.substr(0, q));
  if (q != std::string::npos) {
    std::string_view qs(r.target);
    qs.remove_prefix(q + 1);
    while (!qs.empty()) {
      auto amp = qs.find('&');
      std::string_view kv = qs.substr(0, amp);
      auto eq = kv.find('=');
      if (!kv.empty())
        r.query.emplace(UrlDecode(kv.substr(0, eq)), eq == std::string_view::npos ? "" : UrlDecode(kv.substr(eq + 1)));
      if (amp == std::string_view::npos) break;
      qs.remove_prefix(amp + 1);
    }
  }
  for (auto& f : in) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(tolower(c));
    r.headers[name] = std::string(f.value());
  }
  r.body = in.body();
  return r;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& s, std::shared_ptr<Shared> shared)
      : stream_(std::move(s)), shared_(std::move(shared)), timer_(stream_.get_executor()) {}

  void Start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Read(); });
  }

  // Closes the connection if it is idle; a busy one closes after its answer. Any thread.
  void StopSoft() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      if (self->idle_) self->stream_.socket().shutdown(tcp::socket::shutdown_both, self->ignored_);
      if (self->deferred_) self->deferred_->Expire();
      if (self->sse_) self->stream_.socket().shutdown(tcp::socket::shutdown_both, self->ignored_);
    });
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(shared_->opts.body_limit);
    parser_->header_limit(64 * 1024);
    idle_ = true;
    if (closing_) return Close();
    // The first byte may take the idle time; the rest of the request must come within read_timeout.
    stream_.expires_after(first_request_ ? shared_->opts.read_timeout : shared_->opts.idle_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    idle_ = false;
    if (ec) return OnReadError(ec);
    stream_.expires_after(shared_->opts.read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) {
      keep_alive_ = false;
      return Send(Problem(413, "Payload Too Large",
                          "the body is over the limit of " + std::to_string(shared_->opts.body_limit) + " bytes",
                          "body"), 11, false);
    }
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof)
      return Close();
    if (ec.category() == beast::error_code(bhttp::error::bad_method).category()) {
      keep_alive_ = false;
      return Send(Problem(400, "Bad Request", "malformed HTTP request: " + ec.message()), 11, false);
    }
    return Close();
  }

  void OnRead(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    first_request_ = false;
    auto in = parser_->release();
    version_ = in.version();
    keep_alive_ = in.keep_alive();
    head_ = in.method() == bhttp::verb::head;
    Request req = ToRequest(in);
    auto t0 = std::chrono::steady_clock::now();
    Response res = shared_->router.Dispatch(req);
    if (spdlog::should_log(spdlog::level::debug)) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
      spdlog::debug("{} {} -> {} ({} us)", req.method, req.target, res.status, us);
    }
    if (res.deferred) return WaitDeferred(std::move(res.deferred));
    if (res.stream) return StartStream(std::move(res));
    Send(std::move(res), version_, keep_alive_);
  }

  void WaitDeferred(std::shared_ptr<Deferred> d) {
    deferred_ = d;
    stream_.expires_never();
    if (d->timeout().count() > 0) {  // zero: an answer that always comes (a commit), no timer to arm
      timer_.expires_after(d->timeout());
      timer_.async_wait([d](beast::error_code ec) {
        if (!ec) d->Expire();
      });
    }
    if (closing_) d->Expire();
    auto self = shared_from_this();
    d->Wait([self](Response r) {
      asio::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable {
        self->timer_.cancel();
        self->deferred_.reset();
        self->Send(std::move(r), self->version_, self->keep_alive_);
      });
    });
  }

  void StartStream(Response res) {
    sse_ = res.stream;
    stream_.expires_never();
    auto msg = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::ok, version_);
    msg->set(bhttp::field::content_type, res.content_type);
    msg->set(bhttp::field::cache_control, "no-cache");
    for (auto& [k, v] : res.headers) msg->set(k, v);
    msg->chunked(true);
    auto sr = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*msg);
    bhttp::async_write_header(stream_, *sr, [self = shared_from_this(), msg, sr](beast::error_code ec, size_t) {
      if (ec) return self->EndStream();
      self->PullStream();
    });
  }

  void PullStream() {
    auto self = shared_from_this();
    sse_->Pull([self](std::optional<std::string> chunk) {
      asio::post(self->stream_.get_executor(), [self, chunk = std::move(chunk)]() mutable {
        if (!chunk || self->closing_) {
          auto last = std::make_shared<bhttp::chunk_last<>>();
          return asio::async_write(self->stream_, *last,
                                   [self, last](beast::error_code, size_t) { self->EndStream(); });
        }
        auto data = std::make_shared<std::string>(std::move(*chunk));
        auto body = std::make_shared<bhttp::chunk_body<asio::const_buffer>>(asio::buffer(*data));
        asio::async_write(self->stream_, *body, [self, data, body](beast::error_code ec, size_t) {
          if (ec) return self->EndStream();
          self->PullStream();
        });
      });
    });
  }

  void EndStream() {
    if (sse_) sse_->Close();
    sse_.reset();
    Close();
  }

  void Send(Response r, unsigned version, bool keep_alive) {
    if (closing_ || shared_->stopping) keep_alive = false;
    auto msg = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(r.status), version);
    msg->set(bhttp::field::server, "gauntlet/" GAUNTLET_VERSION);
    msg->set(bhttp::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) msg->set(k, v);
    msg->keep_alive(keep_alive);
    if (!head_) msg->body() = std::move(r.body);
    else msg->content_length(r.body.size());
    if (!head_) msg->prepare_payload();
    stream_.expires_after(shared_->opts.read_timeout);
    bhttp::async_write(stream_, *msg, [self = shared_from_this(), msg, keep_alive](beast::error_code ec, size_t) {
      if (ec) return self->Close();
      if (!keep_alive) return self->Linger();
      self->Read();
    });
  }

  void Close() {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored_);
    stream_.close();
  }

  // Closes after an answer the client may still be sending a body for (413 mid-upload): half-close,
  // then read and discard until the client closes (bounded), so the kernel does not reset the
  // connection and destroy the answer before the client reads it.
  void Linger() {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored_);
    stream_.expires_after(std::chrono::seconds(2));
    auto scratch = std::make_shared<std::array<char, 16384>>();
    Drain(scratch);
  }
  void Drain(std::shared_ptr<std::array<char, 16384>> scratch) {
    stream_.async_read_some(asio::buffer(*scratch),
                            [self = shared_from_this(), scratch](beast::error_code ec, size_t) {
                              if (ec) return self->stream_.close();
                              self->Drain(scratch);
                            });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  asio::steady_timer timer_;
  std::shared_ptr<Deferred> deferred_;
  std::shared_ptr<Stream> sse_;
  unsigned version_ = 11;
  bool keep_alive_ = true, head_ = false, idle_ = false, closing_ = false, first_request_ = true;
  beast::error_code ignored_;
};

}  // namespace

struct Server::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::shared_ptr<Shared> shared;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  int threads;

  void Accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec) {
        if (ec == asio::error::operation_aborted || shared->stopping) return;
        spdlog::warn("accept: {}", ec.message());
      } else {
        s.set_option(tcp::no_delay(true));
        auto session = std::make_shared<Session>(std::move(s), shared);
        {
          std::lock_guard lock(shared->mu);
          for (auto it = shared->sessions.begin(); it != shared->sessions.end();)
            it = it->expired() ? shared->sessions.erase(it) : std::next(it);
          shared->sessions.insert(session);
        }
        session->Start();
      }
      Accept();
    });
  }
};

Server::Server(const ServerOptions& opts, const Router& router) : impl_(new Impl) {
  impl_->shared = std::make_shared<Shared>(router, opts);
  impl_->threads = std::max(1, opts.threads);
  beast::error_code ec;
  auto addr = asio::ip::make_address(opts.host, ec);
  if (ec) throw std::runtime_error("bad listen address '" + opts.host + "': " + ec.message());
  tcp::endpoint ep(addr, opts.port);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep, ec);
  if (ec) throw std::runtime_error("cannot listen on " + opts.host + ":" + std::to_string(opts.port) + ": " + ec.message());
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  impl_->Accept();
}

Server::~Server() {
  Stop();
}

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::Run() {
  std::vector<std::thread> extra;
  for (int i = 1; i < impl_->threads; ++i) extra.emplace_back([this] { impl_->ioc.run(); });
  impl_->ioc.run();
  for (auto& t : extra) t.join();
}

void Server::Stop() {
  if (impl_->shared->stopping.exchange(true)) return;
  asio::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
    std::lock_guard lock(impl_->shared->mu);
    for (auto& w : impl_->shared->sessions)
      if (auto s = w.lock()) s->StopSoft();
  });
  // In-flight requests finish and their sessions end; then run() returns for lack of work.
  impl_->work.reset();
}

}  // namespace gauntlet::http
