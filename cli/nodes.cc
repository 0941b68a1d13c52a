// `gauntlet nodes`: the fleet as the daemon sees it (state, hardware, running trials, GPUs held back,
// heartbeat age), or one node drained (admin).
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

// "1 (pids 4242, 4243); 3 (pids 77)": the node's held-back GPUs, short enough for a column.
std::string HeldCell(const json& node) {
  std::string out;
  for (auto& g : node.value("held_back", json::array())) {
    std::string pids;
    for (auto& p : g.value("pids", json::array())) pids += (pids.empty() ? "" : ", ") + Str(p);
    out += (out.empty() ? "" : "; ") + Str(g["gpu"]) + (pids.empty() ? "" : " (pids " + pids + ")");
  }
  return out;
}

// The node `word` names (its id or its name) among the daemon's, or nullopt after saying so on
// stderr, with the nearest name when one is near ("did you mean").
std::optional<int64_t> ResolveNode(net::Client& client, const std::string& word) {
  auto r = Call(client, "GET", "/api/v1/nodes");
  if (!r) return std::nullopt;
  std::vector<std::string> names;
  for (auto& n : (*r)["items"]) {
    if (Str(n["id"]) == word || Str(n["name"]) == word) return n["id"].get<int64_t>();
    names.push_back(Str(n["name"]));
  }
  std::cerr << "gauntlet: no node '" << word << "'";
  if (auto near = Nearest(word, names)) std::cerr << " (did you mean " << *near << "?)";
  else if (!names.empty() && names.size() <= 8) {
    std::cerr << " (nodes:";
    for (auto& n : names) std::cerr << " " << n;
    std::cerr << ")";
  }
  std::cerr << "\n";
  return std::nullopt;
}

// `gauntlet nodes resume|drain NODE` (admin): POST /nodes/{id}/resume|drain, then the node's line.
void AddNodeAction(CLI::App* nodes, std::shared_ptr<ClientOptions> o, int* code, const char* verb, const char* help) {
  auto node = std::make_shared<std::string>();
  auto c = nodes->add_subcommand(verb, help);
  c->add_option("node", *node, "the node's id or name")->required();
  c->callback([=] {
    auto client = Connect(*o);
    const std::optional<int64_t> id = ResolveNode(*client, *node);
    if (!id) return void(*code = 2);
    auto r = Call(*client, "POST", "/api/v1/nodes/" + std::to_string(*id) + "/" + verb);
    if (!r) return void(*code = 2);
    std::cout << "node " << Str((*r).value("name", json(*node))) << " (" << *id << "): "
              << Str((*r).value("state", json(verb))) << "\n";
  });
}

}  // namespace

void AddNodesCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto drain = std::make_shared<int64_t>(0);
  auto c = app.add_subcommand("nodes", "Show the fleet; `nodes resume|drain NODE` takes a node back or out (admin)");
  c->add_option("--drain", *drain, "stop giving new trials to this node (admin; as `nodes drain ID`)");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  AddNodeAction(c, o, code, "resume", "give trials to a quarantined or drained node again (admin)");
  AddNodeAction(c, o, code, "drain", "stop giving new trials to a node; its running trials finish (admin)");
  c->callback([=] {
    if (!c->get_subcommands().empty()) return;  // resume or drain ran
    auto client = Connect(*o);
    if (*drain > 0) {
      auto r = Call(*client, "POST", "/api/v1/nodes/" + std::to_string(*drain) + "/drain");
      if (!r) return void(*code = 2);
      std::cout << r->dump() << "\n";
      return;
    }
    auto r = Call(*client, "GET", "/api/v1/nodes");
    if (!r) return void(*code = 2);
    if (o->format == "json") {
      std::cout << (*r)["items"].dump(2) << "\n";
      return;
    }
    Rows rows;
    std::vector<std::string> why;  // each held-back GPU's reason, printed under a table
    for (auto& n : (*r)["items"]) {
      for (auto& g : n.value("held_back", json::array()))
        why.push_back(Str(n["name"]) + " GPU " + Str(g["gpu"]) + " held back: " + Str(g.value("reason", json())));
      char age[32];
      snprintf(age, sizeof age, "%.1fs", n.value("heartbeat_age_s", 0.0));
      rows.push_back({Str(n["id"]), Str(n["name"]), Str(n["state"]), Str(n["hardware"]),
                      std::to_string(n.value("running", json::array()).size()), HeldCell(n), age,
                      Str(n.value("reason", json()))});
    }
    Print(o->format, {"NODE", "NAME", "STATE", "HARDWARE", "RUNNING", "HELD BACK", "HEARTBEAT", "REASON"}, rows);
    if (o->format == "table")
      for (auto& line : why) std::cout << line << "\n";
  });
}

}  // namespace gauntlet::cli
