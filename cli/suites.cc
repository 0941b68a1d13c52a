// `gauntlet suites`: the suites the daemon has loaded, or one suite's definition to read or copy;
// `gauntlet suites push FILE` registers a suite file with the daemon.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "core/yaml_json.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

bool IsYamlFile(const std::string& f) {
  auto ends = [&](const std::string& e) { return f.size() >= e.size() && f.compare(f.size() - e.size(), e.size(), e) == 0; };
  return ends(".yaml") || ends(".yml");
}

// PUT /api/v1/suites/{name} with the file as written: the daemon reads the parameters' declared
// order from the text (rows follow it), which a JSON re-encoding here would sort away. Prints the
// version and whether it is new; returns the exit status.
int PushSuite(ClientOptions& o, const std::string& file, const std::string& name_flag) {
  auto parsed = ReadJsonOrYaml(file);
  if (!parsed.ok()) {
    std::cerr << "gauntlet: " << parsed.status().message() << "\n";
    return 2;
  }
  std::string name = name_flag;
  if (name.empty() && parsed->is_object() && (*parsed)["name"].is_string()) name = (*parsed)["name"];
  if (name.empty()) {
    std::cerr << "gauntlet: " << file << " has no \"name\": name the suite in the file (or with --name)\n";
    return 2;
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto client = Connect(o);
  int status = 0;
  auto r = CallRaw(*client, "PUT", "/api/v1/suites/" + http::UrlEncode(name), text.str(), &status,
                   IsYamlFile(file) ? "application/yaml" : "application/json");
  if (!r) return 2;
  json s = json::parse(r->body, nullptr, false);
  const bool created = status == 201;
  if (o.format == "json") {
    s["created"] = created;
    std::cout << s.dump(2) << "\n";
    return 0;
  }
  const std::string v = s.is_object() ? Str(s.value("version", json())) : "?";
  if (!created) std::cout << "suite " << name << " version " << v << " unchanged: the daemon already has this definition\n";
  else if (v == "1") std::cout << "suite " << name << " version 1 registered: a new suite\n";
  else std::cout << "suite " << name << " version " << v << " registered: a new version (earlier results stay under theirs)\n";
  return 0;
}

}  // namespace

void AddSuitesCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<ClientOptions>();
  auto name = std::make_shared<std::string>();
  auto c = app.add_subcommand("suites", "List suites, or show one suite's definition; `suites push FILE` registers one");
  c->add_option("name", *name, "suite name");
  AddClientOptions(c, o.get(), {"table", "json", "csv", "markdown"});

  auto po = std::make_shared<ClientOptions>();
  auto file = std::make_shared<std::string>();
  auto push_name = std::make_shared<std::string>();
  auto push = c->add_subcommand("push", "Register a suite file (JSON or YAML) with the daemon (admin)");
  push->footer("Prints the version the daemon filed it under: a new suite, a new version, or unchanged.");
  push->add_option("file", *file, "suite definition (JSON, or YAML by its .yaml/.yml name)")->required();
  push->add_option("--name", *push_name, "the suite's name when the file has none");
  AddClientOptions(push, po.get(), {"text", "json"});
  po->format = "text";
  push->callback([=] { *code = PushSuite(*po, *file, *push_name); });

  c->callback([=] {
    if (push->parsed()) return;  // `suites push` ran its own callback
    auto client = Connect(*o);
    if (!name->empty()) {
      int status = 0;
      auto s = Call(*client, "GET", "/api/v1/suites/" + http::UrlEncode(*name), {}, &status);
      if (!s) {
        if (status == 404) SuggestSuite(*client, *name, "gauntlet suites ");
        return void(*code = 2);
      }
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
