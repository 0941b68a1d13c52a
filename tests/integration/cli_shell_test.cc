// cli_test, the shell side: usage errors (exit 2, the nearest command, flag, choice, suite or filter
// value suggested), `suites push`, and the completion scripts for bash, zsh and fish, run through
// each shell where it is installed.
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

class CliShellTest : public CliTest {
 protected:
  // PATH with the binary under test first: the completion scripts call `gauntlet`.
  static std::string PathWithGauntlet() {
    const char* path = getenv("PATH");
    return "PATH=" + std::filesystem::path(GauntletBin()).parent_path().string() + ":" + (path ? path : "/usr/bin:/bin");
  }
  // The shell's path, or "" when it is not installed here.
  static std::string Shell(const std::string& name) {
    for (const char* d : {"/usr/bin/", "/bin/", "/usr/local/bin/"})
      if (access((std::string(d) + name).c_str(), X_OK) == 0) return std::string(d) + name;
    return "";
  }
};

TEST_F(CliShellTest, UsageErrorsExitTwoAndSuggestTheNearestName) {
  Out o = G({"sumbit", "x.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'sumbit' is not a gauntlet command: did you mean submit?"), std::string::npos) << o.err;
  o = G({"submit", "x.json", "--wiat"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--wiat (did you mean --wait?)"), std::string::npos) << o.err;
  o = G({"matrix", "--suite", "fixture-cmd", "--format", "tabel"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean --format table?"), std::string::npos) << o.err;
  o = G({"trials", "--order", "newst"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean --order newest?"), std::string::npos) << o.err;
  // Nothing near: no guess, still exit 2.
  o = G({"frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("'frobnicate' is not a gauntlet command"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("did you mean"), std::string::npos) << o.err;
  EXPECT_EQ(G({}).code, 2);
  EXPECT_EQ(G({"--help"}).code, 0);

  // Values only the daemon knows: its 422 (or 404) line, then the nearest allowed value.
  o = G({"trials", "--verdict", "crashd"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("422 Unprocessable Entity: verdict:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("did you mean --verdict crashed?"), std::string::npos) << o.err;
  o = G({"trials", "--state", "runing"});
  EXPECT_NE(o.err.find("did you mean --state running?"), std::string::npos) << o.err;
  o = G({"matrix", "--suite", "fixture-cdm"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("404"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("did you mean --suite fixture-cmd?"), std::string::npos) << o.err;
  // Every command that names a suite with --suite refuses one the daemon does not know, with the
  // nearest (once, even where the command also asks in its own words).
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"best"}, {"check", "--set", "mode=pass"}, {"drift"}, {"flaky"}, {"triage"}, {"regressions"}, {"matrix"}, {"trials"}}) {
    args.insert(args.end(), {"--suite", "fixture-cdm"});
    o = G(args);
    EXPECT_EQ(o.code, 2) << args[0] << ": " << o.err;
    const size_t at = o.err.find("did you mean --suite fixture-cmd?");
    EXPECT_NE(at, std::string::npos) << args[0] << ": " << o.err;
    EXPECT_EQ(o.err.find("did you mean", at + 1), std::string::npos) << args[0] << " said it twice: " << o.err;
  }
  // A suite no one uploaded is refused, never an empty listing that a CI gate would read as clean.
  o = G({"trials", "--suite", "fixture-cdm"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("did you mean --suite fixture-cmd?"), std::string::npos) << o.err;
  o = G({"trials", "--suite", "fixture-cdm", "--format", "csv"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("did you mean --suite fixture-cmd?"), std::string::npos) << o.err;
  o = G({"suites", "fixture-tmeout"});
  EXPECT_NE(o.err.find("did you mean gauntlet suites fixture-timeout?"), std::string::npos) << o.err;
  auto typo = Write("typo.json", {{"suite", "fixture-cnd"}});
  o = G({"submit", typo});
  EXPECT_NE(o.err.find("did you mean suite 'fixture-cmd'?"), std::string::npos) << o.err;
}

TEST_F(CliShellTest, SuitesPushRegistersJsonOrYamlAndSaysWhetherItIsNew) {
  const std::string stage = SourceDir() + "/tests/fixtures/suites/fixture_stage.py";
  // The suite's folder goes with it (its bundle): a folder of its own, which nothing else writes to.
  TempDir folder;
  auto yaml = [&](const std::string& desc) {
    return folder.Write("pushed.yaml", "name: cli-pushed\ndescription: " + desc +
                                          "\nparameters:\n  mode: [pass, fail]\nstages:\n  - name: run\n    kind: command\n"
                                          "    argv: [python3, " + stage + ", --mode, '{mode}']\n");
  };
  Out o = G({"suites", "push", yaml("pushed from YAML")});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("suite cli-pushed version 1 registered: a new suite\nwith 1 file(s) of " + folder.path() + " (", 0), 0u)
      << o.out;
  o = G({"suites", "push", yaml("pushed from YAML")});
  EXPECT_EQ(o.out.rfind("suite cli-pushed version 1 unchanged: the daemon already has this definition\nwith 1 file(s) of ", 0), 0u)
      << o.out;
  o = G({"suites", "push", yaml("changed"), "--format", "json"});
  ASSERT_EQ(o.code, 0) << o.err;
  json j = json::parse(o.out);
  EXPECT_EQ(j["version"], 2);
  EXPECT_TRUE(j["created"].get<bool>());
  // The daemon has it, parameters in the file's order; it runs.
  EXPECT_EQ(json::parse(G({"suites", "cli-pushed"}).out)["description"], "changed");
  auto sweep = Write("pushed-sweep.json", {{"suite", "cli-pushed"}, {"parameters", {{"mode", {"pass"}}}}});
  EXPECT_EQ(G({"submit", sweep, "--wait"}).code, 0);

  // JSON, named in the file.
  json def = {{"name", "cli-pushed-json"}, {"parameters", {{"mode", {"pass"}}}},
              {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"python3", stage, "--mode", "{mode}"}}}}}};
  o = G({"suites", "push", folder.Write("pushed.json", json(def).dump())});
  EXPECT_EQ(o.out.rfind("suite cli-pushed-json version 1 registered: a new suite\nwith 2 file(s) of ", 0), 0u) << o.out << o.err;
  // What the daemon refuses is one line naming the field; a file without a name says so.
  def["parameters"] = "nope";
  o = G({"suites", "push", folder.Write("bad-suite.json", def.dump())});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("422"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("parameters"), std::string::npos) << o.err;
  def.erase("name");
  o = G({"suites", "push", Write("nameless.json", def)});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("has no \"name\""), std::string::npos) << o.err;
  EXPECT_EQ(G({"suites", "push", dir_->path() + "/missing.yaml"}).code, 2);
}

TEST_F(CliShellTest, BashCompletionCompletesSubcommandsFlagsAndChoices) {
  // scripts/gauntlet-completion.bash loads what `gauntlet completion bash` generates from the
  // command tree, so the binary under test must be the `gauntlet` on PATH.
  const std::string script = SourceDir() + "/scripts/gauntlet-completion.bash";
  const std::string bin_dir = std::filesystem::path(GauntletBin()).parent_path().string();
  Out gen = G({"completion", "bash"});
  ASSERT_EQ(gen.code, 0);
  for (const char* sub : {"submit", "status", "trials", "matrix", "logs", "cancel", "nodes", "suites", "classify"})
    EXPECT_NE(gen.out.find(std::string(" ") + sub), std::string::npos) << sub;
  auto complete = [&](const std::string& words, int cword) {
    std::string cmd = "source '" + script + "' && complete -p gauntlet && COMP_WORDS=(" + words +
                      ") && COMP_CWORD=" + std::to_string(cword) + " && _gauntlet && echo \"[${COMPREPLY[*]}]\"";
    const char* path = getenv("PATH");
    return RunProgram(*dir_, {"/bin/bash", "--norc", "--noprofile", "-c", cmd},
                      {"PATH=" + bin_dir + ":" + (path ? path : "/usr/bin:/bin")});
  };
  Out o = complete("gauntlet su", 1);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("-F _gauntlet gauntlet"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("[submit suites]"), std::string::npos) << o.out;
  o = complete("gauntlet matrix --format ''", 3);
  EXPECT_NE(o.out.find("[table csv json markdown]"), std::string::npos) << o.out;
  o = complete("gauntlet submit --w", 2);
  EXPECT_NE(o.out.find("[--wait --wait-for-nodes]"), std::string::npos) << o.out;
  o = complete("gauntlet trials --ver", 2);
  EXPECT_NE(o.out.find("[--verdict]"), std::string::npos) << o.out;
  // A subcommand's subcommand, and its own flags.
  o = complete("gauntlet suites p", 2);
  EXPECT_NE(o.out.find("[push]"), std::string::npos) << o.out;
  o = complete("gauntlet suites push --fo", 3);
  EXPECT_NE(o.out.find("[--format]"), std::string::npos) << o.out;
  o = complete("gauntlet trials --order ''", 3);
  EXPECT_NE(o.out.find("[newest oldest]"), std::string::npos) << o.out;
}

TEST_F(CliShellTest, ZshCompletionCompletesSubcommandsFlagsAndChoices) {
  const std::string zsh = Shell("zsh");
  if (zsh.empty()) GTEST_SKIP() << "zsh is not installed: `gauntlet completion zsh` is untested here";
  const std::string script = dir_->Write("gauntlet.zsh", G({"completion", "zsh"}).out);
  Out syntax = RunProgram(*dir_, {zsh, "-n", script});
  ASSERT_EQ(syntax.code, 0) << syntax.err;
  // Sourced after compinit it registers itself for `gauntlet`.
  Out reg = RunProgram(*dir_, {zsh, "-f", "-c", "autoload -U compinit && compinit -u -D && source " + script +
                                                    " && print -r -- $_comps[gauntlet]"});
  EXPECT_EQ(reg.out, "_gauntlet\n") << reg.err;
  // The function itself, with zsh's completion builtins replaced by ones that print what they are
  // offered: $words and $CURRENT are what zsh sets in a completion widget.
  const std::string stubs =
      "source " + script + "\n"
      "compadd() { print -r -- \"values ${@[${@[(i)--]}+1,-1]}\"; }\n"
      "_describe() { local -a a; a=(\"${(@P)${@[-1]}}\"); print -r -- \"offered ${a[@]%%:*}\"; }\n"
      "_files() { print -r -- files; }\n";
  auto complete = [&](const std::string& line, int current) {
    const std::string body = stubs + "words=(" + line + "); CURRENT=" + std::to_string(current) + "; _gauntlet\n";
    return RunProgram(*dir_, {zsh, "-f", dir_->Write("zcomplete.zsh", body)});
  };
  Out o = complete("gauntlet su", 2);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(" submit "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" suites "), std::string::npos) << o.out;
  o = complete("gauntlet matrix --format ''", 4);
  EXPECT_EQ(o.out, "values table csv json markdown\n") << o.out << o.err;
  o = complete("gauntlet submit --w", 3);
  EXPECT_NE(o.out.find(" --wait "), std::string::npos) << o.out;
  o = complete("gauntlet submit ''", 3);
  EXPECT_EQ(o.out, "files\n") << o.out;
  o = complete("gauntlet suites push --f", 4);
  EXPECT_NE(o.out.find(" --format"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find(" --drain"), std::string::npos) << "nodes' flags are not suites push's: " << o.out;
}

TEST_F(CliShellTest, FishCompletionCompletesSubcommandsFlagsAndChoices) {
  const std::string fish = Shell("fish");
  if (fish.empty()) GTEST_SKIP() << "fish is not installed: `gauntlet completion fish` is untested here";
  const std::string script = dir_->Write("gauntlet.fish", G({"completion", "fish"}).out);
  Out syntax = RunProgram(*dir_, {fish, "--no-config", "-n", script});
  ASSERT_EQ(syntax.code, 0) << syntax.err;
  // fish completes a command line for us (complete -C), descriptions after a tab.
  auto complete = [&](const std::string& line) {
    return RunProgram(*dir_, {fish, "--no-config", "-c", "source " + script + "; complete -C '" + line + "'"},
                      {PathWithGauntlet()});
  };
  Out o = complete("gauntlet su");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("submit\tSubmit a sweep"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("suites\t"), std::string::npos) << o.out;
  o = complete("gauntlet matrix --format ");
  for (const char* v : {"table", "csv", "json", "markdown"})
    EXPECT_NE(o.out.find(std::string(v) + "\t"), std::string::npos) << o.out;
  o = complete("gauntlet submit --w");
  EXPECT_NE(o.out.find("--wait\t"), std::string::npos) << o.out;
  o = complete("gauntlet suites p");
  EXPECT_NE(o.out.find("push\t"), std::string::npos) << o.out;
}


}  // namespace
}  // namespace gauntlet::test
