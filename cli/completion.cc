// `gauntlet completion bash|zsh|fish`: a completion script generated from the command tree when it
// runs, so it never falls behind a new subcommand, flag or choice.
#include "cli/completion.h"

#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/suggest.h"

namespace gauntlet::cli {

namespace {

CompletionCommand ReadCommand(const CLI::App* a, const std::string& parent_path) {
  // Options that name a file or folder complete paths.
  static const std::set<std::string> kPathOpts = {"db",        "tokens",    "inventory",  "workdir", "web",
                                                  "suites",    "port-file", "preflight",  "config",  "state-file"};
  CompletionCommand c;
  c.name = a->get_name();
  c.desc = a->get_description();
  c.path = parent_path.empty() ? c.name : parent_path + "/" + c.name;
  if (!a->get_parent()) c.path.clear(), c.name.clear();
  for (const CLI::Option* op : a->get_options()) {
    if (op->get_positional()) {
      if (op->get_name() == "file") c.files = true;
      continue;
    }
    CompletionOption o;
    o.longs = op->get_lnames();
    o.shorts = op->get_snames();
    o.desc = op->get_description();
    o.takes_value = op->get_expected_max() != 0;
    if (o.takes_value) o.choices = OptionChoices(op);
    for (auto& l : o.longs) o.path = o.path || kPathOpts.count(l) || (c.name == "classify" && l == "suite");
    c.options.push_back(std::move(o));
  }
  for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; }))
    c.subs.push_back(ReadCommand(sub, c.path));
  return c;
}

void Walk(const CompletionCommand& c, std::vector<const CompletionCommand*>* out) {
  out->push_back(&c);
  for (auto& s : c.subs) Walk(s, out);
}

}  // namespace

CompletionCommand CompletionTree(const CLI::App& root) { return ReadCommand(&root, ""); }

std::vector<const CompletionCommand*> AllCommands(const CompletionCommand& root) {
  std::vector<const CompletionCommand*> out;
  Walk(root, &out);
  return out;
}

void AddCompletionCommand(CLI::App& app) {
  auto shell = std::make_shared<std::string>("bash");
  auto c = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  c->footer("Install: gauntlet completion bash > ~/.local/share/bash-completion/completions/gauntlet\n"
            "         gauntlet completion zsh > \"${fpath[1]}/_gauntlet\"   (a folder on $fpath; then restart zsh)\n"
            "         gauntlet completion fish > ~/.config/fish/completions/gauntlet.fish\n"
            "or source scripts/gauntlet-completion.bash (the bash script) from ~/.bashrc.");
  c->add_option("shell", *shell, "bash, zsh or fish")->check(CLI::IsMember({"bash", "zsh", "fish"}))->capture_default_str();
  const CLI::App* root = &app;
  // The callback holds `shell` alive: the option writes into it while parsing, after this returns.
  c->callback([root, shell] {
    const CompletionCommand tree = CompletionTree(*root);
    if (*shell == "zsh") PrintZshCompletion(tree, std::cout);
    else if (*shell == "fish") PrintFishCompletion(tree, std::cout);
    else PrintBashCompletion(tree, std::cout);
  });
}

}  // namespace gauntlet::cli
