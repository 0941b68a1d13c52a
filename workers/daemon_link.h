// The seam between the worker and its daemon, in the spirit of leveldb's Env: what the worker loop
// and the trial runner say to the daemon (docs/DESIGN.md "Worker protocol": register, lease, heartbeat,
// log chunk, result; plus the node's own quarantine), as calls whose answers say what the caller
// must do next rather than which HTTP status came back. The real link is HttpDaemonLink
// (workers/http_daemon_link.h); tests/support/fake_daemon_link.h scripts a daemon in memory.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::worker {

// What an answer means for the caller. Each call's comment says which ones it can give.
enum class LinkStatus {
  kOk,           // the daemon took it
  kUnavailable,  // not reached, or the daemon cannot take it now: the same call may succeed later
  kLost,         // the lease is gone or its epoch is stale: stop the trial, report nothing more
  kUnknownNode,  // the daemon does not know this node (a fresh database): register again
  kRefused,      // the daemon refused the request itself: sending it again will not help
};

// One call's answer: what to do next, and why for the log. A plain value, as are those below.
struct LinkAnswer {
  LinkStatus status = LinkStatus::kUnavailable;
  std::string detail;  // for logs: the daemon's explanation or the transport error; may be empty
  bool ok() const { return status == LinkStatus::kOk; }
};

struct RegisterAnswer : LinkAnswer {
  int64_t node = 0;  // the node id, when ok
};

// A GPU the worker keeps from trials because NVML still lists processes on it after a trial
// (workers/gpu_handback.h): told to the daemon with every lease request, so operators see it.
struct HeldBackGpu {
  int index = 0;
  std::string reason;          // for people: which processes, and that they outlived their trial
  std::vector<unsigned> pids;  // what NVML listed on it
};

struct LeaseRequest {
  std::vector<int> free_gpus;            // GPU indices no trial of this worker holds
  std::vector<HeldBackGpu> held_back;    // GPUs neither free nor busy: held back, with the reason
  double wait_s = 20;                    // how long the daemon may hold the call for a trial
  std::vector<std::string> have_suites;  // "name@version" keys whose definitions need not travel
};

struct LeaseAnswer : LinkAnswer {
  // ok with a grant: a trial to run (the daemon's JSON: trial, lease, suite, config, gpus, ...,
  // always an object with "suite"); ok without one: nothing to run now.
  std::optional<nlohmann::json> grant;
};

struct BundleAnswer : LinkAnswer {
  std::string bytes;  // when ok: the suite bundle's archive, as the daemon sent it (unverified)
};

struct HeartbeatAnswer : LinkAnswer {
  bool cancel = false;  // when ok: the daemon asks the trial to stop (a user cancelled it)
};

// Every method blocks until the daemon answers or the call's own time limit passes, and is
// thread-safe: the worker loop and each trial's heartbeat and report threads share one link.
class DaemonLink {
 public:
  virtual ~DaemonLink() = default;
  // Registers this node (name, inventory, labels, fingerprint). ok (with the node id), kRefused
  // (bad token or inventory: registering again will not help), or kUnavailable.
  virtual RegisterAnswer Register(const nlohmann::json& node) = 0;
  // Long-polls for a trial for `node`. ok (with or without a grant), kUnknownNode, kRefused (an
  // answer the worker does not expect; detail says which), or kUnavailable. One call at a time.
  virtual LeaseAnswer Lease(int64_t node, const LeaseRequest& request) = 0;
  // Makes a Lease call in progress on another thread return soon (the worker drains). Best effort.
  virtual void InterruptLease() = 0;
  // Takes this node out of scheduling with `reason` (preflight failed). The answer is for logs.
  virtual LinkAnswer Quarantine(int64_t node, const std::string& reason) = 0;
  // Keeps the lease and says the trial runs, with the bytes of log written so far. ok (with the
  // daemon's cancel request), kLost, or kUnavailable.
  virtual HeartbeatAnswer Heartbeat(const std::string& lease, int64_t log_size) = 0;
  // Appends log bytes at `offset` (idempotent: a chunk the daemon already has is taken again). ok,
  // kLost (the lease, or an offset past the daemon's end), or kUnavailable.
  virtual LinkAnswer AppendLog(const std::string& lease, int64_t offset, std::string_view data) = 0;
  // The trial's final report (idempotent). ok, kLost (a stale lease or epoch), kRefused (the daemon
  // rejected the report itself), or kUnavailable.
  virtual LinkAnswer Report(const std::string& lease, const nlohmann::json& report) = 0;
  // The suite bundle stored under `sha256` (workers/suite_bundles.h checks it). ok (with the bytes),
  // kRefused (the daemon has none, or refused the caller), or kUnavailable. This default is for
  // links that carry no bundles (test links): kRefused.
  virtual BundleAnswer FetchBundle(const std::string& sha256) {
    BundleAnswer a;
    a.status = LinkStatus::kRefused;
    a.detail = "this link fetches no suite bundles (" + sha256.substr(0, 12) + ")";
    return a;
  }
};

}  // namespace gauntlet::worker
