// `gauntlet suites`: the suites the daemon has loaded, or one suite's definition to read or copy.
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"

namespace gauntlet::cli {

void AddSuitesCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto name = std::make_shared<std::string>();
  auto c = app.add_subcommand("suites", "List suites, or show one suite's definition");
  c->add_option("name", *name, "suite name");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});
  c->callback([=] {
    auto client = Connect(*o);
    if (!name->empty()) {
      auto s = Call(*client, "GET", "/api/v1/suites/" + http::UrlEncode(*name));
      if (!s) return void(*code = 2);
      // The definition is what a person wants to read or copy; --format json adds the metadata.
      std::cout << (o->format == "json" ? (*s).dump(2) : (*s)["definition"].dump(2)) << "\n";
      return;
    }
    auto s = Call(*client, "GET", "/api/v1/suites");
    if (!s) return void(*code = 2);
    if (o->format == "json") {
      std::cout << (*s)["items"].dump(2) << "\n";
      return;
    }
    Rows rows;
    for (auto& i : (*s)["items"]) {
      std::string params;
      for (auto& [k, v] : i["parameters"].items()) params += (params.empty() ? "" : ", ") + k;
      rows.push_back({Str(i["name"]), Str(i["version"]), params, Str(i["description"])});
    }
    Print(o->format, {"SUITE", "VERSION", "PARAMETERS", "DESCRIPTION"}, rows);
  });
}

}  // namespace gauntlet::cli
