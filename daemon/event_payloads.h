// The changes the coordinator publishes, as types (docs/API.md "Events" lists them and their
// fields). The coordinator builds these; the bus encodes each one into its JSON once, at publish
// (EventData, daemon/event_payloads.cc), because what it retains for resumption is bounded in bytes.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/bisect.h"
#include "core/verdict.h"

namespace gauntlet::daemon {

// The kinds of change, in the order of DaemonEvent's alternatives.
enum class EventKind : uint8_t {
  kSweepCreated, kSweepCancelled, kSweepRetried, kSweepSearch, kTrialChanged, kTrialsSkipped,
  kNodeRegistered, kNodeChanged, kNodeGpusHeld,
};

// sweep.created: a sweep was stored (a rerun names the sweep it reruns; a bisection says its kind).
struct SweepCreated {
  int64_t sweep = 0, trials = 0;
  std::string suite;
  std::optional<int64_t> rerun_of;
  bool bisect = false;
};
// sweep.cancelled: how many of its trials were cancelled outright and how many are being stopped.
struct SweepCancelled {
  int64_t sweep = 0, cancelled = 0, stopping = 0;
};
// sweep.retried: its failed trials were queued again.
struct SweepRetried {
  int64_t sweep = 0, requeued = 0;
};
// sweep.search: a bisection moved (its state, what it tries, what it found).
struct SweepSearch {
  int64_t sweep = 0;
  Bisection search;
};
// trial.changed. Which fields a change says depends on what happened; an unset one is not said.
struct TrialChanged {
  int64_t trial = 0;
  std::optional<int64_t> sweep;     // unset: a grant that never reached its worker
  std::optional<TrialState> state;  // unset: "stopping" (cancelled while it runs)
  bool says_verdict = false;        // the verdict is said ("" while it has none)
  std::optional<Verdict> verdict;
  std::optional<std::string> signature, reason;
  std::optional<int64_t> node;      // leased to it
};
// trials.skipped: pruning settled `trials` on the evidence of trial `evidence` (key: what it pruned by).
struct TrialsSkipped {
  int64_t sweep = 0;
  std::vector<int64_t> trials;
  int64_t evidence = 0;
  std::string key;
};
// node.registered: a worker registered (or registered again).
struct NodeRegistered {
  int64_t node = 0;
  std::string name, hardware;
};
// node.changed: a node's state changed (online, draining, quarantined, offline) and why.
struct NodeChanged {
  int64_t node = 0;
  NodeState state = NodeState::kOnline;
  std::string reason;
};
// node.gpus_held: the GPUs a node holds back (busy with something else), by index.
struct NodeGpusHeld {
  int64_t node = 0;
  std::vector<int> gpus;
};

using DaemonEvent = std::variant<SweepCreated, SweepCancelled, SweepRetried, SweepSearch, TrialChanged, TrialsSkipped,
                                 NodeRegistered, NodeChanged, NodeGpusHeld>;

// The kind of `e`. Pure.
inline EventKind KindOf(const DaemonEvent& e) { return static_cast<EventKind>(e.index()); }
// "trial.changed": the event's type on the wire; static storage. Pure.
std::string_view EventTypeName(EventKind kind);
// The event's fields as the stream and its followers read them (without "type" and "id", which the
// bus adds). The one place a published change becomes JSON. Pure.
nlohmann::json EventData(const DaemonEvent& e);
// trial.changed's JSON text after its "id": `,"node":3,...,"type":"trial.changed"...}`. "id" sorts
// first of its keys, and the bus numbers events under its lock, so it writes `{"id":N` and then this.
// The same bytes as SafeDump of EventData(e) with "type" and "id" added (event_bounds_test checks
// every field's presence and absence, and strings that need escaping or are not UTF-8), written
// without building the JSON object: two of these are published per lease cycle. Pure.
std::string TrialChangedTextAfterId(const TrialChanged& e);

}  // namespace gauntlet::daemon
