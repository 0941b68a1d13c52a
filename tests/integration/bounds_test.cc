// Issue 31, "Every byte bounded" and the minor items, against a real daemon on loopback: event
// streams have a connection budget of their own (64 idle streams under --max-connections 64 locked
// the worker protocol out), free-text fields and bodies have maxima answered 413/422 naming the
// field, launcher reports come only from the launcher's own credential, and the HTTP edge refuses
// what is ambiguous (two Host headers, HTTP/1.1 without one) and hardens the dashboard's answers.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "http/auth.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;


// A raw connection to the daemon: what it is sent is exactly the bytes given.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Raw() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return ok_; }
  void Send(const std::string& bytes) { ok_ = ok_ && write(fd_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()); }
  // Reads until the head of the answer is in (or `timeout` passes); returns what came.
  std::string Head(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::string got;
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (got.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

int StatusOf(const std::string& head) {
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) return 0;
  return std::stoi(head.substr(9, 3));
}

net::ClientResponse Call(const Daemon& d, const std::string& method, const std::string& target,
                          const std::string& body = "{}", const std::string& token = "") {
  net::Client c(d.url(), token);
  c.SetTimeout(std::chrono::seconds(15));
  auto r = c.Send(method, target, body);
  EXPECT_TRUE(r.ok()) << method << " " << target << ": " << r.status().message();
  return r.ok() ? *r : net::ClientResponse{};
}

json Body(const net::ClientResponse& r) { return json::parse(r.body, nullptr, false); }

TEST(StreamBudget, IdleEventStreamsCannotLockTheWorkerProtocolOut) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites(), {"--max-connections", "16"});
  // Every connection the daemon takes is asked for an event stream and then never read.
  std::vector<std::unique_ptr<Raw>> streams;
  int admitted = 0, refused = 0;
  for (int i = 0; i < 16; ++i) {
    auto r = std::make_unique<Raw>(d.port());
    ASSERT_TRUE(r->ok());
    r->Send("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const int status = StatusOf(r->Head());
    if (status == 200) ++admitted;
    else if (status == 503) ++refused;
    streams.push_back(std::move(r));
  }
  EXPECT_EQ(admitted, 4) << "a quarter of --max-connections 16";
  EXPECT_EQ(refused, 12);
  // With those streams still open, a worker registers and leases at once.
  auto reg = Call(d, "POST", "/api/v1/nodes/register", json{{"name", "w"}, {"inventory", json::object()}}.dump());
  ASSERT_EQ(reg.status, 200) << reg.body;
  auto lease = Call(d, "POST", "/api/v1/nodes/" + Body(reg)["node"].dump() + "/lease", R"({"wait_s": 0})");
  EXPECT_EQ(lease.status, 204) << lease.body;
  // --max-streams sets the budget itself.
  streams.clear();
  TempDir dir2;
  Daemon d2(dir2.path(), FixtureSuites(), {"--max-connections", "16", "--max-streams", "1"});
  Raw one(d2.port()), two(d2.port());
  one.Send("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(StatusOf(one.Head()), 200);
  two.Send("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string refusal = two.Head();
  EXPECT_EQ(StatusOf(refusal), 503) << refusal;
  EXPECT_NE(refusal.find("Retry-After"), std::string::npos) << refusal;
}

TEST(HttpEdge, HostHeadersAreExactlyOne) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  {
    Raw r(d.port());
    r.Send("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n");
    const std::string head = r.Head();
    EXPECT_EQ(StatusOf(head), 400) << head;
  }
  {
    Raw r(d.port());
    r.Send("GET /api/v1/health HTTP/1.1\r\nConnection: close\r\n\r\n");
    const std::string head = r.Head();
    EXPECT_EQ(StatusOf(head), 400) << head;
  }
  {
    Raw r(d.port());  // HTTP/1.0 has no Host requirement
    r.Send("GET /api/v1/health HTTP/1.0\r\n\r\n");
    EXPECT_EQ(StatusOf(r.Head()), 200);
  }
  {
    Raw r(d.port());
    r.Send("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_EQ(StatusOf(r.Head()), 200);
  }
}

TEST(HttpEdge, TheBearerSchemeIsCaseInsensitive) {
  TempDir dir;
  std::ofstream(dir.path() + "/tokens") << "read sha256:" << http::Sha256Hex("reader") << "\n";
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", dir.path() + "/tokens"});
  for (const char* scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) {
    Raw r(d.port());
    r.Send(std::string("GET /api/v1/sweeps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ") + scheme +
           " reader\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(StatusOf(r.Head()), 200) << scheme;
  }
  Raw wrong(d.port());
  wrong.Send("GET /api/v1/sweeps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic reader\r\n\r\n");
  EXPECT_EQ(StatusOf(wrong.Head()), 401);
}

TEST(HttpEdge, TheDashboardIsServedWithASecurityPolicy) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  for (const char* target : {"/", "/web/js/main.js", "/web/app.css", "/web/js/vocabulary.js"}) {
    Raw r(d.port());
    r.Send(std::string("GET ") + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const std::string head = r.Head();
    EXPECT_EQ(StatusOf(head), 200) << target << "\n" << head;
    EXPECT_NE(head.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << target << "\n" << head;
    EXPECT_NE(head.find("frame-ancestors 'none'"), std::string::npos) << target;
    EXPECT_NE(head.find("X-Frame-Options: DENY"), std::string::npos) << target;
    EXPECT_NE(head.find("X-Content-Type-Options: nosniff"), std::string::npos) << target;
  }
}

TEST(HttpEdge, AnEncodedSlashStaysInsideItsSegment) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  // Decoded before routing, "a%2Fb" was two segments and no route matched; now it is one suite name.
  auto r = Call(d, "GET", "/api/v1/suites/a%2Fb");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Body(r)["detail"].get<std::string>().find("no route"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("a/b"), std::string::npos) << r.body;
  EXPECT_EQ(Call(d, "GET", "/api/v1/suites/fixture%2Dcmd").status, 200) << "other escapes still decode once";
}

TEST(HttpEdge, ThousandsOfParamFiltersAre422NamingTheLimit) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  std::string target = "/api/v1/trials?suite=fixture-cmd";
  for (int i = 0; i < 3000; ++i) target += "&param.p" + std::to_string(i) + "=x";
  auto r = Call(d, "GET", target, "");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r)["field"], "param.") << r.body;
  EXPECT_NE(r.body.find("at most 64"), std::string::npos) << r.body;
  EXPECT_EQ(Call(d, "GET", "/api/v1/trials?suite=fixture-cmd&param.mode=pass", "").status, 200);
}

