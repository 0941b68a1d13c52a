// The route table: 404 differs from 405 (with Allow), tokens and roles, handler exceptions become
// 500 without internals, and every route appears in the OpenAPI document.
#include <gtest/gtest.h>

#include "app/serve.h"

#include <fstream>

#include "api/handlers.h"
#include "net/log_limiter.h"
#include "http/router.h"
#include "tests/support/harness.h"

namespace gauntlet::http {
namespace {
using nlohmann::json;

Router MakeRouter(const Auth* auth) {
  return Router(
      {{"GET", "/api/v1/things", Role::kRead, [](Request&) { return Json({{"ok", true}}); }},
       {"POST", "/api/v1/things", Role::kSubmit, [](Request&) { return Json(201, {{"made", true}}); }},
       {"GET", "/api/v1/things/{id}", Role::kRead, [](Request& r) { return Json({{"id", r.params["id"]}}); }},
       {"POST", "/api/v1/boom", Role::kRead,
        [](Request&) -> Response { throw std::runtime_error("secret internals /etc/passwd"); }},
       {"GET", "/web/*", Role::kPublic, [](Request& r) { return Json({{"file", r.params["*"]}}); }}},
      auth);
}

Response Call(const Router& router, const std::string& method, const std::string& path, const std::string& token = "") {
  Request r;
  r.method = method;
  r.path = path;
  if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
  return router.Dispatch(r);
}

TEST(Router, NotFoundDiffersFromMethodNotAllowed) {
  Router router = MakeRouter(nullptr);
  EXPECT_EQ(Call(router, "GET", "/api/v1/nothing").status, 404);
  Response r = Call(router, "DELETE", "/api/v1/things");
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Allow");
  EXPECT_EQ(r.headers[0].second, "GET, POST");
  EXPECT_EQ(r.content_type, "application/problem+json");
  EXPECT_EQ(json::parse(Call(router, "GET", "/api/v1/things/42").body)["id"], "42");
  EXPECT_EQ(json::parse(Call(router, "GET", "/web/js/app.js").body)["file"], "js/app.js");
}

TEST(Router, HandlerExceptionsAre500WithoutInternals) {
  Router router = MakeRouter(nullptr);
  Response r = Call(router, "POST", "/api/v1/boom");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body.find("passwd"), std::string::npos);
}

TEST(Router, TokensAndRoles) {
  test::TempDir dir;
  auto path = dir.Write("tokens", "# comment\nread sha256:" + Sha256Hex("r-token") + " alice\nsubmit sha256:" +
                                      Sha256Hex("s-token") + "\n");
  auto auth = Auth::Load(path);
  ASSERT_TRUE(auth.ok()) << auth.status().message();
  Router router = MakeRouter(&*auth);
  // No token and a wrong token are both 401, but say different things: send one, or send the right one.
  const Response none = Call(router, "GET", "/api/v1/things"), wrong = Call(router, "GET", "/api/v1/things", "wrong");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.body.find("a bearer token is required"), std::string::npos) << none.body;
  EXPECT_EQ(wrong.status, 401);
  EXPECT_NE(wrong.body.find("token not recognised"), std::string::npos) << wrong.body;
  EXPECT_EQ(wrong.body.find("is required"), std::string::npos) << wrong.body;
  EXPECT_EQ(Call(router, "GET", "/api/v1/things", "r-token").status, 200);
  EXPECT_EQ(Call(router, "POST", "/api/v1/things", "r-token").status, 403);
  EXPECT_EQ(Call(router, "POST", "/api/v1/things", "s-token").status, 201);
  EXPECT_EQ(Call(router, "GET", "/web/index.html").status, 200);  // the dashboard's files hold no data
}

