// net::Client's timeout against loopback servers (port 0) that misbehave: one that accepts and
// never answers, one that answers a byte at a time and never ends, one that never reads a large
// body, one that never speaks TLS, and a listen queue that takes no more connections. Each call
// must end within its bound with an error that says it timed out, for the client itself, the
// worker's link (HttpDaemonLink) and the CLI. Before: beast::tcp_stream applies its expiry to
// asynchronous operations only, and every call was synchronous, so each of these hung for good.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "tests/support/harness.h"
#include "workers/http_daemon_link.h"

namespace gauntlet {
namespace {
using namespace std::chrono;

// A TCP server on 127.0.0.1:0 that does one wrong thing with every connection, on its own thread.
class BadServer {
 public:
  enum class Mode { kSilent, kDrip, kNoRead, kFullQueue };
  explicit BadServer(Mode mode) : mode_(mode) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, mode == Mode::kFullQueue ? 0 : 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    EXPECT_EQ(pipe2(stop_, O_CLOEXEC), 0);
    if (mode == Mode::kFullQueue) FillQueue();
    else thread_ = std::thread([this] { Serve(); });
  }
  ~BadServer() {
    if (write(stop_[1], "x", 1) < 0) {}
    if (thread_.joinable()) thread_.join();
    for (int c : conns_) close(c);
    close(fd_);
    close(stop_[0]);
    close(stop_[1]);
  }
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }

 private:
  // Connections nobody accepts, until the kernel's queue takes no more: a new SYN is then dropped.
  void FillQueue() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port_));
    for (int i = 0; i < 8; ++i) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      conns_.push_back(c);
    }
  }
  // Returns true when asked to stop within `ms` (the pacing of a drip, and the wait for the end).
  bool Stopped(int ms) {
    pollfd p{stop_[0], POLLIN, 0};
    return poll(&p, 1, ms) > 0;
  }
  void Serve() {
    while (true) {
      pollfd p[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (poll(p, 2, -1) < 0 || p[1].revents) return;
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      conns_.push_back(c);
      if (mode_ == Mode::kNoRead) {
        int small = 4096;
        setsockopt(c, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      }
      if (mode_ != Mode::kDrip) continue;  // silent, or never reading: keep it open, do nothing
      // A status line and then a header that never ends, one byte every 20 ms.
      const std::string head = "HTTP/1.1 200 OK\r\nX-Slow: ";
      for (size_t i = 0;; ++i) {
        char b = i < head.size() ? head[i] : 'a';
        if (send(c, &b, 1, MSG_NOSIGNAL) != 1 || Stopped(20)) return;
      }
    }
  }

  Mode mode_;
  int fd_ = -1, port_ = 0, stop_[2] = {-1, -1};
  std::vector<int> conns_;
  std::thread thread_;
};

// Runs `call` on a thread of its own; if it has not returned after `hang` (far past any bound it
// was given), breaks it with `client`'s Interrupt so that the test fails instead of hanging.
template <class T>
T Bounded(net::Client* client, std::function<T()> call, milliseconds* took, milliseconds hang = seconds(60)) {
  auto t0 = steady_clock::now();
  std::packaged_task<T()> task(call);
  auto f = task.get_future();
  std::thread th(std::move(task));
  if (f.wait_for(hang) != std::future_status::ready) {
    ADD_FAILURE() << "the call was still blocked after " << duration_cast<seconds>(hang).count() << " s";
    while (f.wait_for(milliseconds(100)) != std::future_status::ready)
      if (client) client->Interrupt();
  }
  th.join();
  *took = duration_cast<milliseconds>(steady_clock::now() - t0);
  return f.get();
}

void ExpectTimedOut(const Result<net::ClientResponse>& r, milliseconds took, const std::string& what) {
  ASSERT_FALSE(r.ok()) << what;
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << what;
  EXPECT_NE(r.status().message().find("timed out after 0.3 s"), std::string::npos) << what << ": " << r.status().message();
  std::printf("%s: %s after %lld ms\n", what.c_str(), r.status().message().c_str(), static_cast<long long>(took.count()));
}

TEST(HttpClientTimeout, EveryStepOfACallEndsAtItsBound) {
  struct Case {
    BadServer::Mode mode;
    std::string scheme, what, body;
  };
  const std::vector<Case> cases = {
      {BadServer::Mode::kSilent, "http", "read: the server accepts and never answers", ""},
      {BadServer::Mode::kDrip, "http", "read: the server answers one byte at a time", ""},
      {BadServer::Mode::kNoRead, "http", "write: the server never reads a 64 MiB body", std::string(64 << 20, 'x')},
      {BadServer::Mode::kSilent, "https", "TLS handshake: the server never speaks TLS", ""},
      {BadServer::Mode::kFullQueue, "http", "connect: the listen queue is full", ""},
  };
  for (const Case& c : cases) {
    BadServer server(c.mode);
    net::Client client(server.url(c.scheme), "");
    milliseconds took{};
    auto r = Bounded<Result<net::ClientResponse>>(
        &client, [&] { return client.Send("POST", "/x", c.body, "application/json", milliseconds(300)); }, &took);
    ExpectTimedOut(r, took, c.what);
  }
}

// The default timeout (SetTimeout) bounds a call that gives none, as the CLI's calls do.
TEST(HttpClientTimeout, SetTimeoutBoundsCallsThatGiveNone) {
  BadServer server(BadServer::Mode::kSilent);
  net::Client client(server.url(), "");
  client.SetTimeout(milliseconds(300));
  milliseconds took{};
  auto r = Bounded<Result<net::ClientResponse>>(&client, [&] { return client.Send("GET", "/api/v1/health"); }, &took);
  ExpectTimedOut(r, took, "a call without a timeout of its own");
}

// An Interrupt that comes before the call has its connection (a worker drained between its check
// and its long-poll) still breaks it: the call says "interrupted" rather than wait out its time.
TEST(HttpClientTimeout, AnInterruptBeforeTheConnectionBreaksTheNextCall) {
  BadServer server(BadServer::Mode::kSilent);
  net::Client client(server.url(), "");
  client.Interrupt();
  auto r = client.Send("POST", "/api/v1/nodes/1/lease", "{}", "application/json", seconds(30));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("interrupted"), std::string::npos) << r.status().message();
}

