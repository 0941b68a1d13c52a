// Shell completion (`gauntlet completion bash|zsh|fish`): the command tree read from CLI11 once, as
// plain data, and one printer per shell that writes a script completing from it. Internal to cli/.
#pragma once
#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace gauntlet::cli {

struct CompletionOption {
  std::vector<std::string> longs, shorts;  // without dashes: "format", "f"
  std::string desc;
  bool takes_value = false;
  std::vector<std::string> choices;  // a fixed set (--format), else empty
  bool path = false;                 // the value is a file or folder
};

struct CompletionCommand {
  std::string name, desc;  // "" for the root
  std::string path;        // "suites/push"; "" for the root: the key the scripts dispatch on
  std::vector<CompletionOption> options;
  bool files = false;  // a positional FILE argument
  std::vector<CompletionCommand> subs;
};

// The tree under `root` as it is now (so it covers subcommands added after `completion`). Reads
// `root` only.
CompletionCommand CompletionTree(const CLI::App& root);

// Every command of the tree, depth first (the root first), for printers that list each.
std::vector<const CompletionCommand*> AllCommands(const CompletionCommand& root);

// The scripts; each is complete and self-describing (how to install it in its header comment).
void PrintBashCompletion(const CompletionCommand& root, std::ostream& out);
void PrintZshCompletion(const CompletionCommand& root, std::ostream& out);
void PrintFishCompletion(const CompletionCommand& root, std::ostream& out);

}  // namespace gauntlet::cli