TEST(Router, ANodeCredentialIsAWorkerBoundToItsNode) {
  test::TempDir dir;
  auto auth = Auth::Load(dir.Write("tokens", "worker sha256:" + Sha256Hex("fleet") + "\n"));
  ASSERT_TRUE(auth.ok());
  NodeCredentials nodes = [](const std::string& t) -> std::optional<int64_t> {
    if (t == "gn_seven") return 7;
    return std::nullopt;
  };
  Router router({{"POST", "/api/v1/nodes/{id}/lease", Role::kWorker,
                  [](Request& r) { return Json({{"role", r.role}, {"node", r.node}}); }, Lane::kIo},
                 {"GET", "/api/v1/sweeps", Role::kRead, [](Request&) { return Json({}); }}},
                &*auth, false, nodes);
  json bound = json::parse(Call(router, "POST", "/api/v1/nodes/7/lease", "gn_seven").body);
  EXPECT_EQ(bound["role"], "worker");
  EXPECT_EQ(bound["node"], 7);
  json shared = json::parse(Call(router, "POST", "/api/v1/nodes/7/lease", "fleet").body);
  EXPECT_EQ(shared["node"], 0) << "the tokens file's token speaks for no node";
  EXPECT_EQ(Call(router, "POST", "/api/v1/nodes/7/lease", "gn_other").status, 401);
  // The worker protocol is served on the I/O threads, reads on the handler pool.
  Request lease, list;
  lease.method = "POST";
  lease.path = "/api/v1/nodes/7/lease";
  list.method = "GET";
  list.path = "/api/v1/sweeps";
  EXPECT_EQ(router.LaneOf(lease), Lane::kIo);
  EXPECT_EQ(router.LaneOf(list), Lane::kPool);
}

TEST(LogLimiter, OneLineAPeriodAndTheHeldBackOnesCounted) {
  net::LogLimiter limit(std::chrono::seconds(10));
  const auto t0 = net::LogLimiter::Clock::now();
  int64_t held = -1;
  EXPECT_TRUE(limit.Allow(&held, t0));
  EXPECT_EQ(held, 0);
  for (int i = 1; i <= 1000; ++i) EXPECT_FALSE(limit.Allow(&held, t0 + std::chrono::milliseconds(i)));
  EXPECT_TRUE(limit.Allow(&held, t0 + std::chrono::seconds(10)));
  EXPECT_EQ(held, 1000);
  EXPECT_FALSE(limit.Allow(&held, t0 + std::chrono::seconds(11)));
}

TEST(Router, TokensFileErrorsNameTheLine) {
  test::TempDir dir;
  auto r = Auth::Load(dir.Write("tokens", "read sha256:abc\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(":1:"), std::string::npos);
  EXPECT_FALSE(Auth::Load(dir.Write("t2", "root sha256:" + Sha256Hex("x"))).ok());
  EXPECT_FALSE(Auth::Load(dir.path() + "/missing").ok());
}

TEST(Router, RoleRules) {
  EXPECT_TRUE(Allows(Role::kAdmin, Role::kWorker));
  EXPECT_TRUE(Allows(Role::kWorker, Role::kRead));
  EXPECT_FALSE(Allows(Role::kWorker, Role::kSubmit));
  EXPECT_FALSE(Allows(Role::kSubmit, Role::kWorker));
  EXPECT_FALSE(Allows(Role::kRead, Role::kAdmin));
}

TEST(OpenApi, EveryRouteInTheTableIsDocumented) {
  auto store = std::move(*store::Store::Open(":memory:"));
  daemon::EventBus events;
  daemon::Coordinator coord(*store, events, {});
  api::Context ctx{*store, coord, events, "", 0};
  json doc = json::parse(api::OpenApiDocument());
  ASSERT_EQ(doc["openapi"].get<std::string>().rfind("3.0", 0), 0u);
  auto routes = api::Routes(ctx);
  EXPECT_GT(routes.size(), 20u);
  for (auto& r : routes) {
    std::string path = r.pattern;
    if (path.size() > 2 && path.substr(path.size() - 2) == "/*") path = path.substr(0, path.size() - 1) + "{path}";
    std::string method = r.method;
    for (auto& c : method) c = static_cast<char>(tolower(c));
    EXPECT_TRUE(doc["paths"].contains(path) && doc["paths"][path].contains(method))
        << r.method << " " << r.pattern << " is missing from api/openapi.json";
  }
  coord.Stop();
}

TEST(Http, JsonDepthAndSyntaxErrors) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_THROW(ParseJson(deep), BadJson);
  EXPECT_NO_THROW(ParseJson(std::string(10, '[') + std::string(10, ']')));
  try {
    ParseJson("{\"a\": ");
    FAIL();
  } catch (const BadJson& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
  }
}

}  // namespace
}  // namespace gauntlet::http