// The worker's calls: each is kUnavailable within its bound, saying it timed out (the worker then
// backs off and tries again, as for a daemon that is away).
TEST(HttpClientTimeout, TheWorkersCallsToASilentDaemonTimeOut) {
  BadServer server(BadServer::Mode::kSilent);
  worker::HttpDaemonLink link(server.url(), "", "", milliseconds(300));
  milliseconds took{};
  auto hb = Bounded<worker::HeartbeatAnswer>(nullptr, [&] { return link.Heartbeat("L1", 0); }, &took);
  EXPECT_EQ(hb.status, worker::LinkStatus::kUnavailable);
  EXPECT_NE(hb.detail.find("timed out after 0.3 s"), std::string::npos) << hb.detail;
  auto reg = Bounded<worker::RegisterAnswer>(nullptr, [&] { return link.Register({{"name", "n"}}); }, &took);
  EXPECT_EQ(reg.status, worker::LinkStatus::kUnavailable);
  EXPECT_NE(reg.detail.find("timed out after 0.9 s"), std::string::npos) << reg.detail;
  worker::LeaseRequest req;
  req.wait_s = 0.2;
  auto lease = Bounded<worker::LeaseAnswer>(nullptr, [&] { return link.Lease(1, req); }, &took);
  EXPECT_EQ(lease.status, worker::LinkStatus::kUnavailable);
  EXPECT_NE(lease.detail.find("timed out after 0.65 s"), std::string::npos) << lease.detail;
}

// `gauntlet status --timeout 0.3` against a daemon that never answers: exit 2 with one line that
// says the call timed out, not a hang.
TEST(HttpClientTimeout, TheCliSaysItTimedOutAndExits2) {
  BadServer server(BadServer::Mode::kSilent);
  test::TempDir dir;
  for (std::vector<std::string> how : {std::vector<std::string>{"--timeout", "0.3"}, std::vector<std::string>{}}) {
    std::vector<std::string> argv = {test::GauntletBin(), "status", "--server", server.url()};
    argv.insert(argv.end(), how.begin(), how.end());
    test::Child cli(argv, dir.path() + (how.empty() ? "/env.log" : "/flag.log"), how.empty() ? std::vector<std::string>{"GAUNTLET_TIMEOUT=0.3"}
                                                               : std::vector<std::string>{});
    int st = cli.Wait(seconds(60));
    ASSERT_NE(st, -1) << "the CLI was still waiting after 60 s";
    ASSERT_TRUE(WIFEXITED(st)) << cli.Log();
    EXPECT_EQ(WEXITSTATUS(st), 2) << cli.Log();
    EXPECT_NE(cli.Log().find("timed out after 0.3 s"), std::string::npos) << cli.Log();
  }
}

}  // namespace
}  // namespace gauntlet
