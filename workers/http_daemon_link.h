// The real DaemonLink: the worker protocol over REST (net/http_client.h), each call's HTTP answers
// mapped to what the worker must do next (the mapping is in http_daemon_link.cc, call by call).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "workers/daemon_link.h"

namespace gauntlet::worker {

// Thread-safe, as DaemonLink requires, though net::Client is not: the long-poll has a client of
// its own (so InterruptLease breaks that call and no other), and every other call borrows an idle
// keep-alive client from a pool, so trials reuse connections instead of opening one per trial.
class HttpDaemonLink final : public DaemonLink {
 public:
  // `server` is the daemon's base URL; `token` (may be empty) is sent as a bearer token until a
  // registration returns this node's own credential, which every later call sends instead.
  // `credential_file` (may be empty: kept in memory only) is where that credential is kept across
  // restarts (0600), so a restarted worker re-registers as the node it was. `call_limit` bounds a
  // heartbeat, log chunk or report; registration and quarantine get three times it, a long-poll
  // its wait plus 1.5 times it. Past its bound a call is kUnavailable, detail "... timed out ...".
  HttpDaemonLink(std::string server, std::string token, std::string credential_file = {},
                 std::chrono::milliseconds call_limit = std::chrono::seconds(10));
  ~HttpDaemonLink() override;

  RegisterAnswer Register(const nlohmann::json& node) override;
  LeaseAnswer Lease(int64_t node, const LeaseRequest& request) override;
  void InterruptLease() override;
  LinkAnswer Quarantine(int64_t node, const std::string& reason) override;
  HeartbeatAnswer Heartbeat(const std::string& lease, int64_t log_size) override;
  LinkAnswer AppendLog(const std::string& lease, int64_t offset, std::string_view data) override;
  LinkAnswer Report(const std::string& lease, const nlohmann::json& report) override;
  BundleAnswer FetchBundle(const std::string& sha256) override;  // GET /api/v1/bundles/SHA256, 3 call limits

 private:
  // One exchange on a borrowed client; the client goes back to the pool afterwards.
  Result<net::ClientResponse> Send(const std::string& method, const std::string& target, const std::string& body,
                                    const std::string& content_type, std::chrono::milliseconds timeout);

  std::string Bearer();  // the node credential once registered, else the configured token

  const std::string server_, token_, credential_file_;
  const std::chrono::milliseconds call_limit_;
  std::mutex cred_mu_;
  std::string node_token_;  // guarded by cred_mu_
  std::mutex lease_mu_;  // one long-poll at a time on lease_client_
  net::Client lease_client_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<net::Client>> idle_;  // guarded by pool_mu_
};

}  // namespace gauntlet::worker
