// Fuzzes the daemon's request path: bytes -> http::Request -> http::Router over the real route table
// (api::Routes on an in-memory store, an event bus and a coordinator, built once: state carries from
// one input to the next, as it does in a daemon).
//
// An input reads like an HTTP/1.1 request without the version:
//   METHOD TARGET\n   (name: value\n)*   \n   body
// ("\r\n" is accepted too). The target is split and URL-decoded as net/request_head.cc's ToRequest
// does; "$LEASE" in it stands for the last lease the fuzzer was granted, so inputs can reach the
// heartbeat, log and result handlers without guessing a random lease id.
//
// What must hold for every input: Dispatch returns (nothing escapes it: the router's own net catches
// std::exception, anything else ends the process here); the answer is not a 500 (a handler failed on
// a client's bytes: the router logs it as a server fault, which it is); a status is a status; a body
// whose type says JSON parses; a deferred answer settles; a stream yields its first chunk.
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "api/handlers.h"
#include "core/bundle.h"
#include "core/yaml_json.h"
#include "daemon/coordinator.h"
#include "daemon/events.h"
#include "http/router.h"
#include "store/store.h"

namespace {
using namespace gauntlet;
using nlohmann::json;

struct Daemon {
  std::unique_ptr<store::Store> store;
  daemon::EventBus events;
  std::unique_ptr<daemon::Coordinator> coord;
  std::unique_ptr<api::Context> ctx;
  std::unique_ptr<http::Router> router;
  std::string lease = "no-lease-yet";
};

[[noreturn]] void Fail(const std::string& what, const http::Request& req, const http::Response& r) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n  request: %s %s (body %zu bytes)\n  answer: %d %s\n  body: %.2000s\n",
               what.c_str(), req.method.c_str(), req.target.c_str(), req.body.size(), r.status,
               r.content_type.c_str(), r.body.c_str());
  std::abort();
}

// The answer a server would send: a deferred one is waited for (a lease long-poll's timer fired at
// once: an input must not hold the fuzzer for up to 120 s); a stream gives its first chunk and closes.
http::Response Settle(http::Response r, const http::Request& req) {
  if (r.stream) {
    bool got = false;
    r.stream->Pull([&got](std::optional<std::string> chunk) { got = chunk.has_value(); });
    r.stream->Close();
    if (!got) Fail("a stream gave no first chunk", req, r);
    return r;
  }
  if (!r.deferred) return r;
  struct Slot {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<http::Response> answer;
  };
  auto slot = std::make_shared<Slot>();
  auto d = r.deferred;
  d->Wait([slot](http::Response a) {
    std::lock_guard lock(slot->mu);
    slot->answer = std::move(a);
    slot->cv.notify_all();
  });
  std::unique_lock lock(slot->mu);
  if (d->timeout().count() > 0) {
    // Give a grant that is being committed a moment to arrive, then fire the timer as the server would.
    slot->cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return slot->answer.has_value(); });
    lock.unlock();
    d->Expire();
    lock.lock();
  }
  // No timer (a write acknowledged once committed): the commit settles it, as committed or failed.
  if (!slot->cv.wait_for(lock, std::chrono::seconds(5), [&] { return slot->answer.has_value(); }))
    Fail("a deferred answer never came", req, r);
  return std::move(*slot->answer);
}

Daemon& TheDaemon() {
  // Leaked on purpose: the coordinator's clock thread must not race exit-time destructors.
  static Daemon* d = [] {
    auto* d = new Daemon;
    auto store = store::Store::Open(":memory:");
    if (!store.ok()) std::abort();
    d->store = std::move(*store);
    d->coord = std::make_unique<daemon::Coordinator>(*d->store, d->events, daemon::CoordinatorOptions{});
    d->ctx = std::make_unique<api::Context>(api::Context{*d->store, *d->coord, d->events,
                                                         std::string(GAUNTLET_SOURCE_DIR) + "/web", 0});
    d->router = std::make_unique<http::Router>(api::Routes(*d->ctx), nullptr);
    return d;
  }();
  return *d;
}

