#include "workers/http_daemon_link.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/utf8.h"

namespace gauntlet::worker {
using nlohmann::json;

namespace {

LinkAnswer Answer(LinkStatus s, std::string detail = {}) {
  LinkAnswer a;
  a.status = s;
  a.detail = std::move(detail);
  return a;
}

// The daemon's answer or the transport's error, for logs.
std::string Detail(const Result<net::ClientResponse>& r) { return r.ok() ? r->body : r.status().message(); }

// The stored credential for (server, name), or "": one file per workdir, one node per worker.
std::string LoadCredential(const std::string& path, const std::string& server, const std::string& name) {
  if (path.empty()) return "";
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || j.value("server", "") != server || j.value("name", "") != name) return "";
  return j.value("node_token", "");
}

// Written to a temporary file first and renamed, readable by its owner only (it is a secret).
void SaveCredential(const std::string& path, const std::string& server, const std::string& name,
                    const std::string& token) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    spdlog::warn("cannot keep the node credential in {}: {}", path, strerror(errno));
    return;
  }
  const std::string text = json{{"server", server}, {"name", name}, {"node_token", token}}.dump() + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) spdlog::warn("cannot keep the node credential in {}", path);
}

}  // namespace

HttpDaemonLink::HttpDaemonLink(std::string server, std::string token, std::string credential_file,
                               std::chrono::milliseconds call_limit)
    : server_(std::move(server)), token_(std::move(token)), credential_file_(std::move(credential_file)),
      call_limit_(call_limit), lease_client_(server_, token_) {}

std::string HttpDaemonLink::Bearer() {
  std::lock_guard lock(cred_mu_);
  return node_token_.empty() ? token_ : node_token_;
}

HttpDaemonLink::~HttpDaemonLink() = default;

Result<net::ClientResponse> HttpDaemonLink::Send(const std::string& method, const std::string& target,
                                                  const std::string& body, const std::string& content_type,
                                                  std::chrono::milliseconds timeout) {
  std::unique_ptr<net::Client> c;
  {
    std::lock_guard lock(pool_mu_);
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!c) c = std::make_unique<net::Client>(server_, token_);
  c->SetToken(Bearer());
  auto r = c->Send(method, target, body, content_type, timeout);
  std::lock_guard lock(pool_mu_);
  idle_.push_back(std::move(c));  // a broken connection reconnects on its next use
  return r;
}

RegisterAnswer HttpDaemonLink::Register(const json& node) {
  // Registration goes with the configured token; the node's credential, if this worker holds one,
  // travels in the body and proves that this is the node it was (the daemon keeps it then).
  const std::string name = node.is_object() ? node.value("name", "") : "";
  json body = node;
  if (std::string held = LoadCredential(credential_file_, server_, name); !held.empty()) body["node_token"] = held;
  {
    std::lock_guard lock(cred_mu_);
    node_token_.clear();
  }
  auto r = Send("POST", "/api/v1/nodes/register", SafeDump(body), "application/json", call_limit_ * 3);
  RegisterAnswer a;
  if (r.ok() && r->status == 200) {
    json j = json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("node") && j["node"].is_number_integer()) {
      a.status = LinkStatus::kOk;
      a.node = j["node"].get<int64_t>();
      if (j.contains("node_token") && j["node_token"].is_string()) {
        const std::string t = j["node_token"].get<std::string>();
        SaveCredential(credential_file_, server_, name, t);
        std::lock_guard lock(cred_mu_);
        node_token_ = t;
      }
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
  json held = json::array();
  for (auto& g : req.held_back) held.push_back({{"gpu", g.index}, {"reason", g.reason}, {"pids", g.pids}});
  const json body = {{"free_gpus", req.free_gpus}, {"held_back", held}, {"wait_s", req.wait_s},
                     {"have_suites", req.have_suites}};
  auto r = [&] {
    std::lock_guard lock(lease_mu_);
    lease_client_.SetToken(Bearer());
    // The daemon holds the call up to wait_s; the margin covers its answer and a slow group commit.
    return lease_client_.Send("POST", "/api/v1/nodes/" + std::to_string(node) + "/lease", SafeDump(body),
                              "application/json",
                              std::chrono::milliseconds(static_cast<int64_t>(req.wait_s * 1000)) + call_limit_ * 3 / 2);
  }();
  LeaseAnswer a;
  if (!r.ok() || r->status >= 500) {
    a.detail = Detail(r);
    return a;
  }
  // 403: this worker's credential no longer acts for the node (its name went offline and another
  // worker claimed it). Registering again is the way back, as for a node the daemon forgot.
  if (r->status == 404 || r->status == 403) {
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
                "application/json", call_limit_ * 3);
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  return Answer(r.ok() && r->status < 500 ? LinkStatus::kRefused : LinkStatus::kUnavailable, Detail(r));
}

HeartbeatAnswer HttpDaemonLink::Heartbeat(const std::string& lease, int64_t log_size) {
  auto r = Send("POST", "/api/v1/leases/" + lease + "/heartbeat", json{{"running", true}, {"log_size", log_size}}.dump(),
                "application/json", call_limit_);
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
                "text/plain", call_limit_);
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  // 409 is a lost lease, or an offset past the daemon's end, which only a lost lease explains.
  if (r.ok() && r->status == 409) return Answer(LinkStatus::kLost, r->body);
  return Answer(LinkStatus::kUnavailable, Detail(r));
}

LinkAnswer HttpDaemonLink::Report(const std::string& lease, const json& report) {
  auto r = Send("POST", "/api/v1/leases/" + lease + "/result", SafeDump(report), "application/json", call_limit_);
  if (r.ok() && r->status == 200) return Answer(LinkStatus::kOk);
  if (r.ok() && r->status == 409) return Answer(LinkStatus::kLost, r->body);
  // 503 is a daemon that cannot commit now (shutting down, store busy); every other error status
  // is about the report itself, and sending it again would be refused again.
  if (r.ok() && r->status >= 400 && r->status != 503)
    return Answer(LinkStatus::kRefused, std::to_string(r->status) + ": " + r->body);
  return Answer(LinkStatus::kUnavailable, Detail(r));
}

}  // namespace gauntlet::worker

namespace gauntlet::worker {

BundleAnswer HttpDaemonLink::FetchBundle(const std::string& sha256) {
  auto r = Send("GET", "/api/v1/bundles/" + sha256, "", "", call_limit_ * 3);
  BundleAnswer a;
  if (r.ok() && r->status == 200) {
    a.status = LinkStatus::kOk;
    a.bytes = std::move(r->body);
    return a;
  }
  a.status = r.ok() && r->status < 500 ? LinkStatus::kRefused : LinkStatus::kUnavailable;
  a.detail = r.ok() ? std::to_string(r->status) + ": " + r->body.substr(0, 300) : r.status().message();
  return a;
}

}  // namespace gauntlet::worker
