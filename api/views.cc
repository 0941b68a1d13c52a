#include "api/views.h"

#include <string>

#include "core/hardware.h"
#include "core/sweep.h"
#include "core/verdict.h"

namespace gauntlet::api {
using nlohmann::json;

namespace {
std::string ConfigText(const Config& c) {
  std::string out;
  for (auto& [k, v] : c) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}
}  // namespace

json GrantReferenceJson(const daemon::GrantReference& r) {
  if (!r.found)
    return json{{"missing", "no judged trial of the reference config (" + ConfigText(r.config) + ") on " + r.hardware}};
  json j = {{"trial", r.trial}, {"verdict", Name(r.verdict)}, {"config", ConfigJson(r.config)}, {"hardware", r.hardware}};
  if (r.smoke_answers) j["smoke_answers"] = *r.smoke_answers;
  return j;
}

json GrantJson(const daemon::LeaseGrant& g) {
  const daemon::Grant& gr = g.grant;
  json j = {{"lease", gr.lease}, {"epoch", gr.epoch}, {"trial", gr.trial}, {"gpus", gr.gpus},
            {"hardware", gr.hardware}, {"attempt", gr.attempt}, {"heartbeat_ms", g.heartbeat_ms}};
  if (!g.sweep) return j;
  j["sweep"] = *g.sweep;
  j["config"] = ConfigJson(g.config);
  if (const Suite* su = g.suite.get()) {
    j["suite"] = {{"name", su->name}, {"version", su->version}, {"source_dir", su->source_dir}, {"key", daemon::SuiteKey(*su)}};
    if (!su->bundle.empty()) j["suite"]["bundle"] = su->bundle;  // the worker fetches it once per hash
    if (g.send_definition) j["suite"]["definition"] = su->definition;
    if (g.reference) j["reference"] = GrantReferenceJson(*g.reference);
  }
  return j;
}

json HeartbeatJson(const daemon::HeartbeatAnswer& a) {
  return {{"cancel", a.cancel}, {"epoch", a.epoch}, {"trial", a.trial}};
}

json ReportJson(const daemon::ReportAnswer& a) {
  return {{"accepted", true}, {"duplicate", a.duplicate}, {"requeued", a.requeued},
          {"confirming", a.confirming}, {"skipped", a.skipped}};
}

json NodeJson(const daemon::NodeView& v) {
  const store::NodeRow& n = v.row;
  json j = {{"id", n.id}, {"name", n.name}, {"inventory", n.inventory}, {"labels", n.labels},
            {"fingerprint", n.fingerprint}, {"hardware", n.hardware}, {"state", Name(n.state)}, {"reason", n.reason},
            {"registered_at", n.registered_at}, {"last_heartbeat", n.last_heartbeat}};
  if (v.live) {
    j["busy_gpus"] = v.busy_gpus;
    j["waiting"] = v.waiting;
  }
  json held = json::array();
  for (auto& [g, h] : v.held_back) held.push_back({{"gpu", g}, {"reason", h.reason}, {"pids", h.pids}, {"since", h.since}});
  j["held_back"] = std::move(held);
  j["heartbeat_age_s"] = v.heartbeat_age_s;
  json running = json::array();
  for (auto& r : v.running) running.push_back({{"trial", r.trial}, {"sweep", r.sweep}, {"gpus", r.gpus}});
  j["running"] = std::move(running);
  return j;
}

json NodesJson(const std::vector<daemon::NodeView>& nodes) {
  json out = json::array();
  for (auto& n : nodes) out.push_back(NodeJson(n));
  return out;
}

json LaunchersJson(const std::vector<daemon::LauncherView>& launchers) {
  json out = json::array();
  for (auto& l : launchers)
    out.push_back({{"name", l.name}, {"kind", l.report.kind}, {"age_s", l.age_s}, {"jobs", l.report.jobs},
                   {"queued", l.report.queued}, {"unplaceable", l.report.unplaceable}});
  return out;
}

json SweepLiveJson(const daemon::SweepLive& s) {
  json j;
  j["running"] = s.running;
  // Name the requirement no node meets and what the nodes are, so a person sees what to change.
  std::string nodes;
  for (auto& [name, hardware] : s.nodes) nodes += (nodes.empty() ? "" : ", ") + name + " (" + hardware + ")";
  if (nodes.empty()) nodes = "none registered";
  json unmatched = json::array();
  for (auto& u : s.unmatched) {
    const std::string wants = u.need ? DescribeNeed(*u.need) : "its requirements";
    unmatched.push_back({{"target", u.target}, {"index", u.index}, {"requires", wants}, {"nodes", nodes},
                         {"detail", wants + "; nodes: " + nodes +
                                        ": no registered node can ever run this target; its trials wait for one"}});
  }
  j["unmatched_targets"] = std::move(unmatched);
  // What it waits for, with the command that ends the wait (an admin's).
  json held = json::array();
  for (auto& h : s.held_out)
    held.push_back({{"node", h.id}, {"name", h.name}, {"state", std::string(Name(h.state))}, {"reason", h.reason},
                    {"resume", "gauntlet nodes resume " + std::to_string(h.id)}});
  j["held_out_nodes"] = std::move(held);
  j["pruned"] = {{"trials", s.pruned_trials}, {"gpu_hours_saved", s.saved_gpu_s / 3600.0}};
  if (s.cost_saved) j["pruned"]["cost_saved"] = *s.cost_saved;
  if (s.reuse_keyed_on_fingerprint)
    j["reuse"] = {{"keyed_on", *s.reuse_keyed_on_fingerprint
                                   ? "suite version, hardware class and fingerprint"
                                   : "suite version and hardware class (the suite has no fingerprint command)"},
                 {"first_run_only", true}};
  // A repeat is a run: a copied verdict stands in for a config's first run at most.
  if (s.reuse_keyed_on_fingerprint && s.repeats > 1)
    j["reuse"]["repeats"] = "reuse may stand in for each config's first run only; repeats 2.." +
                            std::to_string(s.repeats) + " always run";
  return j;
}

json StatsJson(const daemon::CoordinatorStats& s) {
  json nodes = json::object();
  for (auto& [state, n] : s.nodes) nodes[std::string(Name(state))] = n;
  return {{"queued", s.queued}, {"leased", s.leased}, {"nodes", nodes}, {"waiting_workers", s.waiting_workers},
          {"lease_wait_sum_s", s.lease_wait_sum_ms / 1000.0}, {"lease_wait_count", s.lease_wait_count}};
}

}  // namespace gauntlet::api
