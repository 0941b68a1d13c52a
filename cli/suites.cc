// `gauntlet suites`: the suites the daemon has loaded, or one suite's definition to read or copy;
// `gauntlet suites push FILE` registers a suite file with the daemon.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "core/bundle.h"
#include "core/yaml_json.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

bool IsYamlFile(const std::string& f) {
  auto ends = [&](const std::string& e) { return f.size() >= e.size() && f.compare(f.size() - e.size(), e.size(), e) == 0; };
  return ends(".yaml") || ends(".yml");
}

// The files of the suite file's folder, sent as a bundle (PUT /api/v1/bundles/SHA256) so that every
// worker runs the suite with them as {suite_dir}. Returns the hash, or "" after saying why (or when
// `none` is set: --no-files). `note` gets what the person is told about it.
std::optional<std::string> PushFiles(net::Client& client, const std::string& file, bool none,
                                     std::string* note) {
  if (none) return std::string();
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(file).parent_path();
  auto packed = PackFolder(dir.string());
  if (!packed.ok()) {
    std::cerr << "gauntlet: " << packed.status().message() << " (or push with --no-files, if the suite needs none)\n";
    return std::nullopt;
  }
  const std::string sha = BundleSha256(packed->bytes);
  auto r = CallRaw(client, "PUT", "/api/v1/bundles/" + sha, packed->bytes, nullptr, "application/octet-stream");
  if (!r) return std::nullopt;
  *note = std::to_string(packed->files) + " file(s) of " + dir.string() + " (" + std::to_string(packed->bytes.size()) +
          " bytes, sha256 " + sha.substr(0, 12) + ") as {suite_dir}";
  for (auto& s : packed->skipped) *note += "\n  left out: " + s;
  return sha;
}

// PUT /api/v1/suites/{name} with the file as written: the daemon reads the parameters' declared
// order from the text (rows follow it), which a JSON re-encoding here would sort away. Prints the
// version and whether it is new; returns the exit status.
int PushSuite(ClientOptions& o, const std::string& file, const std::string& name_flag, bool no_files) {
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
  std::string note;
  auto bundle = PushFiles(*client, file, no_files, &note);
  if (!bundle) return 2;
  int status = 0;
  std::string target = "/api/v1/suites/" + http::UrlEncode(name);
  if (!bundle->empty()) target += "?bundle=" + *bundle;
  auto r = CallRaw(*client, "PUT", target, text.str(), &status, IsYamlFile(file) ? "application/yaml" : "application/json");
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
  if (!note.empty()) std::cout << "with " << note << "\n";
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
  push->footer("Sends the files of the file's folder (recursively; not dot-files, __pycache__ or links; at most 16 MiB)\n"
               "as the suite's bundle: {suite_dir} is that folder on every worker. Prints the version the daemon\n"
               "filed it under: a new suite, a new version (the definition or the files changed), or unchanged.");
  push->add_option("file", *file, "suite definition (JSON, or YAML by its .yaml/.yml name)")->required();
  push->add_option("--name", *push_name, "the suite's name when the file has none");
  auto no_files = std::make_shared<bool>(false);
  push->add_flag("--no-files", *no_files, "send the definition alone, not the files of its folder ({suite_dir} is then refused)");
  AddClientOptions(push, po.get(), {"text", "json"});
  po->format = "text";
  push->callback([=] { *code = PushSuite(*po, *file, *push_name, *no_files); });

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
