// The script examples in docs/SCRIPTING.md, run as written against a live daemon. A fenced block
// whose info string is "python test" or "bash test" is extracted and executed (python3 / bash -e)
// with GAUNTLET_SERVER set and the gauntlet binary first on PATH; it must exit 0. The daemon holds
// the built-in suites and a finished run of the demo-bringup sweep, as after the user guide's tour.
// And docs/CLI.md covers every subcommand `gauntlet --help` lists.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

struct Block {
  std::string lang, code;
  int line = 0;
};

std::vector<Block> TestedBlocks(const std::string& path) {
  std::ifstream in(path);
  std::vector<Block> out;
  std::string l;
  int n = 0;
  std::optional<Block> cur;
  static const std::regex kOpen("^```(python|bash) +test\\s*$");
  while (std::getline(in, l)) {
    ++n;
    std::smatch m;
    if (!cur && std::regex_match(l, m, kOpen)) {
      cur = Block{m[1], "", n};
    } else if (cur && l.rfind("```", 0) == 0) {
      out.push_back(*cur);
      cur.reset();
    } else if (cur) {
      cur->code += l + "\n";
    }
  }
  return out;
}

TEST(DocsTest, ScriptingExamplesRunAgainstALiveDaemon) {
  auto blocks = TestedBlocks(SourceDir() + "/docs/SCRIPTING.md");
  // A doc edit that drops the markers must not turn this test into a no-op.
  ASSERT_GE(blocks.size(), 6u) << "docs/SCRIPTING.md lost its ```python test / ```bash test blocks";

  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/suites");
  auto worker = StartWorker(dir.path(), d.url(), "laptop", json::object(), {"--max-trials", "4"});
  // The tour's sweep, with the simulated delay cut so the test stays quick.
  std::ifstream sf(SourceDir() + "/suites/demo/sweep.json");
  json sweep = json::parse(sf);
  sweep["parameters"]["delay"] = {"0.01"};
  json created = d.PostJson("/api/v1/sweeps", sweep, 201);
  json fin = d.WaitSweep(created["id"].get<int64_t>(), std::chrono::seconds(240));
  ASSERT_TRUE(fin["finished"].get<bool>()) << fin.dump();

  const std::string bin_dir = std::filesystem::path(GauntletBin()).parent_path().string();
  const char* path = getenv("PATH");
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    SCOPED_TRACE("docs/SCRIPTING.md:" + std::to_string(b.line) + " (" + b.lang + ")");
    const std::string file = dir.Write("block" + std::to_string(i) + (b.lang == "python" ? ".py" : ".sh"), b.code);
    const std::string log = dir.path() + "/block" + std::to_string(i) + ".log";
    std::vector<std::string> argv = b.lang == "python" ? std::vector<std::string>{"/usr/bin/env", "python3", file}
                                                       : std::vector<std::string>{"/bin/bash", "-e", file};
    Child c(argv, log,
            {"GAUNTLET_SERVER=" + d.url(), "PATH=" + bin_dir + ":" + (path ? path : "/usr/bin:/bin"),
             "HOME=" + dir.path()});
    int status = c.Wait(std::chrono::seconds(60));
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "exit status " << status << "\n--- code ---\n" << b.code << "--- output ---\n" << c.Log();
  }
}

// The subcommands `gauntlet --help` lists (the lines under "Subcommands:", name first).
std::vector<std::string> HelpSubcommands(const TempDir& dir) {
  const std::string log = dir.path() + "/help.log";
  Child c({GauntletBin(), "--help"}, log);
  EXPECT_EQ(c.Wait(std::chrono::seconds(30)), 0) << c.Log();
  std::istringstream in(c.Log());
  std::vector<std::string> out;
  std::string l;
  bool in_list = false;
  static const std::regex kEntry("^  ([a-z][a-z0-9-]*)\\s.*");
  while (std::getline(in, l)) {
    std::smatch m;
    if (l.rfind("Subcommands:", 0) == 0) in_list = true;
    else if (in_list && std::regex_match(l, m, kEntry)) out.push_back(m[1]);
    else if (in_list && !l.empty() && l[0] != ' ') in_list = false;
  }
  return out;
}

TEST(DocsTest, EveryCommandTheHelpListsHasItsSectionInCliMd) {
  TempDir dir;
  const auto subs = HelpSubcommands(dir);
  // The list's shape changing must not make this pass on nothing.
  ASSERT_GE(subs.size(), 10u) << "could not read the subcommands from `gauntlet --help`";
  std::ifstream in(SourceDir() + "/docs/CLI.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string md = "\n" + ss.str();
  for (auto& sub : subs) {
    EXPECT_NE(md.find("\n## " + sub + "\n"), std::string::npos) << "docs/CLI.md has no \"## " << sub << "\" section";
    EXPECT_NE(md.find("| [`" + sub + "`](#" + sub + ") |"), std::string::npos)
        << "docs/CLI.md's command table has no row for " << sub;
  }
}

}  // namespace
}  // namespace gauntlet::test
