// `gauntlet nodes`: the fleet as the daemon sees it (state, hardware, running trials, GPUs held back,
// heartbeat age), or one node drained (admin).
#include <cstdio>
#include <iostream>
#include <memory>

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

}  // namespace

void AddNodesCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto drain = std::make_shared<int64_t>(0);
  auto c = app.add_subcommand("nodes", "Show the fleet (or drain a node with --drain ID)");
  c->add_option("--drain", *drain, "stop giving new trials to this node (admin)");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  c->callback([=] {
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
