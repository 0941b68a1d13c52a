#include "workers/http_daemon_link.h"

#include <spdlog/spdlog.h>

#include "core/utf8.h"

namespace gauntlet {
using nlohmann::json;

namespace {

constexpr auto kCallLimit = std::chrono::seconds(10);  // heartbeat, log chunk, report

LinkAnswer Answer(LinkStatus s, std::string detail = {}) {
  LinkAnswer a;
  a.status = s;
  a.detail = std::move(detail);
  return a;
}

// The daemon's answer or the transport's error, for logs.
std::string Detail(const Result<http::ClientResponse>& r) { return r.ok() ? r->body : r.status().message(); }

}  // namespace

HttpDaemonLink::HttpDaemonLink(std::string server, std::string token)
    : server_(std::move(server)), token_(std::move(token)), lease_client_(server_, token_) {}

HttpDaemonLink::~HttpDaemonLink() = default;

Result<http::ClientResponse> HttpDaemonLink::Send(const std::string& method, const std::string& target,
                                                  const std::string& body, const std::string& content_type,
                                                  std::chrono::milliseconds timeout) {
  std::unique_ptr<http::Client> c;
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!c) c = std::make_unique<http::Client>(server_, token_);
  auto r = c->Send(method, target, body, content_type, timeout);
  std::lock_guard lock(pool_mu_);
  idle_.push_back(std::move(c));  // a broken connection reconnects on its next use
  return r;
}

RegisterAnswer HttpDaemonLink::Register(const json& node) {
  auto r = Send("POST", "/api/v1/nodes/register", SafeDump(node), "application/json", std::chrono::seconds(30));
  RegisterAnswer a;
  if (r.ok() && r->status == 200) {
    json j = json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("node") && j["node"].is_number_integer()) {
      a.status = LinkStatus::kOk;
      a.node = j["node"].get<int64_t>();
      return a;
    }
    a.detail = "a registration answer without a node id: " + r->body.substr(0, 200);
    return a;  // kUnavailable: a daemon in a bad moment, worth another try
  }
  // A bad token or an inventory the daemon refuses stays refused; anything else may pass later.
  if (r.ok() && (r->status == 401 || r->status == 403 || r->status == 422)) {
    a.status = LinkStatus::kRefused;
    a.detail = std::to_string(r->status) + ": " + r->body;
    return a;
  }
  a.detail = r.ok() ? std::to_string(r->status) : r.status().message();
  return a;
}

LeaseAnswer HttpDaemonLink::Lease(int64_t node, const LeaseRequest& req) {
  const json body = {{"free_gpus", req.free_gpus}, {"wait_s", req.wait_s}, {"have_suites", req.have_suites}};
  auto r = [&] {
    std::lock_guard lock(lease_mu_);
    // The daemon holds the call up to wait_s; the margin covers its answer and a slow group commit.
    return lease_client_.Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/lease", SafeDump(body),
                              "application/json", std::chrono::milliseconds(static_cast<int64_t>(req.wait_s * 1000) + 15000));
  }();
  LeaseAnswer a;
  if (!r.ok() || r->status >= 500) {
    a.detail = Detail(r);
    return a;
  }
  if (r->status == 404) {
    a.status = LinkStatus::kUnknownNode;
    a.detail = r->body;
    return a;
  }
  if (r->status == 204) {
    a.status = LinkStatus::kOk;
    return a;
  }
  if (r->status != 200) {
    a.status = LinkStatus::kRefused;
    a.detail = std::to_string(r->status) + ": " + r->body;
    return a;
  }
  a.status = LinkStatus::kOk;
  json grant = json::parse(r->body, nullptr, false);
  if (grant.is_object() && grant.contains("suite")) a.grant = std::move(grant);
  else spdlog::warn("ignoring a lease grant that is not a trial: {}", r->body.substr(0, 200));
  return a;
}

void HttpDaemonLink::InterruptLease() { lease_client_.Interrupt(); }

LinkAnswer HttpDaemonLink::Quarantine(int64_t node, const std::string& reason) {
  auto r = Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/quarantine", SafeDump(json{{"reason", reason}}),
                "application/json", std::chrono::seconds(30));
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  return Answer(r.ok() && r->status < 500 ? LinkStatus::kRefused : LinkStatus::kUnavailable, Detail(r));
}

HeartbeatAnswer HttpDaemonLink::Heartbeat(const std::string& lease, int64_t log_size) {
  auto r = Send("POST", "/api/v1/leases/" + lease + "/heartbeat", json{{"running", true}, {"log_size", log_size}}.dump(),
                "application/json", kCallLimit);
  HeartbeatAnswer a;
  a.detail = Detail(r);
  if (r.ok() && r->status == 200) {
    a.status = LinkStatus::kOk;
    json j = json::parse(r->body, nullptr, false);
    a.cancel = j.is_object() && j.value("cancel", false);
  } else if (r.ok() && r->status == 409) {
    a.status = LinkStatus::kLost;
  }
  return a;  // anything else: the daemon is away; the trial goes on and its report waits
}

LinkAnswer HttpDaemonLink::AppendLog(const std::string& lease, int64_t offset, std::string_view data) {
  auto r = Send("POST", "/api/v1/leases/" + lease + "/log?offset=" + std::to_string(offset), std::string(data),
                "text/plain", kCallLimit);
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  // 409 is a lost lease, or an offset past the daemon's end, which only a lost lease explains.
  if (r.ok() && r->status == 409) return Answer(LinkStatus::kLost, r->body);
  return Answer(LinkStatus::kUnavailable, Detail(r));
}

LinkAnswer HttpDaemonLink::Report(const std::string& lease, const json& report) {
  auto r = Send("POST", "/api/v1/leases/" + lease + "/result", SafeDump(report), "application/json", kCallLimit);
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  if (r.ok() && r->status == 409) return Answer(LinkStatus::kLost, r->body);
  // 503 is a daemon that cannot commit now (shutting down, store busy); every other error status
  // is about the report itself, and sending it again would be refused again.
  if (r.ok() && r->status >= 400 && r->status != 503)
    return Answer(LinkStatus::kRefused, std::to_string(r->status) + ": " + r->body);
  return Answer(LinkStatus::kUnavailable, Detail(r));
}

}  // namespace gauntlet
