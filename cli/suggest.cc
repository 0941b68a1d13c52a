#include "cli/suggest.h"

#include <set>

#include <algorithm>
#include <iostream>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "core/verdict.h"

namespace gauntlet::cli {
using nlohmann::json;

std::vector<std::string> OptionChoices(const CLI::Option* op) {
  std::string t = op->get_type_name();
  auto a = t.find('{'), b = t.rfind('}');
  if (a == std::string::npos || b == std::string::npos || b < a) return {};
  std::vector<std::string> out;
  std::string cur;
  for (char ch : t.substr(a + 1, b - a - 1)) {
    if (ch == ',') out.push_back(cur), cur.clear();
    else cur += ch;
  }
  out.push_back(cur);
  return out;
}

void SuggestValue(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  if (auto n = Nearest(value, allowed)) std::cerr << "gauntlet: did you mean " << flag << " " << *n << "?\n";
}

void SuggestSuite(net::Client& client, const std::string& name, const std::string& before, const std::string& after) {
  // Once per name: Call suggests after any 404 for a suite, and a command may ask again in its own words.
  static std::set<std::string> said;
  if (!said.insert(name).second) return;
  auto r = client.Send("GET", "/api/v1/suites");
  if (!r.ok() || r->status != 200) return;
  json j = json::parse(r->body, nullptr, false);
  if (!j.is_object() || !j.contains("items")) return;
  std::vector<std::string> names;
  for (auto& s : j["items"]) names.push_back(Str(s["name"]));
  if (auto n = Nearest(name, names)) std::cerr << "gauntlet: did you mean " << before << *n << after << "?\n";
  else if (!names.empty() && names.size() <= 12) std::cerr << "gauntlet: the suites are " << JoinNames(names) << "\n";
}

namespace {

const CLI::Option* FindOption(const CLI::App* a, const std::string& name) {
  for (const CLI::Option* op : a->get_options()) {
    if (op->get_positional()) continue;
    for (auto& l : op->get_lnames())
      if (name == "--" + l) return op;
    for (auto& s : op->get_snames())
      if (name == "-" + s) return op;
  }
  return nullptr;
}

std::vector<const CLI::App*> Subcommands(const CLI::App* a) {
  return a->get_subcommands([](const CLI::App*) { return true; });
}

// The hint for flag `name` (with `value`, when it takes one) where the line is at `at`.
std::string FlagHint(const CLI::App& root, const CLI::App* at, const std::string& name, const CLI::Option* op,
                     const std::string& value) {
  if (!op) {
    std::vector<std::string> flags;
    for (const CLI::App* a : {at, &root})
      for (const CLI::Option* o : a->get_options())
        for (auto& l : o->get_lnames()) flags.push_back("--" + l);
    auto n = Nearest(name, flags);
    return n ? "did you mean " + *n + "?" : "";
  }
  const auto choices = OptionChoices(op);
  if (choices.empty() || std::find(choices.begin(), choices.end(), value) != choices.end()) return "";
  auto n = Nearest(value, choices);
  return n ? "did you mean " + name + " " + *n + "?" : name + " is one of " + JoinNames(choices);
}

}  // namespace

UsageHint FindUsageHint(const CLI::App& root, int argc, const char* const* argv) {
  UsageHint h;
  const CLI::App* at = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      const auto eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
      const std::string name = arg.substr(0, eq);
      const CLI::Option* op = FindOption(at, name);
      if (!op) op = FindOption(&root, name);  // the root's flags work after the command too (fallthrough)
      std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
      if (op && op->get_expected_max() == 0) continue;
      if (op && eq == std::string::npos) {
        if (i + 1 >= argc) return h;
        value = argv[++i];
      }
      h.text = FlagHint(root, at, name, op, value);
      if (!h.text.empty() || !op) return h;
      continue;
    }
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : Subcommands(at))
      if (s->get_name() == arg) sub = s;
    if (sub) {
      at = sub;
      h.command += (h.command.empty() ? "" : " ") + arg;
    } else if (at == &root) {
      std::vector<std::string> names;
      for (const CLI::App* s : Subcommands(&root)) names.push_back(s->get_name());
      auto n = Nearest(arg, names);
      h.text = "'" + arg + "' is not a gauntlet command" + (n ? ": did you mean " + *n + "?" : "");
      h.replaces = true;
      return h;
    }
  }
  return h;
}

int UsageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: printed as CLI11 prints them
  const UsageHint h = FindUsageHint(app, argc, argv);
  if (h.replaces) std::cerr << "gauntlet: " << h.text << "\n";
  else std::cerr << "gauntlet: " << e.what() << (h.text.empty() ? "" : " (" + h.text + ")") << "\n";
  std::cerr << "Run `gauntlet " << (h.command.empty() ? "" : h.command + " ") << "--help` for the usage.\n";
  // 2, as every other error of the CLI: a script tells "it did not run" from "a trial failed" (1).
  return 2;
}

}  // namespace gauntlet::cli
