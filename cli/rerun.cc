// `gauntlet rerun`: a new sweep of a sweep's failed trials (POST /api/v1/sweeps/{id}/rerun), printed
// with its dashboard page; with --wait, followed to the end as `submit --wait` is.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/sweep_progress.h"

namespace gauntlet::cli {
using nlohmann::json;

void AddRerunCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto sweep = std::make_shared<int64_t>(0);
  auto failed = std::make_shared<bool>(false);
  auto verdicts = std::make_shared<std::vector<std::string>>();
  auto configs = std::make_shared<std::vector<std::string>>();
  auto targets = std::make_shared<std::vector<std::string>>();
  auto wait = std::make_shared<bool>(false);
  auto json_lines = std::make_shared<bool>(false);
  auto c = app.add_subcommand("rerun", "Rerun a sweep's failed trials (or those --verdict picks) as a new sweep");
  c->footer(
      "The new sweep runs each picked trial again with reuse and pruning off and links the original (rerun_of); "
      "`gauntlet diff SWEEP NEW` then says what changed. Default (and --failed): every trial not passed or "
      "skipped. Exit status: 0 submitted (with --wait: every trial passed or was skipped), 1 some trial failed "
      "(--wait), 2 error (no such sweep, nothing matches, daemon unreachable).");
  c->add_option("sweep", *sweep, "the sweep whose trials to rerun")->required();
  c->add_flag("--failed", *failed, "every trial not passed or skipped (the default)");
  c->add_option("--verdict", *verdicts, "only trials with this verdict (repeatable)");
  c->add_option("--config", *configs, "only trials of this config key, e.g. 'mode=fail&tag=a' (repeatable)");
  c->add_option("--target", *targets, "only trials of this target index or hardware class (repeatable)");
  c->add_flag("--wait", *wait, "follow the new sweep until it is finished");
  c->add_flag("--json", *json_lines, "print JSON lines even on a terminal");
  AddClientOptions(c, o.get());
  c->callback([=] {
    json body = json::object();
    if (!verdicts->empty()) body["verdicts"] = *verdicts;
    if (!configs->empty()) body["configs"] = *configs;
    if (!targets->empty()) {
      json ts = json::array();
      for (auto& t : *targets) {
        bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() < 10;
        ts.push_back(digits ? json(std::stoll(t)) : json(t));
      }
      body["targets"] = ts;
    }
    auto client = Connect(*o);
    auto r = Call(*client, "POST", "/api/v1/sweeps/" + std::to_string(*sweep) + "/rerun", body.dump());
    if (!r) return void(*code = 2);
    const int64_t id = (*r)["id"].get<int64_t>();
    (*r)["dashboard_url"] = o->conn.server + (*r)["dashboard_url"].get<std::string>();
    const bool bar = IsTty() && !*json_lines;
    if (bar)
      std::cout << "sweep " << id << " reruns " << (*r)["trials"] << " trials of sweep " << *sweep << "\n"
                << "dashboard: " << (*r)["dashboard_url"].get<std::string>() << "\n";
    else
      std::cout << r->dump() << "\n" << std::flush;
    if (!*wait) return;
    auto fin = FollowSweep(*client, o->conn, id, {bar, false});
    if (!fin) return void(*code = 2);
    *code = SweepFailed((*fin)["by_verdict"]) ? 1 : 0;
  });
}

}  // namespace gauntlet::cli