// The request as http_server.cc's ToRequest builds it from what Beast parsed.
http::Request ToRequest(std::string_view in, const std::string& lease) {
  http::Request r;
  auto line_end = [&](std::string_view s) { return s.find('\n'); };
  auto take_line = [&](std::string_view& s) {
    size_t n = line_end(s);
    std::string_view line = s.substr(0, n);
    s.remove_prefix(n == std::string_view::npos ? s.size() : n + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  std::string_view first = take_line(in);
  size_t sp = first.find(' ');
  r.method = std::string(first.substr(0, sp));
  r.target = sp == std::string_view::npos ? "/" : std::string(first.substr(sp + 1));
  for (size_t at; (at = r.target.find("$LEASE")) != std::string::npos;) r.target.replace(at, 6, lease);
  http::ParseTarget(r);  // the server's own parser
  while (!in.empty()) {
    std::string_view h = take_line(in);
    if (h.empty()) break;
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) continue;  // Beast would have refused the request
    std::string name(h.substr(0, colon));
    for (auto& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    std::string_view v = h.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    r.headers[name] = std::string(v);
  }
  r.body = std::string(in);
  return r;
}

// A sweep's trials are rows the store writes now: a request may ask for up to a million of them by
// design (max_trials). The fuzzer would find that; it is a cost, not a bug, so it is capped here.
void CapSweep(http::Request& req) {
  if (req.method != "POST" || req.path != "/api/v1/sweeps") return;
  json j = json::parse(req.body, nullptr, false);
  if (!j.is_object()) return;
  if (!j.contains("max_trials") || (j["max_trials"].is_number_integer() && j["max_trials"].get<int64_t>() > 2000))
    j["max_trials"] = 2000;
  req.body = j.dump();
}

void Check(const http::Request& req, const http::Response& r) {
  if (r.status < 100 || r.status > 599) Fail("not an HTTP status", req, r);
  if (r.status == 500) Fail("a 500: a handler failed on the client's input", req, r);
  const bool is_json = r.content_type.find("json") != std::string::npos;
  if (r.status == 204) {
    if (!r.body.empty()) Fail("a 204 with a body", req, r);
  } else if (is_json && !json::accept(r.body)) {
    Fail("a JSON answer that does not parse", req, r);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The router logs every 500, which is a finding here anyway; the rest is noise at 10^4 runs/s.
  spdlog::set_level(spdlog::level::off);
  Daemon& d = TheDaemon();
  // Seed the state with what a fresh daemon soon holds: a real suite, a node with a GPU, a sweep.
  auto suite = ReadJsonOrYaml(std::string(GAUNTLET_SOURCE_DIR) + "/suites/torch-sdpa.json");
  if (!suite.ok()) std::abort();
  // Its folder's files travel with it (a suite that names {suite_dir} is refused without them).
  auto files = PackFolder(std::string(GAUNTLET_SOURCE_DIR) + "/suites");
  if (!files.ok()) std::abort();
  const std::string sha = BundleSha256(files->bytes);
  const std::string bundle_path = "/api/v1/bundles/" + sha;
  const char* setup[][3] = {
      {"PUT", bundle_path.c_str(), nullptr},
      {"PUT", "/api/v1/suites/torch-sdpa", nullptr},
      {"POST", "/api/v1/nodes/register",
       R"({"name":"fuzz-node","inventory":{"gpus":[{"index":0,"name":"NVIDIA H200","compute_capability":"9.0","memory_mb":143771}]}})"},
      {"POST", "/api/v1/sweeps", R"({"suite":"torch-sdpa","name":"seed"})"},
  };
  for (auto& s : setup) {
    http::Request req;
    req.method = s[0];
    req.target = req.path = s[1];
    req.body = s[2] ? s[2] : req.path == bundle_path ? files->bytes : suite->dump();
    if (req.path == "/api/v1/suites/torch-sdpa") req.query.emplace("bundle", sha);
    http::Response r = Settle(d.router->Dispatch(req), req);
    if (r.status >= 300) Fail("the fuzz fixture's setup failed", req, r);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Daemon& d = TheDaemon();
  http::Request req = ToRequest(std::string_view(reinterpret_cast<const char*>(data), size), d.lease);
  CapSweep(req);
  const http::Request sent = req;  // Dispatch may change req (params, role)
  http::Response r;
  try {
    r = Settle(d.router->Dispatch(req), sent);
  } catch (...) {
    std::fprintf(stderr, "\nFUZZ FINDING: an exception escaped Router::Dispatch for %s %s\n", sent.method.c_str(),
                 sent.target.c_str());
    std::abort();
  }
  Check(sent, r);
  // GAUNTLET_FUZZ_VERBOSE=1: one line per request, to see what a seed reaches.
  static const bool verbose = std::getenv("GAUNTLET_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s %s -> %d %.160s\n", sent.method.c_str(), sent.target.c_str(), r.status, r.body.c_str());
  if (r.status == 200 && sent.path.find("/lease") != std::string::npos) {
    json j = json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("lease") && j["lease"].is_string()) d.lease = j["lease"];
  }
  return 0;
}
