// The worker protocol (docs/DESIGN.md "Worker protocol") and the fleet view.
#include "api/codec.h"
#include "api/handlers.h"
#include "api/requests.h"
#include "api/views.h"
#include "core/field_limits.h"

#include <set>

namespace gauntlet::api {
using http::Request;
using http::Response;
using http::Role;
using nlohmann::json;

namespace {

Response Lost() {
  return FromStatus(Status(Code::kUnavailable, "the store could not commit this change; send it again"));
}

// The same, naming why when the store says (a full disk).
Response LostBecause(const Status& s) {
  return FromStatus(Status(Code::kUnavailable, "the store could not commit this change; send it again: " + s.message()));
}

// `r`, sent once every write staged so far is committed (a 503 if that commit failed): how a
// worker-protocol answer acknowledges a staged write. `r` itself when nothing is pending.
Response Durable(daemon::Coordinator& coord, Response r) {
  // No timer: every staged write's commit settles, as committed or as failed.
  auto d = std::make_shared<http::Deferred>(std::chrono::milliseconds(0), Lost);
  auto now = coord.WhenCommitted([d, r](Status s) { d->Complete(s.ok() ? r : LostBecause(s)); });
  if (now) return now->ok() ? std::move(r) : LostBecause(*now);
  return http::Later(std::move(d));
}

Response LeaseResponse(const daemon::LeaseOutcome& a) {
  if (!a.ok()) return FromStatus(a.status());
  return *a ? http::Json(GrantJson(**a)) : http::NoContent();
}

// The long-poll: the coordinator answers through a Deferred whose timer (run by the server) ends an
// unanswered wait with 204 and tells the coordinator to forget it, as the server does at once when
// the worker closes its connection meanwhile. A grant that finds the wait over (the worker gone
// while its lease committed), or that the server could not hand over, is given back.
Response Lease(daemon::Coordinator& coord, int64_t node, const std::vector<int>& free, std::chrono::milliseconds wait,
               const std::set<std::string>& have) {
  auto d = std::make_shared<http::Deferred>(wait, [] { return http::NoContent(); });
  // The grant's lease, written before Complete and read by on_undelivered after it.
  auto granted = std::make_shared<std::string>();
  daemon::LeaseWaiter w{[d] { return !d->done(); }, [d, granted, &coord](daemon::LeaseOutcome a) {
                  std::string lease = a.ok() && *a ? (*a)->grant.lease : "";
                  *granted = lease;
                  if (!d->Complete(LeaseResponse(a)) && !lease.empty()) coord.ReturnGrant(lease);
                }};
  if (int64_t id = coord.Lease(node, free, wait, have, std::move(w)))
    d->on_abandon = [&coord, node, id] { coord.AbandonLease(node, id); };
  d->on_undelivered = [&coord, granted] {
    if (!granted->empty()) coord.ReturnGrant(*granted);
  };
  return http::Later(std::move(d));
}

// Who may act for a node: with tokens on, a worker acts only through the credential its node's
// registration returned, and only for that node; the tokens file's worker token registers and no
// more. Admins (and everyone on a token-less loopback daemon, where every caller is admin) may act
// for any node. A 403 to give, or nullopt.
std::optional<Response> NotYourNode(const Request& r, std::optional<int64_t> node) {
  if (r.role != "worker") return std::nullopt;
  if (r.node == 0)
    return http::Problem(403, "Forbidden",
                         "a worker acts for its node with the node_token its registration returned, not the tokens "
                         "file's worker token");
  if (node && *node != r.node)
    return http::Problem(403, "Forbidden",
                         "this credential acts for node " + std::to_string(r.node) + " only, not node " +
                             std::to_string(*node));
  return std::nullopt;
}

// The same for a lease: the node that holds it (an unknown lease passes here and is the call's 409).
std::optional<Response> NotYourLease(Context& c, const Request& r) {
  if (r.role != "worker") return std::nullopt;
  return NotYourNode(r, c.coord.LeaseNode(r.params.at("lease")));
}

// The lease request's "held_back" ([{gpu, reason, pids}], optional: a worker that sends none holds
// none back). A 422 naming the field, or nullopt with *out filled.
std::optional<Response> ParseHeldBack(const json& body, std::map<int, daemon::HeldGpu>* out) {
  if (!body.contains("held_back")) return std::nullopt;
  auto bad = [](const std::string& why) {
    return http::Problem(422, "Unprocessable Entity", why, "held_back");
  };
  const json& list = body["held_back"];
  if (!list.is_array() || list.size() > 1024) return bad("held_back is a list of at most 1024 GPUs");
  for (auto& g : list) {
    if (!g.is_object() || !g.contains("gpu") || !g["gpu"].is_number_integer())
      return bad("each held_back entry is an object with an integer gpu");
    const int64_t index = g["gpu"].get<int64_t>();
    if (index < 0 || index > 1023) return bad("held_back gpu is 0 to 1023");
    daemon::HeldGpu h;
    if (g.contains("reason")) {
      if (!g["reason"].is_string()) return bad("held_back reason is a string");
      h.reason = g["reason"].get<std::string>().substr(0, 2000);
    }
    if (g.contains("pids")) {
      if (!g["pids"].is_array() || g["pids"].size() > 256) return bad("held_back pids is a list of at most 256 pids");
      for (auto& p : g["pids"]) {
        if (!p.is_number_integer() || p.get<int64_t>() < 0) return bad("held_back pids are non-negative integers");
        h.pids.push_back(p.get<int64_t>());
      }
    }
    (*out)[static_cast<int>(index)] = std::move(h);
  }
  return std::nullopt;
}

Response RegisterNode(Context& c, Request& r) {
  json body = http::ParseJson(r.body);
  daemon::Coordinator::NodeCredential cred;
  std::string presented;
  if (body.is_object() && body.contains("node_token")) {
    if (!body["node_token"].is_string())
      return http::Problem(422, "Unprocessable Entity", "node_token is a string", "node_token");
    presented = body["node_token"].get<std::string>();
    cred.presented = http::Sha256Hex(presented);
    body.erase("node_token");
  }
  const std::string fresh = http::NewSecret("gn_");
  cred.fresh = http::Sha256Hex(fresh);
  auto reg = ParseRegistration(body);
  if (!reg.ok()) return FromStatus(reg.status());
  auto res = c.coord.Register(*reg, cred);
  if (!res.ok()) return FromStatus(res.status());
  const bool kept = res->credential == daemon::RegistrationAnswer::Credential::kKept;
  return http::Json({{"node", res->node}, {"heartbeat_ms", res->heartbeat_ms}, {"lease_ttl_ms", res->lease_ttl_ms},
                     {"state", Name(res->state)}, {"hardware", res->hardware}, {"node_token", kept ? presented : fresh}});
}

// PUT /api/v1/launchers/{name}: a launcher's report of its jobs.
Response LauncherAnswer(Context& c, Request& r) {
  // A launcher (gauntlet slurm) reports with the tokens file's worker token; a node's
  // credential speaks for its node only.
  if (r.role == "worker" && r.node != 0)
    return http::Problem(403, "Forbidden",
                         "a node credential cannot report for a launcher; the launcher uses its own token");
  const std::string& name = r.params["name"];
  if (name.empty() || name.size() > limits::kLauncherNameBytes)
    return http::Problem(422, "Unprocessable Entity",
                         "a launcher's name is 1 to " + std::to_string(limits::kLauncherNameBytes) + " bytes",
                         "name");
  auto report = ParseLauncherReport(http::ParseJson(r.body));
  if (!report.ok()) return FromStatus(report.status());
  if (auto token = http::BearerToken(r.Header("authorization")); token && r.role != "admin")
    report->owner = http::Sha256Hex(*token);
  if (Status s = c.coord.SetLauncher(name, std::move(*report)); !s.ok()) return FromStatus(s);
  return http::NoContent();
}

// POST /api/v1/nodes/{id}/lease: the node's free GPUs, the suites it holds and how long it waits.
Response LeaseAnswer(Context& c, Request& r) {
  auto id = ParseId(r.params["id"]);
  if (!id) return http::Problem(404, "Not Found", "no node '" + r.params["id"] + "'", "id");
  if (auto no = NotYourNode(r, *id)) return *no;
  json body = r.body.empty() ? json::object() : http::ParseJson(r.body);
  std::vector<int> free;
  if (body.contains("free_gpus")) {
    if (!body["free_gpus"].is_array()) return http::Problem(422, "Unprocessable Entity", "free_gpus is a list", "free_gpus");
    for (auto& g : body["free_gpus"]) {
      if (!g.is_number_integer()) return http::Problem(422, "Unprocessable Entity", "GPU indices are integers", "free_gpus");
      free.push_back(g.get<int>());
    }
  }
  std::set<std::string> have;
  if (body.contains("have_suites") && body["have_suites"].is_array())
    for (auto& k : body["have_suites"])
      if (k.is_string()) have.insert(k.get<std::string>());
  double wait_s = body.value("wait_s", 0.0);
  if (wait_s < 0 || wait_s > 120) return http::Problem(422, "Unprocessable Entity", "wait_s is 0 to 120", "wait_s");
  std::map<int, daemon::HeldGpu> held;
  if (auto bad = ParseHeldBack(body, &held)) return *bad;
  c.coord.SetHeldBack(*id, std::move(held));
  return Lease(c.coord, *id, free, std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000)), have);
}

