// The `gauntlet` command line as people and CI jobs run it: the real binary against a real daemon
// and worker on loopback (cli_fixture.h). Exit codes of `submit --wait`, every output format, one-line
// API errors, server/token resolution (flag, environment, config file), --help, the example suites.
// The matrix, trials and logs are in cli_results_test.cc; usage errors, suites push and completion
// in cli_shell_test.cc.
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

TEST_F(CliTest, SubmitWaitExitsZeroWhenEveryTrialPassedOrWasSkipped) {
  auto f = Write("pass.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {"a", "b"}}}}});
  Out o = G({"submit", f, "--wait"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  auto lines = Lines(o.out);
  ASSERT_GE(lines.size(), 2u) << o.out;
  // Not a terminal: the submission, then one JSON line per change, the last one finished.
  json first = json::parse(lines[0]);
  EXPECT_EQ(first["trials"], 2);
  json last = json::parse(lines.back());
  EXPECT_TRUE(last["finished"].get<bool>());
  EXPECT_EQ(last["by_verdict"]["passed"], 2);
  EXPECT_EQ(last["sweep"], first["id"]);
}

TEST_F(CliTest, SubmitWaitExitsOneWhenATrialFailed) {
  // YAML input, from stdin.
  Out o = G({"submit", "-", "--wait"}, {},
            "suite: fixture-cmd\nparameters:\n  mode: [pass, fail]\n  tag: [yamlfail]\nprune: false\n");
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  json last = json::parse(Lines(o.out).back());
  EXPECT_EQ(last["by_verdict"]["crashed"], 1);
  EXPECT_EQ(last["by_verdict"]["passed"], 1);
}

TEST_F(CliTest, SubmitWaitShowsProgressAsTrialsFinish) {
  // Six one-second trials, two at a time: the follower sees the count move, in order.
  auto f = Write("slow.json", {{"suite", "fixture-cmd"},
                               {"parameters", {{"mode", {"sleep"}}, {"seconds", {"1"}}, {"tag", {"p1", "p2", "p3", "p4", "p5", "p6"}}}},
                               {"reuse", false}});
  Out o = G({"submit", f, "--wait"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  auto lines = Lines(o.out);
  ASSERT_GE(lines.size(), 3u) << o.out;
  int64_t prev = -1;
  for (size_t i = 1; i < lines.size(); ++i) {
    json j = json::parse(lines[i]);
    EXPECT_GE(j["done"].get<int64_t>(), prev) << o.out;
    prev = j["done"].get<int64_t>();
    EXPECT_EQ(j["finished"].get<bool>(), i + 1 == lines.size()) << o.out;
    EXPECT_TRUE(j.contains("eta_s"));
  }
  EXPECT_LT(json::parse(lines[1])["done"].get<int64_t>(), 6) << "the first line came after the end: " << o.out;
  EXPECT_EQ(prev, 6);
}

TEST_F(CliTest, SubmitRefusedByTheDaemonExitsTwoWithOneLineNamingTheField) {
  auto bad = Write("bad.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"teleport"}}}}});
  Out o = G({"submit", bad, "--wait"});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(Lines(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.err.find("422"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("parameters.mode"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST_F(CliTest, SubmitOfAMissingFileExitsTwoNamingTheFile) {
  Out o = G({"submit", dir_->path() + "/no-such-file.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("no-such-file.json"), std::string::npos) << o.err;
}

TEST_F(CliTest, SubmitOfUnparsableYamlExitsTwoWithOneLine) {
  auto garbage = dir_->Write("garbage.yaml", "suite: [unclosed\n");
  Out o = G({"submit", garbage});
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(Lines(o.err).size(), 1u) << o.err;
}

TEST_F(CliTest, SubmitOfAnUnknownSuiteExitsTwoWith404) {
  auto unknown = Write("unknown.json", {{"suite", "no-such-suite"}});
  Out o = G({"submit", unknown});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("404"), std::string::npos) << o.err;
}

TEST_F(CliTest, SubmitWithNothingListeningExitsTwoSayingSo) {
  auto unknown = Write("unknown.json", {{"suite", "no-such-suite"}});
  Out o = RunProgram(*dir_, {GauntletBin(), "submit", unknown, "--server", kNowhere});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("cannot reach " + kNowhere), std::string::npos) << o.err;
}

TEST_F(CliTest, TrialsAndStatusInEveryFormat) {
  auto f = Write("ts.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}, {"tag", {"ts"}}}}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();

  Out j = G({"trials", "--sweep", id, "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json trials = json::parse(j.out);
  ASSERT_EQ(trials.size(), 2u);
  Out failed = G({"trials", "--sweep", id, "--verdict", "crashed", "--param", "mode=fail", "--format", "json"});
  ASSERT_EQ(json::parse(failed.out).size(), 1u) << failed.out;
  Out none = G({"trials", "--sweep", id, "--verdict", "crashed", "--param", "mode=pass", "--format", "json"});
  EXPECT_EQ(json::parse(none.out).size(), 0u) << none.out;
  Out badp = G({"trials", "--param", "mode"});
  EXPECT_EQ(badp.code, 2);
  EXPECT_NE(badp.err.find("NAME=VALUE"), std::string::npos);

  Out csv = G({"trials", "--sweep", id, "--format", "csv"});
  auto cl = Lines(csv.out);
  ASSERT_EQ(cl.size(), 3u) << csv.out;
  EXPECT_EQ(cl[0].rfind("id,sweep,suite,state,verdict", 0), 0u) << cl[0];
  Out md = G({"trials", "--sweep", id, "--format", "markdown"});
  EXPECT_EQ(Lines(md.out)[0].rfind("| TRIAL | SWEEP |", 0), 0u) << md.out;
  Out tab = G({"trials", "--sweep", id});
  EXPECT_EQ(Lines(tab.out).size(), 3u) << tab.out;

  Out st = G({"status", id, "--format", "json"});
  ASSERT_EQ(st.code, 0);
  EXPECT_TRUE(json::parse(st.out)["finished"].get<bool>());
  Out stc = G({"status", "--format", "csv"});
  auto sl = Lines(stc.out);
  ASSERT_GE(sl.size(), 2u);
  EXPECT_EQ(sl[0].rfind("id,name,suite,trials,done,running,finished,passed,", 0), 0u) << sl[0];
  Out stm = G({"status", id, "--format", "markdown"});
  EXPECT_EQ(Lines(stm.out)[1].rfind("|---|", 0), 0u) << stm.out;
  Out stt = G({"status", id});
  EXPECT_NE(stt.out.find("passed 1 crashed 1"), std::string::npos) << stt.out;
  // status --wait on a finished sweep answers at once with submit's exit code.
  Out sw = G({"status", id, "--wait"});
  EXPECT_EQ(sw.code, 1) << sw.err;
  Out missing = G({"status", "999999"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(Lines(missing.err).size(), 1u);
  EXPECT_NE(missing.err.find("404"), std::string::npos);

  // Logs of a finished trial; --follow ends since the trial is done.
  const std::string trial = trials[0]["id"].dump();
  Out lg = G({"logs", trial});
  EXPECT_EQ(lg.code, 0);
  EXPECT_NE(lg.out.find("=== stage run"), std::string::npos) << lg.out;
  Out lf = G({"logs", trial, "--follow"});
  EXPECT_EQ(lf.code, 0);
  EXPECT_EQ(lf.out, lg.out);

  Out nodes = G({"nodes", "--format", "json"});
  ASSERT_EQ(nodes.code, 0);
  EXPECT_EQ(json::parse(nodes.out)[0]["name"], "cpu-node");
  Out suites = G({"suites", "--format", "csv"});
  EXPECT_NE(suites.out.find("fixture-cmd,1,"), std::string::npos) << suites.out;
  Out one = G({"suites", "fixture-cmd"});
  EXPECT_EQ(json::parse(one.out)["name"], "fixture-cmd");
}

TEST_F(CliTest, LogsFollowPrintsUntilTheTrialEnds) {
  auto f = Write("follow.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"sleep"}}, {"seconds", {"1.5"}}, {"tag", {"fol"}}}},
                                 {"reuse", false}});
  Out sub = G({"submit", f});
  ASSERT_EQ(sub.code, 0) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  Out t = G({"trials", "--sweep", id, "--format", "json"});
  const std::string trial = json::parse(t.out)[0]["id"].dump();
  Out lf = G({"logs", trial, "-f"});
  EXPECT_EQ(lf.code, 0) << lf.err;
  EXPECT_NE(lf.out.find("fixture: sleeping"), std::string::npos) << lf.out;
  EXPECT_NE(lf.out.find("=== stage run ended: passed"), std::string::npos) << lf.out;
}

TEST_F(CliTest, CancelASweep) {
  auto f = Write("cancel.json", {{"suite", "fixture-cmd"}, {"targets", {{{"arch", "sm_90"}}}}, {"parameters", {{"mode", {"pass"}}}}});
  Out sub = G({"submit", f});  // no node has sm_90: it waits
  ASSERT_EQ(sub.code, 0) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  Out c = G({"cancel", id});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["by_verdict"]["cancelled"], 1);
  Out w = G({"status", id, "--wait"});
  EXPECT_EQ(w.code, 1) << "cancelled is not passed";
  Out neither = G({"cancel"});
  EXPECT_EQ(neither.code, 2);
}

TEST_F(CliTest, ServerFromTheConfigFileAlone) {
  ConfigFile config("# written by cli_test\nserver = " + d_->url() + "\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--format", "json"});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, EnvironmentBeatsTheConfigFileAndTheFlagBeatsTheEnvironment) {
  ConfigFile config("server = " + kNowhere + "\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites"}, {"GAUNTLET_SERVER=" + d_->url()});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", d_->url()}, {"GAUNTLET_SERVER=" + kNowhere});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("127.0.0.1:1"), std::string::npos) << "the file's server was used: " << o.err;
}

TEST_F(CliTest, GauntletConfigNamesAnotherFileAndABareHostPortIsAccepted) {
  ConfigFile config("server = " + kNowhere + "\n");  // would fail, were it read
  const std::string other = dir_->Write("other-config", "server=\"" + d_->url().substr(7) + "\"\n");
  Out o = RunProgram(*dir_, {GauntletBin(), "suites"}, {"GAUNTLET_CONFIG=" + other});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, WithoutATokenASecuredDaemonAnswers401SayingHowToGiveOne) {
  std::unique_ptr<Secured> secured;
  ASSERT_NO_FATAL_FAILURE(StartSecured(&secured));
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url()});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("401"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--token"), std::string::npos) << "the error says how to give one: " << o.err;
}

TEST_F(CliTest, TokenFromTheFlagTheEnvironmentOrTheConfigFile) {
  std::unique_ptr<Secured> secured;
  ASSERT_NO_FATAL_FAILURE(StartSecured(&secured));
  Out o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url(), "--token", secured->token});
  EXPECT_EQ(o.code, 0) << o.err;
  o = RunProgram(*dir_, {GauntletBin(), "suites", "--server", secured->daemon->url()}, {"GAUNTLET_TOKEN=" + secured->token});
  EXPECT_EQ(o.code, 0) << o.err;
  ConfigFile config("server = " + secured->daemon->url() + "\ntoken = " + secured->token + "\n");
  o = RunProgram(*dir_, {GauntletBin(), "suites"});
  EXPECT_EQ(o.code, 0) << o.err;
}

TEST_F(CliTest, HelpEverywhere) {
  Out top = G({"--help"});
  EXPECT_EQ(top.code, 0);
  for (const char* sub : {"serve", "worker", "submit", "status", "trials", "matrix", "logs", "cancel", "nodes", "suites",
                          "classify", "token", "completion"}) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
    Out h = G({sub, "--help"});
    EXPECT_EQ(h.code, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub << ": " << h.out;
  }
  Out m = G({"matrix", "--help"});
  EXPECT_NE(m.out.find("markdown"), std::string::npos);
}

TEST_F(CliTest, ExampleSweepsValidateAgainstTheExampleSuites) {
  // The examples load (suite_test checks that too) and every sweep file in suites/examples/sweeps
  // is accepted by the daemon. Nothing runs: no node has those GPUs, and the sweeps are cancelled.
  TempDir edir;
  Daemon ex(edir.path(), SourceDir() + "/suites/examples");
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(SourceDir() + "/suites/examples/sweeps")) {
    ++n;
    Out o = RunProgram(*dir_, {GauntletBin(), "submit", e.path().string(), "--server", ex.url()});
    ASSERT_EQ(o.code, 0) << e.path() << ": " << o.err;
    json r = json::parse(Lines(o.out)[0]);
    EXPECT_GT(r["trials"].get<int64_t>(), 1) << e.path();
    EXPECT_EQ(RunProgram(*dir_, {GauntletBin(), "cancel", r["id"].dump(), "--server", ex.url()}).code, 0);
  }
  EXPECT_GE(n, 2);
  // The SGLang suite's rules name the arch refusal in a real log.
  Out c = RunProgram(*dir_, {GauntletBin(), "classify", SourceDir() + "/tests/classifier/dev/01-sglang-trtllm-moe-sm100-only.log",
                             "--exit-code", "1", "--suite", SourceDir() + "/suites/examples/sglang-nvfp4.json"});
  ASSERT_EQ(c.code, 0) << c.err;
  json cl = json::parse(c.out);
  EXPECT_EQ(cl["verdict"], "unsupported") << c.out;
}

}  // namespace
}  // namespace gauntlet::test