TEST(FieldLimits, FreeTextAndBodiesPastTheirMaximaAreRefusedNamingTheField) {
  TempDir dir;
  Daemon d(dir.path(), FixtureSuites());
  auto reg = Call(d, "POST", "/api/v1/nodes/register", json{{"name", "n"}, {"inventory", json::object()}}.dump());
  ASSERT_EQ(reg.status, 200) << reg.body;
  const std::string node = Body(reg)["node"].dump();
  // A reason over its maximum is a 422 naming it; a body over the route's bound is a 413.
  auto long_reason = Call(d, "POST", "/api/v1/nodes/" + node + "/quarantine", json{{"reason", std::string(1001, 'r')}}.dump());
  EXPECT_EQ(long_reason.status, 422) << long_reason.body;
  EXPECT_EQ(Body(long_reason)["field"], "reason");
  auto huge = Call(d, "POST", "/api/v1/nodes/" + node + "/quarantine", json{{"reason", std::string(512 << 10, 'r')}}.dump());
  EXPECT_EQ(huge.status, 413) << huge.body;
  EXPECT_NE(huge.body.find("65536"), std::string::npos) << huge.body;
  // Nothing was stored: the node is as it was.
  json nodes = d.GetJson("/api/v1/nodes");
  ASSERT_EQ(nodes["items"].size(), 1u);
  EXPECT_NE(nodes["items"][0]["state"], "quarantined") << nodes.dump();
  // Within the maxima it works.
  EXPECT_EQ(Call(d, "POST", "/api/v1/nodes/" + node + "/quarantine", json{{"reason", std::string(1000, 'r')}}.dump()).status, 200);
  // Labels: too many, a name or a value too long.
  json labels = json::object();
  for (int i = 0; i < 65; ++i) labels["l" + std::to_string(i)] = "v";
  auto many = Call(d, "POST", "/api/v1/nodes/register", json{{"name", "m"}, {"inventory", json::object()}, {"labels", labels}}.dump());
  EXPECT_EQ(many.status, 422) << many.body;
  EXPECT_EQ(Body(many)["field"], "labels");
  auto value = Call(d, "POST", "/api/v1/nodes/register",
                    json{{"name", "m"}, {"inventory", {{"labels", {{"rack", std::string(300, 'x')}}}}}}.dump());
  EXPECT_EQ(value.status, 422) << value.body;
  EXPECT_EQ(Body(value)["field"], "inventory.labels.rack");
}