// POST /api/v1/nodes/{id}/quarantine, with the reason it is out of service.
Response QuarantineAnswer(Context& c, Request& r) {
  auto id = ParseId(r.params["id"]);
  if (!id) return http::Problem(404, "Not Found", "no node '" + r.params["id"] + "'", "id");
  // An admin's call; a worker may quarantine only its own node (its preflight failed).
  if (auto no = NotYourNode(r, *id)) return *no;
  json body = r.body.empty() ? json::object() : http::ParseJson(r.body);
  if (body.contains("reason") && !body["reason"].is_string())
    return http::Problem(422, "Unprocessable Entity", "reason is a string", "reason");
  std::string reason = body.value("reason", "quarantined by its worker");
  if (reason.size() > limits::kReasonBytes)
    return http::Problem(422, "Unprocessable Entity",
                         "reason is " + std::to_string(reason.size()) + " bytes; at most " +
                             std::to_string(limits::kReasonBytes),
                         "reason");
  if (Status s = c.coord.SetNodeState(*id, NodeState::kQuarantined, reason); !s.ok()) return FromStatus(s);
  return http::Json({{"node", *id}, {"state", Name(NodeState::kQuarantined)}, {"reason", reason}});
}

}  // namespace

http::NodeCredentials NodeCredentialsOf(Context& c) {
  return [&c](const std::string& token) { return c.coord.NodeForCredential(http::Sha256Hex(token)); };
}

