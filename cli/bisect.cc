// `gauntlet bisect`: starts a bisection over an ordered parameter (POST /api/v1/bisect); with --wait,
// follows it and prints the first bad value, so a CI job's exit status says whether it was found.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/sweep_progress.h"

namespace gauntlet::cli {
using nlohmann::json;

void AddBisectCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto suite = std::make_shared<std::string>();
  auto param = std::make_shared<std::string>();
  auto good = std::make_shared<std::string>();
  auto bad = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  auto target = std::make_shared<std::string>();
  auto confirm = std::make_shared<int>(0);
  auto wait = std::make_shared<bool>(false);
  auto json_out = std::make_shared<bool>(false);
  auto c = app.add_subcommand("bisect", "Find the first bad value of an ordered parameter (versions, tags, commits)");
  c->footer(
      "Exit status: 0 started (with --wait: the first bad value was found), 1 with --wait: the search ended "
      "otherwise (good was not good, bad was not bad, a probe had no verdict), 2 error.");
  c->add_option("--suite", *suite, "suite name")->required();
  c->add_option("--param", *param, "the ordered parameter to search")->required();
  c->add_option("--good", *good, "a value known to pass")->required();
  c->add_option("--bad", *bad, "a later value known to fail")->required();
  c->add_option("--set", *sets, "NAME=VALUE: the config's other parameters (repeat)");
  c->add_option("--target", *target, "a target as JSON, e.g. '{\"arch\": \"sm_100\"}'");
  c->add_option("--confirm-failures", *confirm, "re-run a failing probe up to K times before it counts")->check(CLI::Range(0, 10));
  c->add_flag("--wait", *wait, "follow the search to its end and print its answer");
  c->add_flag("--json", *json_out, "print the search as JSON");
  AddClientOptions(c, o.get());
  c->callback([=] {
    json body = {{"suite", *suite}, {"parameter", *param}, {"good", *good}, {"bad", *bad}, {"config", json::object()}};
    for (auto& s : *sets) {
      auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "gauntlet: --set " << s << ": expected NAME=VALUE\n";
        return void(*code = 2);
      }
      body["config"][s.substr(0, eq)] = s.substr(eq + 1);
    }
    if (!target->empty()) {
      body["target"] = json::parse(*target, nullptr, false);
      if (!body["target"].is_object()) {
        std::cerr << "gauntlet: --target: expected a JSON object, e.g. '{\"arch\": \"sm_100\"}'\n";
        return void(*code = 2);
      }
    }
    if (*confirm) body["confirm_failures"] = *confirm;
    auto client = Connect(*o);
    auto r = Call(*client, "POST", "/api/v1/bisect", body.dump());
    if (!r) return void(*code = 2);
    const int64_t id = (*r)["id"].get<int64_t>();
    const bool bar = IsTty() && !*json_out;
    if (bar) std::cout << "bisection " << id << " started: " << *param << " from " << *good << " to " << *bad << "\n";
    else if (!*wait) std::cout << r->dump() << "\n";
    if (!*wait) return;
    auto fin = FollowSweep(*client, o->conn, id, {bar, false});
    if (!fin) return void(*code = 2);
    const json& s = (*fin)["search"];
    if (*json_out || !bar) std::cout << s.dump() << "\n";
    else {
      std::cout << s.value("detail", "") << "\n";
      for (auto& st : s.value("steps", json::array()))
        std::cout << "  " << *param << "=" << st["value"].get<std::string>() << "  " << st["verdict"].get<std::string>()
                  << "  (trial " << st["trial"] << ")\n";
    }
    *code = s.is_object() && s.value("state", "") == "found" ? 0 : 1;
  });
}

}  // namespace gauntlet::cli
