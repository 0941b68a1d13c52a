#include "net/http_server.h"

#include <algorithm>

#include "net/any_stream.h"
#include "net/log_limiter.h"
#include "net/peer_closed.h"
#include "net/request_head.h"
#include "net/server_resources.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <array>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace gauntlet::net {
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// What the server keeps of a connection: Stop reaches every one through it.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void StopSoft() = 0;
};

struct Shared {
  Shared(const Router& r, ServerOptions o) : router(r), opts(std::move(o)) {}
  const Router& router;
  ServerOptions opts;
  asio::io_context* pool = nullptr;        // where kPool handlers run
  std::atomic<int> live{0};                // connections open
  std::atomic<int> streams{0};             // of them, event streams
  int stream_cap = 1;                      // the most event streams at once
  std::function<void()> on_session_end;    // resumes an accept loop paused at the cap
  std::mutex mu;
  std::set<std::weak_ptr<SessionBase>, std::owner_less<std::weak_ptr<SessionBase>>> sessions;
  std::optional<ssl::context> tls;  // set: every connection speaks TLS
  std::atomic<bool> stopping{false};
};

// One connection, HTTP or HTTPS (handshake first): one type for both (net/any_stream.h says why).
class Session : public SessionBase, public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& s, std::shared_ptr<Shared> shared)
      : stream_(shared->tls ? AnyStream(std::move(s), *shared->tls) : AnyStream(std::move(s))),
        shared_(std::move(shared)), timer_(stream_.get_executor()) {
    ++shared_->live;
  }
  ~Session() override {
    if (counted_stream_) --shared_->streams;
    --shared_->live;
    if (shared_->on_session_end && !shared_->stopping) shared_->on_session_end();
  }

  void Start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->stream_.tls()) {
        // The handshake is bounded like a request: a client that connects and says nothing holds
        // its descriptor no longer than read_timeout.
        self->raw().expires_after(self->shared_->opts.read_timeout);
        self->idle_ = true;  // a stop closes it as it would an idle connection
        self->stream_.async_handshake(ssl::stream_base::server, [self](beast::error_code ec) {
          self->idle_ = false;
          if (ec || self->closing_) return self->raw().close();
          self->Read();
        });
      } else {
        self->Read();
      }
    });
  }

  // Closes the connection if it is idle; a busy one closes after its answer. Any thread.
  void StopSoft() override {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      if (self->idle_) self->raw().socket().shutdown(tcp::socket::shutdown_both, self->ignored_);
      if (self->deferred_) self->deferred_->Expire();
      if (self->sse_) self->raw().socket().shutdown(tcp::socket::shutdown_both, self->ignored_);
    });
  }

 private:
  beast::tcp_stream& raw() { return stream_.tcp(); }

  void Read() {
    parser_.emplace();
    // Beast checks a Content-Length against the limit while it reads the header, before the route
    // is known: the header is read under the largest limit, and OnHeader applies the request's.
    parser_->body_limit(MostBodyLimit(shared_->opts));
    limit_ = shared_->opts.body_limit;
    match_.reset();
    parser_->header_limit(64 * 1024);
    idle_ = true;
    if (closing_) return Close();
    // The first byte may take the idle time; the rest of the request must come within read_timeout.
    raw().expires_after(first_request_ ? shared_->opts.read_timeout : shared_->opts.idle_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    idle_ = false;
    if (ec) return OnReadError(ec);
    const auto& h = parser_->get();
    if (auto bad = HostProblem(h)) {
      keep_alive_ = false;
      return Send(std::move(*bad), h.version(), false);
    }
    // The route is known from the head alone: its own body limit applies before the body is read,
    // and the match is made once per request (OnRead reuses it).
    match_ = shared_->router.Match(HeadProbe(h));
    limit_ = BodyLimitFor(Target(), shared_->opts, *match_);
    parser_->body_limit(limit_);  // for a chunked body, checked as its chunks come
    // Beast weighs a Content-Length against the limit when it parses the header, so a declared
    // length over the request's bound is answered here, before any of the body is read.
    if (auto n = parser_->content_length(); n && *n > limit_) return OnReadError(bhttp::error::body_limit);
    raw().expires_after(shared_->opts.read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  // The target of the request whose header was read.
  std::string_view Target() { return {parser_->get().target().data(), parser_->get().target().size()}; }

  void OnReadError(beast::error_code ec) {
    if (ec == bhttp::error::body_limit && !match_ && parser_ && !parser_->get().target().empty())
      limit_ = BodyLimitFor(Target(), shared_->opts);  // refused while its head was read
    auto answer = ReadErrorProblem(ec, limit_);
    if (!answer) return Close();
    keep_alive_ = false;
    Send(std::move(*answer), 11, false);
  }

  void OnRead(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    first_request_ = false;
    auto in = parser_->release();
    version_ = in.version();
    keep_alive_ = in.keep_alive();
    head_ = in.method() == bhttp::verb::head;
    Request req = ToRequest(std::move(in));
    // One match per request (made from the head): the lane is chosen by it and the dispatch reuses it.
    RouteMatch match = match_ ? std::move(*match_) : shared_->router.Match(req);
    match_.reset();
    if (match.lane() == Lane::kIo) return Answer(Run(req, std::move(match)));
    // A pooled handler: the I/O thread goes back to other connections meanwhile. The guard keeps
    // the I/O context running (a stop waits for this answer).
    auto guard = asio::make_work_guard(stream_.get_executor());
    asio::post(*shared_->pool, [self = shared_from_this(), req = std::move(req), match = std::move(match),
                                guard]() mutable {
      Response res = self->Run(req, std::move(match));
      asio::post(self->stream_.get_executor(), [self, res = std::move(res), guard]() mutable {
        self->Answer(std::move(res));
      });
    });
  }

  Response Run(Request& req, RouteMatch match) {
    auto t0 = std::chrono::steady_clock::now();
    Response res = shared_->router.Dispatch(req, std::move(match));
    if (spdlog::should_log(spdlog::level::debug)) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
      spdlog::debug("{} {} -> {} ({} us)", req.method, req.target, res.status, us);
    }
    return res;
  }

  void Answer(Response res) {
    if (res.deferred) return WaitDeferred(std::move(res.deferred));
    if (res.stream) {
      // The streams' own budget: past it a stream is refused, never a worker's connection.
      if (!counted_stream_ && ++shared_->streams > shared_->stream_cap) {
        --shared_->streams;
        res.stream->Close();
        Response busy = Problem(503, "Service Unavailable",
                                "too many event streams are open (the limit is " +
                                    std::to_string(shared_->stream_cap) + "); try again later");
        busy.headers.emplace_back("Retry-After", "5");
        return Send(std::move(busy), version_, false);
      }
      counted_stream_ = true;
      return StartStream(std::move(res));
    }
    Send(std::move(res), version_, keep_alive_);
  }

  void WaitDeferred(std::shared_ptr<Deferred> d) {
    deferred_ = d;
    raw().expires_never();
    if (d->timeout().count() > 0) {  // zero: an answer that always comes (a commit), no timer to arm
      timer_.expires_after(d->timeout());
      timer_.async_wait([d](beast::error_code ec) {
        if (!ec) d->Expire();
      });
    }
    if (closing_) d->Expire();
    WatchPeer(d);
    auto self = shared_from_this();
    d->Wait([self, d](Response r) {
      asio::post(self->stream_.get_executor(), [self, d, r = std::move(r)]() mutable {
        self->timer_.cancel();
        self->deferred_.reset();
        self->raw().socket().cancel(self->ignored_);  // ends WatchPeer's wait
        // A client that closed its end cannot read the answer (though a write would succeed).
        if (self->PeerClosed()) {
          if (d->on_undelivered) d->on_undelivered();
          return self->raw().close();
        }
        self->Send(std::move(r), self->version_, self->keep_alive_, d->on_undelivered);
      });
    });
  }

  // While a deferred answer is pending nothing reads the connection: a client that went away (a worker
  // killed mid long-poll) would be seen only at the timer, with work handed to it. Watch for its FIN.
  void WatchPeer(std::weak_ptr<Deferred> wd) {
    raw().socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), wd](beast::error_code ec) {
      auto d = wd.lock();  // an error: cancelled, the answer came first
      // Bytes rather than an end (a pipelined request, a TLS record): the client is there; stop.
      if (!ec && d && d == self->deferred_ && self->PeerClosed()) d->Expire();
    });
    // A FIN that came before the wait was armed raised its edge already (epoll is edge-triggered
    // in Asio) and would never wake it: look once now that it is armed.
    if (auto d = wd.lock(); d && PeerClosed()) d->Expire();
  }

  bool PeerClosed() { return net::PeerClosed(raw().socket().native_handle()); }

  void StartStream(Response res) {
    sse_ = res.stream;
    raw().expires_after(shared_->opts.stream_write_timeout);
    auto msg = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::ok, version_);
    msg->set(bhttp::field::content_type, res.content_type);
    msg->set(bhttp::field::cache_control, "no-cache");
    for (auto& [k, v] : res.headers) msg->set(k, v);
    msg->chunked(true);
    auto sr = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*msg);
    bhttp::async_write_header(stream_, *sr, [self = shared_from_this(), msg, sr](beast::error_code ec, size_t) {
      if (ec) return self->EndStream();
      self->raw().expires_never();
      self->PullStream();
    });
  }

  void PullStream() {
    auto self = shared_from_this();
    sse_->Pull([self](std::optional<std::string> chunk) {
      asio::post(self->stream_.get_executor(), [self, chunk = std::move(chunk)]() mutable {
        // Each chunk is written within stream_write_timeout or the stream ends: a reader that
        // stopped reading (its socket buffer full) holds the connection no longer. Between
        // chunks the stream waits for events with no deadline (keep-alives come every 15 s).
        self->raw().expires_after(self->shared_->opts.stream_write_timeout);
        if (!chunk || self->closing_) {
          auto last = std::make_shared<bhttp::chunk_last<>>();
          return asio::async_write(self->stream_, *last,
                                   [self, last](beast::error_code, size_t) { self->EndStream(); });
        }
        auto data = std::make_shared<std::string>(std::move(*chunk));
        auto body = std::make_shared<bhttp::chunk_body<asio::const_buffer>>(asio::buffer(*data));
        asio::async_write(self->stream_, *body, [self, data, body](beast::error_code ec, size_t) {
          if (ec) return self->EndStream();
          self->raw().expires_never();
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

  void Send(Response r, unsigned version, bool keep_alive, std::function<void()> undelivered = {}) {  // run if it fails
    if (closing_ || shared_->stopping) keep_alive = false;
    auto msg = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(r.status), version);
    msg->set(bhttp::field::server, "gauntlet/" GAUNTLET_VERSION);
    msg->set(bhttp::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) msg->set(k, v);
    msg->keep_alive(keep_alive);
    if (!head_) msg->body() = std::move(r.body);
    else msg->content_length(r.body.size());
    if (!head_) msg->prepare_payload();
    raw().expires_after(shared_->opts.read_timeout);
    bhttp::async_write(stream_, *msg, [self = shared_from_this(), msg, keep_alive,
                                       undelivered = std::move(undelivered)](beast::error_code ec, size_t) {
      if (ec) {
        if (undelivered) undelivered();
        return self->Close();
      }
      if (!keep_alive) return self->Linger();
      self->Read();
    });
  }

  void Close() {
    raw().socket().shutdown(tcp::socket::shutdown_send, ignored_);
    raw().close();
  }

  // Closes after an answer the client may still be sending a body for (413 mid-upload): half-close,
  // then read and discard until the client closes (bounded), so the kernel does not reset the
  // connection and destroy the answer before the client reads it.
  void Linger() {
    raw().socket().shutdown(tcp::socket::shutdown_send, ignored_);
    raw().expires_after(std::chrono::seconds(2));
    auto scratch = std::make_shared<std::array<char, 16384>>();
    Drain(scratch);
  }
  void Drain(std::shared_ptr<std::array<char, 16384>> scratch) {
    raw().async_read_some(asio::buffer(*scratch),
                            [self = shared_from_this(), scratch](beast::error_code ec, size_t) {
                              if (ec) return self->raw().close();
                              self->Drain(scratch);
                            });
  }

  AnyStream stream_;
  std::shared_ptr<Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  asio::steady_timer timer_;
  std::shared_ptr<Deferred> deferred_;
  std::shared_ptr<Stream> sse_;
  unsigned version_ = 11;
  bool keep_alive_ = true, head_ = false, idle_ = false, closing_ = false, first_request_ = true;
  bool counted_stream_ = false;      // this connection holds one of the streams' budget
  size_t limit_ = 0;                 // the body limit of the request being read
  std::optional<RouteMatch> match_;  // its route, matched from its head
  beast::error_code ignored_;
};

}  // namespace

struct Server::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::shared_ptr<Shared> shared;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  asio::io_context pool;  // the handler pool's queue
  asio::executor_work_guard<asio::io_context::executor_type> pool_work{pool.get_executor()};
  asio::steady_timer backoff{ioc};
  std::chrono::milliseconds delay{10};  // the next backoff; only the accept loop touches it
  LogLimiter accept_log{std::chrono::seconds(10)};
  std::mutex accept_mu;
  bool paused = false;  // guarded by accept_mu: at the cap, waiting for a connection to close
  int cap = 0;
  int threads = 1, pool_threads = 1;

  void Keep(std::shared_ptr<Session> session) {
    {
      std::lock_guard lock(shared->mu);
      for (auto it = shared->sessions.begin(); it != shared->sessions.end();)
        it = it->expired() ? shared->sessions.erase(it) : std::next(it);
      shared->sessions.insert(session);
    }
    session->Start();
  }

  void Warn(const std::string& what) {
    int64_t held = 0;
    if (accept_log.Allow(&held))
      spdlog::warn("{}{}", what, held ? " (and " + std::to_string(held) + " more like it in the last 10 s)" : "");
  }

  void Accept() {
    if (shared->stopping) return;
    {
      // Checked under accept_mu, as the resume is: a connection that closes meanwhile either sees
      // `paused` or is counted out of `live` before this check.
      std::lock_guard lock(accept_mu);
      if (shared->live >= cap) {
        paused = true;
        Warn("at the connection limit (" + std::to_string(cap) + "): new connections wait until one closes");
        return;
      }
    }
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec) {
        if (ec == asio::error::operation_aborted || shared->stopping) return;
        if (ResourceShortage(ec)) {
          Warn("accept: " + ec.message() + "; retrying in " + std::to_string(delay.count()) + " ms");
          backoff.expires_after(delay);
          delay = std::min(delay * 2, std::chrono::milliseconds(1000));
          backoff.async_wait([this](beast::error_code e) {
            if (!e) Accept();
          });
          return;
        }
        Warn("accept: " + ec.message());
      } else {
        delay = std::chrono::milliseconds(10);
        beast::error_code ignored;
        s.set_option(tcp::no_delay(true), ignored);
        Keep(std::make_shared<Session>(std::move(s), shared));
      }
      Accept();
    });
  }

  // A connection closed (any thread): accept again if the cap had paused it.
  void SessionEnded() {
    asio::post(ioc, [this] {
      bool resume = false;
      {
        std::lock_guard lock(accept_mu);
        resume = paused && shared->live < cap;
        if (resume) paused = false;
      }
      if (resume) Accept();
    });
  }
};

