#include "daemon/event_payloads.h"

#include <type_traits>

#include "core/utf8.h"

namespace gauntlet::daemon {
using nlohmann::json;

namespace {
constexpr std::string_view kTypeNames[] = {"sweep.created", "sweep.cancelled", "sweep.retried", "sweep.search",
                                           "trial.changed", "trials.skipped", "node.registered", "node.changed",
                                           "node.gpus_held"};
static_assert(std::size(kTypeNames) == std::variant_size_v<DaemonEvent>);

json PayloadJson(const SweepCreated& e) {
  json j = {{"sweep", e.sweep}, {"trials", e.trials}, {"suite", e.suite}};
  if (e.rerun_of) j["rerun_of"] = *e.rerun_of;
  if (e.bisect) j["kind"] = Name(SweepKind::kBisect);
  return j;
}
json PayloadJson(const SweepCancelled& e) { return {{"sweep", e.sweep}, {"cancelled", e.cancelled}, {"stopping", e.stopping}}; }
json PayloadJson(const SweepRetried& e) { return {{"sweep", e.sweep}, {"requeued", e.requeued}}; }
json PayloadJson(const SweepSearch& e) {
  const json j = BisectionJson(e.search);
  return {{"sweep", e.sweep}, {"state", Name(e.search.state)}, {"trying", j["trying"]}, {"first_bad", j["first_bad"]},
          {"interval", j["interval"]}};
}
json PayloadJson(const TrialChanged& e) {
  json j = {{"trial", e.trial}, {"state", e.state ? Name(*e.state) : std::string_view("stopping")}};
  if (e.sweep) j["sweep"] = *e.sweep;
  if (e.says_verdict) j["verdict"] = NameOr(e.verdict);
  if (e.signature) j["signature"] = *e.signature;
  if (e.reason) j["reason"] = *e.reason;
  if (e.node) j["node"] = *e.node;
  return j;
}
json PayloadJson(const TrialsSkipped& e) {
  return {{"sweep", e.sweep}, {"trials", e.trials}, {"evidence", e.evidence}, {"key", e.key}};
}
json PayloadJson(const NodeRegistered& e) { return {{"node", e.node}, {"name", e.name}, {"hardware", e.hardware}}; }
json PayloadJson(const NodeChanged& e) { return {{"node", e.node}, {"state", Name(e.state)}, {"reason", e.reason}}; }
json PayloadJson(const NodeGpusHeld& e) { return {{"node", e.node}, {"gpus", e.gpus}}; }
}  // namespace

namespace {
// `s` as a JSON string. Plain ASCII without quotes, backslashes or control characters (every name and
// most signatures) is written as it is; anything else goes through the serialiser, which escapes it
// and replaces invalid UTF-8 exactly as SafeDump does.
void AppendJsonString(std::string& out, std::string_view s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80 || c == '"' || c == '\\') {
      out += SafeDump(json(std::string(s)));
      return;
    }
  out += '"';
  out += s;
  out += '"';
}
void AppendMember(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  AppendJsonString(out, value);
}
void AppendMember(std::string& out, std::string_view key, int64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(value);
}
}  // namespace

std::string TrialChangedTextAfterId(const TrialChanged& e) {
  // In key order, as nlohmann's object (a std::map) writes them: id, node, reason, signature, state,
  // sweep, trial, type, verdict.
  std::string out;
  out.reserve(160);
  if (e.node) AppendMember(out, "node", *e.node);
  if (e.reason) AppendMember(out, "reason", *e.reason);
  if (e.signature) AppendMember(out, "signature", *e.signature);
  AppendMember(out, "state", e.state ? Name(*e.state) : std::string_view("stopping"));
  if (e.sweep) AppendMember(out, "sweep", *e.sweep);
  AppendMember(out, "trial", e.trial);
  AppendMember(out, "type", EventTypeName(EventKind::kTrialChanged));
  if (e.says_verdict) AppendMember(out, "verdict", NameOr(e.verdict));
  out += '}';
  return out;
}

std::string_view EventTypeName(EventKind kind) { return kTypeNames[static_cast<size_t>(kind)]; }

json EventData(const DaemonEvent& e) {
  return std::visit([](const auto& payload) { return PayloadJson(payload); }, e);
}

}  // namespace gauntlet::daemon
