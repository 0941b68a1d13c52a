// `gauntlet submit`: a sweep file (JSON or YAML, or stdin) posted to the daemon; with --wait, followed
// to the end so a CI job's exit status is the sweep's.
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "cli/sweep_progress.h"
#include "cli/wait_interrupt.h"
#include "core/yaml_json.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

Result<json> ReadSweepFile(const std::string& file) {
  if (file == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), {});
    return YamlToJson(text);  // YAML is a superset of JSON
  }
  return ReadJsonOrYaml(file);
}

}  // namespace

void AddSubmitCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto file = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto wait = std::make_shared<bool>(false);
  auto json_lines = std::make_shared<bool>(false);
  auto wait_for_nodes = std::make_shared<bool>(false);
  auto c = app.add_subcommand("submit", "Submit a sweep from a JSON or YAML file");
  c->footer(
      "Exit status: 0 submitted (with --wait: every trial passed or was skipped), 1 some trial failed "
      "(--wait), 2 error (bad file, refused by the daemon, daemon unreachable; with --wait, a target no "
      "registered node can run, unless --wait-for-nodes), 130 interrupted (--wait: Ctrl-C leaves the sweep "
      "running and says so; a second Ctrl-C within 3 s cancels it).");
  c->add_option("file", *file, "sweep request (JSON or YAML; '-' reads stdin)")->required();
  c->add_option("--name", *name, "name the sweep (overrides the file's name)");
  c->add_flag("--wait", *wait,
              "follow the sweep until it is finished: a progress bar on a terminal, one JSON line per change otherwise");
  c->add_flag("--json", *json_lines, "print JSON lines even on a terminal");
  c->add_flag("--wait-for-nodes", *wait_for_nodes,
              "with --wait: keep waiting while no registered node can run a target (default: exit 2 naming it)");
  AddClientOptions(c, o.get());
  c->callback([=] {
    auto body = ReadSweepFile(*file);
    if (!body.ok()) {
      std::cerr << "gauntlet: " << body.status().message() << "\n";
      return void(*code = 2);
    }
    if (!body->is_object()) {
      std::cerr << "gauntlet: " << *file << ": a sweep is an object with at least \"suite\"\n";
      return void(*code = 2);
    }
    if (!name->empty()) (*body)["name"] = *name;
    auto client = Connect(*o);
    int status = 0;
    auto r = Call(*client, "POST", "/api/v1/sweeps", body->dump(), &status);
    if (!r) {
      if (status == 404 && (*body)["suite"].is_string()) SuggestSuite(*client, (*body)["suite"], "suite '", "'");
      return void(*code = 2);
    }
    const int64_t id = (*r)["id"].get<int64_t>();
    (*r)["dashboard_url"] = o->conn.server + r->value("dashboard_url", "/#/sweeps/" + std::to_string(id));
    // From the moment the sweep exists (before its id is printed) Ctrl-C says it keeps running.
    std::optional<WaitInterrupt> interrupt;
    if (*wait) interrupt.emplace(o->conn, id);
    const bool bar = IsTty() && !*json_lines;
    if (bar)
      std::cout << "sweep " << id << " submitted: " << (*r)["trials"] << " trials\n"
                << "dashboard: " << (*r)["dashboard_url"].get<std::string>() << "\n";
    else std::cout << r->dump() << "\n" << std::flush;
    if (!*wait) return;
    auto fin = FollowSweep(*client, o->conn, id, {bar, *wait_for_nodes});
    if (!fin) return void(*code = 2);
    *code = SweepFailed((*fin)["by_verdict"]) ? 1 : 0;
  });
}

}  // namespace gauntlet::cli