TEST(FieldLimits, LauncherReportsComeOnlyFromTheLaunchersOwnCredential) {
  TempDir dir;
  std::ofstream(dir.path() + "/tokens") << "worker sha256:" << http::Sha256Hex("slurm-token") << " slurm\n"
                                        << "worker sha256:" << http::Sha256Hex("other-fleet") << "\n"
                                        << "admin sha256:" << http::Sha256Hex("boss") << "\n";
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", dir.path() + "/tokens"});
  const std::string report = json{{"kind", "slurm"}, {"jobs", {{{"id", "1"}, {"state", "PENDING"}}}}}.dump();
  EXPECT_EQ(Call(d, "PUT", "/api/v1/launchers/slurm", report, "slurm-token").status, 204);
  // Another worker token, and a node's credential, cannot overwrite it.
  auto other = Call(d, "PUT", "/api/v1/launchers/slurm", json{{"kind", "forged"}}.dump(), "other-fleet");
  EXPECT_EQ(other.status, 403) << other.body;
  auto reg = Call(d, "POST", "/api/v1/nodes/register", json{{"name", "n"}, {"inventory", json::object()}}.dump(),
                  "other-fleet");
  ASSERT_EQ(reg.status, 200) << reg.body;
  const std::string cred = Body(reg)["node_token"];
  EXPECT_EQ(Call(d, "PUT", "/api/v1/launchers/slurm", report, cred).status, 403);
  EXPECT_EQ(Call(d, "PUT", "/api/v1/launchers/mine", report, cred).status, 403);
  json nodes = Body(Call(d, "GET", "/api/v1/nodes", "", "boss"));
  ASSERT_EQ(nodes["launchers"].size(), 1u) << nodes.dump();
  EXPECT_EQ(nodes["launchers"][0]["kind"], "slurm") << nodes.dump();
  EXPECT_EQ(nodes["launchers"][0].dump().find("owner"), std::string::npos) << "the owner's hash is never shown";
  // Its own token reports again; a report past the route's bound is a 413.
  EXPECT_EQ(Call(d, "PUT", "/api/v1/launchers/slurm", report, "slurm-token").status, 204);
  json big_jobs = json::array();
  for (int i = 0; i < 5000; ++i) big_jobs.push_back({{"id", std::to_string(i)}, {"state", std::string(60, 'P')}});
  EXPECT_EQ(Call(d, "PUT", "/api/v1/launchers/slurm", json{{"jobs", big_jobs}}.dump(), "slurm-token").status, 413);
}

// Through a real worker and real processes: each stage puts something hostile at its result file's
// name and the trial still ends, promptly, as a failure naming it; the worker lives on and stops on
// one SIGTERM. Before: /dev/zero killed the worker for memory, the FIFO wedged it for good, the link
// to a passing JSON turned exit 1 into passed.
TEST(HostileResultFile, EachEndsItsTrialAndNotTheWorker) {
  TempDir dir;
  const std::string suites = dir.path() + "/suites";
  std::filesystem::create_directories(suites);
  const json suite = {
      {"name", "hostile"}, {"version", 1},
      {"parameters", {{"kind", {"fifo", "zero", "outside", "sparse"}}}},
      {"stages",
       {{{"name", "run"}, {"kind", "command"}, {"timeout_s", 600},
         {"argv",
          {"sh", "-c",
           "f=\"$GAUNTLET_RESULT_FILE\"; case {kind} in "
           "fifo) mkfifo \"$f\";; zero) ln -s /dev/zero \"$f\";; "
           "sparse) printf '{' > \"$f\"; truncate -s 1G \"$f\";; "
           "outside) echo '{\"verdict\": \"passed\"}' > \"$GAUNTLET_WORKDIR/../outside.json\"; "
           "ln -s \"$GAUNTLET_WORKDIR/../outside.json\" \"$f\"; exit 1;; esac"}}}}}};
  std::ofstream(suites + "/hostile.json") << suite.dump(2);
  Daemon d(dir.path(), suites);
  auto w = StartWorker(dir.path(), d.url(), "w", json::object(), {"--max-trials", "2"});
  json sweep = d.PostJson("/api/v1/sweeps",
                          {{"suite", "hostile"}, {"prune", false}, {"reuse", false},
                           {"parameters", {{"kind", {"fifo", "zero", "outside", "sparse"}}}}},
                          201);
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(120));
  ASSERT_TRUE(done["finished"].get<bool>()) << done.dump() << "\n" << w->Log();
  json trials = d.GetJson("/api/v1/trials?sweep=" + sweep["id"].dump())["items"];
  ASSERT_EQ(trials.size(), 4u);
  for (auto& t : trials) {
    const std::string kind = t["config"]["kind"];
    EXPECT_NE(t["verdict"], "passed") << kind << ": " << t.dump();
    EXPECT_EQ(t["attempt"], 1) << kind << ": the worker never died or lost the lease";
    const json full = d.GetJson("/api/v1/trials/" + t["id"].dump());
    const std::string evidence = full.contains("result") ? full["result"].value("evidence", "") : "";
    EXPECT_NE(evidence.find("GAUNTLET_RESULT_FILE"), std::string::npos) << kind << ": " << full.dump();
  }
  EXPECT_TRUE(w->Running());
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(std::chrono::seconds(30)), 0) << w->Log();
}

}  // namespace
}  // namespace gauntlet::test