std::vector<http::Route> WorkerRoutes(Context& c) {
  auto node_id = [](Request& r) { return ParseId(r.params["id"]); };
  std::vector<http::Route> routes = {
      {"POST", "/api/v1/nodes/register", Role::kWorker,
       [&c](Request& r) -> Response { return RegisterNode(c, r); }},
      {"GET", "/api/v1/nodes", Role::kRead,
       [&c](Request&) -> Response {
         return http::Json({{"items", NodesJson(c.coord.Nodes())}, {"launchers", LaunchersJson(c.coord.Launchers())}});
       }},
      {"GET", "/api/v1/nodes/{id}", Role::kRead,
       [&c, node_id](Request& r) -> Response {
         auto id = node_id(r);
         if (!id) return http::Problem(404, "Not Found", "no node '" + r.params["id"] + "'", "id");
         auto n = c.coord.Node(*id);
         if (!n.ok()) return FromStatus(n.status());
         return http::Json(NodeJson(*n));
       }},
      {"PUT", "/api/v1/launchers/{name}", Role::kWorker, [&c](Request& r) -> Response { return LauncherAnswer(c, r); }},
      {"POST", "/api/v1/nodes/{id}/lease", Role::kWorker, [&c](Request& r) -> Response { return LeaseAnswer(c, r); }},
      {"POST", "/api/v1/nodes/{id}/drain", Role::kAdmin,
       [&c, node_id](Request& r) -> Response {
         auto id = node_id(r);
         if (!id) return http::Problem(404, "Not Found", "no node '" + r.params["id"] + "'", "id");
         if (Status s = c.coord.Drain(*id); !s.ok()) return FromStatus(s);
         return http::Json({{"node", *id}, {"state", Name(NodeState::kDraining)}});
       }},
      {"POST", "/api/v1/nodes/{id}/resume", Role::kAdmin,
       [&c, node_id](Request& r) -> Response {
         auto id = node_id(r);
         if (!id) return http::Problem(404, "Not Found", "no node '" + r.params["id"] + "'", "id");
         if (Status s = c.coord.SetNodeState(*id, NodeState::kOnline, ""); !s.ok()) return FromStatus(s);
         return http::Json({{"node", *id}, {"state", Name(NodeState::kOnline)}});
       }},
      {"POST", "/api/v1/nodes/{id}/quarantine", Role::kWorker,
       [&c](Request& r) -> Response { return QuarantineAnswer(c, r); }},
      {"POST", "/api/v1/leases/{lease}/heartbeat", Role::kWorker,
       [&c](Request& r) -> Response {
         if (auto no = NotYourLease(c, r)) return *no;
         json body = r.body.empty() ? json::object() : http::ParseJson(r.body);
         auto res = c.coord.Heartbeat(r.params["lease"], ParseHeartbeat(body));
         if (!res.ok()) return FromStatus(res.status());
         return Durable(c.coord, http::Json(HeartbeatJson(*res)));
       }},
      {"POST", "/api/v1/leases/{lease}/log", Role::kWorker,
       [&c](Request& r) -> Response {
         if (auto no = NotYourLease(c, r)) return *no;
         auto off = r.Query("offset");
         auto offset = off ? ParseId(*off) : std::optional<int64_t>();
         if (!offset) return http::Problem(400, "Bad Request", "offset (the chunk's byte offset) is required", "offset");
         if (Status s = c.coord.AppendLog(r.params["lease"], *offset, r.body); !s.ok()) return FromStatus(s);
         return Durable(c.coord, http::Json({{"next", *offset + static_cast<int64_t>(r.body.size())}}));
       }},
      {"POST", "/api/v1/leases/{lease}/result", Role::kWorker,
       [&c](Request& r) -> Response {
         if (auto no = NotYourLease(c, r)) return *no;
         auto report = ParseReport(http::ParseJson(r.body));
         if (!report.ok()) return FromStatus(report.status());
         auto res = c.coord.Report(r.params["lease"], std::move(*report));
         if (!res.ok()) return FromStatus(res.status());
         return Durable(c.coord, http::Json(ReportJson(*res)));
       }},
  };
  // The worker protocol runs on the I/O threads, ahead of every read queued on the handler pool:
  // a worker's lease, heartbeat and report are never starved by readers (docs/RELIABILITY.md).
  // Each of these handlers works in memory and stages its write; none reads a growing table.
  for (auto& r : routes)
    if (r.role == Role::kWorker) r.lane = http::Lane::kIo;
  // Each route's body bound (docs/API.md "Limits"): a log chunk is 512 KiB, a report a page of
  // JSON; the small calls take small bodies, so a flood of them costs little.
  for (auto& r : routes) {
    if (r.pattern.ends_with("/log") || r.pattern.ends_with("/result")) r.body_limit = 1u << 20;
    else if (r.pattern.ends_with("/launchers/{name}")) r.body_limit = limits::kLauncherReportBytes;
    else if (r.pattern.ends_with("/register")) r.body_limit = 256u << 10;
    else if (r.method == "POST") r.body_limit = 64u << 10;  // lease, heartbeat, quarantine, drain, resume
  }
  return routes;
}

}  // namespace gauntlet::api
