// `gauntlet nodes`: the fleet as the daemon sees it (state, hardware, running trials, heartbeat age),
// or one node drained (admin).
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace gauntlet::cli {
using nlohmann::json;

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
    for (auto& n : (*r)["items"]) {
      char age[32];
      snprintf(age, sizeof age, "%.1fs", n.value("heartbeat_age_s", 0.0));
      rows.push_back({Str(n["id"]), Str(n["name"]), Str(n["state"]), Str(n["hardware"]),
                      std::to_string(n.value("running", json::array()).size()), age, Str(n.value("reason", json()))});
    }
    Print(o->format, {"NODE", "NAME", "STATE", "HARDWARE", "RUNNING", "HEARTBEAT", "REASON"}, rows);
  });
}

}  // namespace gauntlet::cli