namespace gauntlet::http {
namespace {

// Bytes that are not UTF-8, anywhere in a request, are a 400 naming the part: they never reach a
// handler, and the problem document itself is valid JSON (nlohmann's dump throws on them, which
// once aborted the daemon on GET /%ff).
TEST(Router, InvalidUtf8AnywhereIsA400NotACrash) {
  Router router({{"GET", "/api/v1/things", Role::kRead, [](Request&) { return Json({{"ok", true}}); }}}, nullptr);
  auto call = [&](auto&& tweak) {
    Request r;
    r.method = "GET";
    r.path = "/api/v1/things";
    tweak(r);
    return router.Dispatch(r);
  };
  const std::string ff = "\xff";
  Response path = call([&](Request& r) { r.path = "/" + ff; });
  EXPECT_EQ(path.status, 400);
  EXPECT_EQ(json::parse(path.body)["field"], "path");
  Response query = call([&](Request& r) { r.query.emplace("q", "a" + ff); });
  EXPECT_EQ(query.status, 400);
  EXPECT_EQ(json::parse(query.body)["field"], "query.q");
  Response header = call([&](Request& r) { r.headers["x-thing"] = ff; });
  EXPECT_EQ(header.status, 400);
  EXPECT_EQ(json::parse(header.body)["field"], "header.x-thing");
  EXPECT_EQ(call([](Request&) {}).status, 200);
  // A problem that quotes outside bytes is still valid JSON, the bytes replaced.
  Response p = Problem(404, "Not Found", "no route for /" + ff);
  EXPECT_NO_THROW(json::parse(p.body));
  EXPECT_NE(p.body.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

// Only loopback addresses count as loopback: a name that merely starts "127." is not one, so it
// cannot slip past serve's refusal to listen without tokens.
TEST(Serve, LoopbackMeansLoopback) {
  EXPECT_TRUE(app::IsLoopback("127.0.0.1"));
  EXPECT_TRUE(app::IsLoopback("127.9.8.7"));
  EXPECT_TRUE(app::IsLoopback("::1"));
  EXPECT_TRUE(app::IsLoopback("localhost"));
  EXPECT_FALSE(app::IsLoopback("127.example.com"));
  EXPECT_FALSE(app::IsLoopback("0.0.0.0"));
  EXPECT_FALSE(app::IsLoopback("10.1.2.3"));
}

// A body field of the wrong type ({"running": "yes"} where a boolean goes) is the client's mistake:
// 400 naming the body, never a 500 (a worker-protocol handler reading it threw json's type_error).
TEST(Router, AFieldOfTheWrongTypeIsA400) {
  Router router({{"POST", "/api/v1/leases/{lease}/heartbeat", Role::kWorker,
                  [](Request& r) { return Json({{"running", ParseJson(r.body).value("running", false)}}); }}},
                nullptr);
  Request r;
  r.method = "POST";
  r.path = "/api/v1/leases/x/heartbeat";
  r.body = R"({"running": "yes"})";
  Response out = router.Dispatch(r);
  EXPECT_EQ(out.status, 400) << out.body;
  EXPECT_EQ(json::parse(out.body)["field"], "body");
  r.body = R"({"running": true})";
  EXPECT_EQ(router.Dispatch(r).status, 200);
}

// A token-less daemon on loopback answers whatever reaches its port: the CLI and workers (no
// Origin), and its own dashboard (same origin). A page on another site, or a rebound DNS name, is 403.
TEST(Router, ALocalDaemonRefusesCrossSitePages) {
  Router router({{"POST", "/api/v1/sweeps", Role::kSubmit, [](Request&) { return Json(201, {{"id", 1}}); }},
                 {"GET", "/api/v1/sweeps", Role::kRead, [](Request&) { return Json({{"items", json::array()}}); }}},
                nullptr, /*local_only=*/true);
  auto call = [&](const std::string& method, std::map<std::string, std::string> headers) {
    Request r;
    r.method = method;
    r.path = "/api/v1/sweeps";
    r.headers = std::move(headers);
    r.body = "{}";
    return router.Dispatch(r).status;
  };
  const std::string host = "127.0.0.1:8080";
  EXPECT_EQ(call("POST", {{"host", host}, {"content-type", "application/json"}}), 201);  // the CLI
  EXPECT_EQ(call("POST", {{"host", host}, {"origin", "http://" + host}, {"content-type", "application/json"}}), 201);
  EXPECT_EQ(call("POST", {{"host", host}, {"origin", "https://evil.example"}, {"content-type", "application/json"}}), 403);
  EXPECT_EQ(call("POST", {{"host", host}, {"origin", "http://127.0.0.1:3000"}, {"content-type", "application/json"}}), 403);
  EXPECT_EQ(call("POST", {{"host", host}, {"origin", "http://" + host}, {"content-type", "text/plain"}}), 403);
  EXPECT_EQ(call("GET", {{"host", "evil.example:8080"}}), 403);  // DNS rebinding: the page thinks it is evil.example
  EXPECT_EQ(call("GET", {{"host", "localhost:8080"}}), 200);
  EXPECT_EQ(call("GET", {{"host", "[::1]:8080"}}), 200);
  // The same router without the check (tokens in use, or an explicit --insecure bind) lets them by.
  Router open({{"GET", "/api/v1/sweeps", Role::kRead, [](Request&) { return Json({}); }}}, nullptr);
  Request r;
  r.method = "GET";
  r.path = "/api/v1/sweeps";
  r.headers = {{"host", "evil.example:8080"}};
  EXPECT_EQ(open.Dispatch(r).status, 200);
}

// A long-poll whose timeout answer is a 204, as the worker protocol's lease is.
std::shared_ptr<Deferred> NoContentLongPoll() {
  return std::make_shared<Deferred>(std::chrono::milliseconds(30000), [] {
    Response r;
    r.status = 204;
    return r;
  });
}

// A server that is stopping (or whose client has closed) expires a long-poll's deferred before it
// calls Wait on it: the timeout answer must still reach Wait, or the connection hangs until the
// client gives up (a SIGTERM raced a lease call: the daemon waited out the worker's 30 s poll).
TEST(Deferred, AnExpiryBeforeTheWaitIsStillAnswered) {
  auto d = NoContentLongPoll();
  int abandoned = 0;
  d->on_abandon = [&] { ++abandoned; };
  d->Expire();
  EXPECT_TRUE(d->done());
  std::optional<int> got;
  d->Wait([&](Response r) { got = r.status; });
  ASSERT_TRUE(got.has_value()) << "the expiry's answer was lost";
  EXPECT_EQ(*got, 204);
  EXPECT_EQ(abandoned, 1);
  EXPECT_FALSE(d->Complete(Response{})) << "an expired deferred takes no later answer";
}

TEST(Deferred, AnExpiryAfterTheWaitAnswersOnce) {
  auto d = NoContentLongPoll();
  int calls = 0;
  d->Wait([&](Response r) { ++calls; EXPECT_EQ(r.status, 204); });
  d->Expire();
  d->Expire();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace gauntlet::http