Server::Server(const ServerOptions& opts, const Router& router) : impl_(new Impl) {
  impl_->shared = std::make_shared<Shared>(router, opts);
  impl_->threads = std::max(1, opts.threads);
  impl_->pool_threads = opts.pool_threads > 0 ? opts.pool_threads : impl_->threads;
  impl_->shared->pool = &impl_->pool;
  impl_->cap = opts.max_connections;
  if (impl_->cap <= 0) impl_->cap = DefaultMaxConnections();
  impl_->shared->stream_cap = opts.max_streams > 0 ? opts.max_streams : std::max(1, impl_->cap / 4);
  impl_->shared->on_session_end = [impl = impl_.get()] { impl->SessionEnded(); };
  if (!opts.tls_cert.empty() || !opts.tls_key.empty()) LoadTls(impl_->shared->tls.emplace(ssl::context::tls_server), opts);
  Listen(impl_->acceptor, opts);
  impl_->Accept();
}

Server::~Server() {
  Stop();
}

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::Run() {
  std::vector<std::thread> pool;
  for (int i = 0; i < impl_->pool_threads; ++i)
    pool.emplace_back([this] {
      // Below the I/O threads on a busy CPU: a pile of reads slows reads, not the worker protocol.
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
      impl_->pool.run();
    });
  std::vector<std::thread> extra;
  for (int i = 1; i < impl_->threads; ++i) extra.emplace_back([this] { impl_->ioc.run(); });
  impl_->ioc.run();
  for (auto& t : extra) t.join();
  // Every pooled request has been answered (each held the I/O context's work until then).
  impl_->pool_work.reset();
  for (auto& t : pool) t.join();
}

void Server::Stop() {
  if (impl_->shared->stopping.exchange(true)) return;
  asio::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
    impl_->backoff.cancel();
    std::lock_guard lock(impl_->shared->mu);
    for (auto& w : impl_->shared->sessions)
      if (auto s = w.lock()) s->StopSoft();
  });
  // In-flight requests finish and their sessions end; then run() returns for lack of work.
  impl_->work.reset();
}

}  // namespace gauntlet::net
