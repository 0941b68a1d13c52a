// `gauntlet cancel`: a sweep's unfinished trials, or one trial, cancelled; prints the daemon's answer.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace gauntlet::cli {

void AddCancelCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto sweep = std::make_shared<int64_t>(0);
  auto trial = std::make_shared<int64_t>(0);
  auto c = app.add_subcommand("cancel", "Cancel a sweep's unfinished trials (or one trial with --trial)");
  c->add_option("sweep", *sweep, "sweep id");
  c->add_option("--trial", *trial, "cancel this one trial instead");
  AddClientOptions(c, o.get());
  c->callback([=] {
    if ((*sweep > 0) == (*trial > 0)) {
      std::cerr << "gauntlet: name a sweep id or --trial ID (one of them)\n";
      return void(*code = 2);
    }
    auto client = Connect(*o);
    std::string target = *trial > 0 ? "/api/v1/trials/" + std::to_string(*trial) + "/cancel"
                                    : "/api/v1/sweeps/" + std::to_string(*sweep) + "/cancel";
    auto r = Call(*client, "POST", target);
    if (!r) return void(*code = 2);
    r->erase("request");
    if (r->contains("dashboard_url")) (*r)["dashboard_url"] = o->conn.server + (*r)["dashboard_url"].get<std::string>();
    std::cout << r->dump() << "\n";
  });
}

}  // namespace gauntlet::cli
