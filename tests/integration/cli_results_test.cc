// cli_test, the results side: `gauntlet matrix` (cell states, terminal width, suite versions, every
// format), `gauntlet trials` (order, a listing the limit cut), `gauntlet logs` of a trial that never
// ran, and how `submit --wait` / `status --wait` report reuse and a target no node can run.
#include "cli/cli_common.h"
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

// A stage whose verdict its parameters choose, for cells in every state: `fast` passes with a
// throughput that grows with the size, `broken` crashes with a long reason, `picky` passes only at
// size s, `flip` fails the first time each (tag, size) runs and passes after (flaky under repeats).
const char* kCellsScript = R"(import json, os, sys
backend, size, flip = sys.argv[1:4]
def passed():
    value = {"s": 1050, "m": 1130, "l": 1170, "xl": 1210}[size]
    print(json.dumps({"metrics": {"output_tok_s": {"value": value, "unit": "tok/s"}}}))
def crash(msg):
    print("Traceback (most recent call last):", file=sys.stderr)
    print('  File "/opt/cells/kernel.py", line 7, in launch', file=sys.stderr)
    print("RuntimeError: " + msg, file=sys.stderr)
    sys.exit(1)
if backend == "fast":
    passed()
elif backend == "broken":
    crash("grouped gemm rejected its tile configuration for every shape it was given")
elif backend == "picky" and size != "s":
    print("RuntimeError: CUDA error: no kernel image is available for execution on the device", file=sys.stderr)
    sys.exit(1)
elif backend == "flip":
    os.makedirs(os.path.dirname(flip), exist_ok=True)
    try:
        os.close(os.open(flip, os.O_CREAT | os.O_EXCL))
        crash("fixture exploded at step 7")
    except FileExistsError:
        passed()
else:
    passed()
)";

class CliResultsTest : public CliTest {
 protected:
  // The suite `cli-cells`, registered with `suites push` (YAML), and one finished sweep of it with
  // every backend and size run twice: made once, shared by the tests that read it.
  std::string CellsSweep() {
    static std::string id;
    if (!id.empty()) return id;
    const std::string script = dir_->Write("cells.py", kCellsScript);
    const std::string yaml = dir_->Write(
        "cli-cells.yaml",
        "name: cli-cells\ndescription: cli_test, every state a matrix cell can have\nkey_metric: output_tok_s\n"
        "parameters:\n  backend: [fast, broken, picky, flip]\n  size: [s, m, l, xl]\n"
        "stages:\n  - name: run\n    kind: command\n    timeout_s: 60\n"
        "    argv: [python3, " + script + ", '{backend}', '{size}', '" + dir_->path() + "/flips/{size}']\n"
        "signatures:\n  - {match: fixture exploded, verdict: crashed, signature: 'crashed:fixture_exploded'}\n");
    Out push = G({"suites", "push", yaml});
    EXPECT_EQ(push.code, 0) << push.err;
    auto f = Write("cells.json", {{"suite", "cli-cells"}, {"repeats", 2}, {"prune", false}, {"reuse", false}});
    Out sub = G({"submit", f, "--wait"});
    EXPECT_EQ(sub.code, 1) << sub.out << sub.err;
    if (sub.code != 1) return "";
    id = json::parse(Lines(sub.out)[0])["id"].dump();
    return id;
  }
  // The line of `out` that starts with `key` (after trimming), or "".
  static std::string LineOf(const std::string& out, const std::string& key) {
    for (auto& l : Lines(out))
      if (l.rfind(key, 0) == 0) return l;
    return "";
  }
};

TEST_F(CliResultsTest, MatrixInEveryFormat) {
  auto f = Write("mix.json", {{"suite", "fixture-cmd"},
                              {"parameters", {{"mode", {"pass", "fail", "unsupported"}}, {"tag", {"mx"}}}},
                              {"prune", false}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.out << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();

  Out t = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("✅ 1 pts"), std::string::npos) << t.out;
  // The verdict, then the signature's reason in words (crashed:fixture_exploded, unsupported:no_kernel_image).
  EXPECT_NE(t.out.find("❌ crashed: fixture exploded"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("⚠ unsupported: no kernel image"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("\033["), std::string::npos) << "colours only on a terminal";

  // Markdown is the daemon's, as it is: the hardware the results ran on (the worker's node) and the
  // software fingerprint they were judged under, then the grid.
  Out md = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--format", "markdown"});
  ASSERT_EQ(md.code, 0) << md.err;
  auto ml = Lines(md.out);
  ASSERT_GE(ml.size(), 9u) << md.out;
  EXPECT_EQ(ml[0].rfind("**fixture-cmd** v1 · sweep " + id, 0), 0u) << md.out;
  EXPECT_EQ(ml[1], "Hardware:") << md.out;
  EXPECT_EQ(ml[2], "- `cpu`: no GPU on `cpu-node`") << md.out;
  EXPECT_EQ(ml[3].rfind("Software fingerprint: `{\"python\":\"3.", 0), 0u) << md.out;
  EXPECT_EQ(ml[4], "| mode | cpu |");
  EXPECT_EQ(ml[5], "|---|---|");
  EXPECT_EQ(ml[6], "| `pass` | ✅ 1 pts |");
  EXPECT_EQ(ml[7], "| `fail` | ❌ crashed: fixture exploded |");
  EXPECT_EQ(ml[8], "| `unsupported` | ⚠ unsupported: no kernel image |");

  Out csv = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  auto cl = Lines(csv.out);
  ASSERT_EQ(cl.size(), 4u) << csv.out;
  // The daemon's CSV as it is: one line per cell, each fact in its own column.
  EXPECT_EQ(cl[0], "mode,hardware,state,verdict,passed_configs,configs,counts,metric,metric_min,metric_max,metric_unit,signature,"
                   "reused");
  EXPECT_EQ(cl[1], "pass,cpu,passed,passed,1,1,passed=1,score,1,1,pts,,0");

  Out js = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode", "--cols", "hardware", "--format", "json"});
  ASSERT_EQ(js.code, 0) << js.err;
  json m = json::parse(js.out);
  EXPECT_EQ(m["cells"].size(), 3u);
  EXPECT_EQ(m["rows"], json::array({"mode"}));

  // A parameter as columns, two parameters as rows.
  Out two = G({"matrix", "--suite", "fixture-cmd", "--sweep", id, "--rows", "mode,tag", "--cols", "count"});
  EXPECT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.out.find("mode"), std::string::npos);
  EXPECT_NE(two.out.find("tag"), std::string::npos);

  // The field at fault, in one line.
  Out bad = G({"matrix", "--suite", "fixture-cmd", "--rows", "colour"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(Lines(bad.err).size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("422 Unprocessable Entity: rows: 'colour' is not a parameter"), std::string::npos) << bad.err;
  bad = G({"matrix", "--suite", "fixture-cmd", "--format", "html"});
  EXPECT_NE(bad.code, 0);
}

// The API side of the same words and exports: each failed cell's `reason` (a stage-only signature
// named after the suite's stage), the hardware and fingerprints shown, `format` checked, and a
// rerun's dry run counting what it would start without storing anything.
TEST_F(CliResultsTest, MatrixApiSaysReasonsAndARerunCountsFirst) {
  auto f = Write("dry.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}, {"tag", {"dry"}}}},
                              {"prune", false}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.out << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  json m = d_->GetJson("/api/v1/matrix?sweep=" + id + "&rows=mode");
  EXPECT_EQ(m["hardware"], json::array({"cpu"}));
  ASSERT_EQ(m["fingerprints"].size(), 1u) << m.dump();
  EXPECT_EQ(m["fingerprints"][0]["results"], 2);
  for (auto& c : m["cells"]) {
    if (c["row"] == json::array({"fail"})) EXPECT_EQ(c["reason"], "crashed: fixture exploded") << c.dump();
    else EXPECT_TRUE(c["reason"].is_null()) << c.dump();
  }
  auto bad = d_->Get("/api/v1/matrix?sweep=" + id + "&format=html");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.body.find("\"field\":\"format\""), std::string::npos) << bad.body;
  auto md = d_->Get("/api/v1/matrix?sweep=" + id + "&rows=mode&format=markdown");
  EXPECT_EQ(md.status, 200);
  EXPECT_EQ(md.content_type.rfind("text/markdown", 0), 0u) << md.content_type;
  EXPECT_EQ(md.body, G({"matrix", "--sweep", id, "--rows", "mode", "--format", "markdown"}).out) << "one Markdown";

  const size_t sweeps = d_->GetJson("/api/v1/sweeps")["items"].size();
  json dry = d_->PostJson("/api/v1/sweeps/" + id + "/rerun", {{"dry_run", true}, {"configs", {{{"mode", "fail"}}}}});
  EXPECT_EQ(dry, json({{"dry_run", true}, {"trials", 1}, {"rerun_of", std::stoll(id)}}));
  EXPECT_EQ(d_->GetJson("/api/v1/sweeps")["items"].size(), sweeps) << "a dry run stores nothing";
  auto not_bool = d_->Post("/api/v1/sweeps/" + id + "/rerun", R"({"dry_run": "yes"})");
  EXPECT_EQ(not_bool.status, 422);
  EXPECT_NE(not_bool.body.find("\"field\":\"dry_run\""), std::string::npos) << not_bool.body;
}

TEST_F(CliResultsTest, MatrixCellsNeverHideDisagreement) {
  const std::string id = CellsSweep();
  ASSERT_FALSE(id.empty());
  // --sweep alone: the sweep names its suite.
  Out t = G({"matrix", "--sweep", id, "--rows", "backend"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_EQ(Lines(t.out)[0], "cli-cells v1 · sweep " + id + " · metric output_tok_s") << t.out;
  // Every config passed: the key metric's range over them.
  EXPECT_NE(LineOf(t.out, "fast").find("✅ 1,050–1,210 tok/s"), std::string::npos) << t.out;
  // Every config failed one way: the verdict and the short reason.
  EXPECT_NE(LineOf(t.out, "broken").find("❌ crashed: grouped gemm rejected"), std::string::npos) << t.out;
  // Configs that disagree are mixed, with how many passed and what the others got, never "passed".
  const std::string picky = LineOf(t.out, "picky");
  EXPECT_NE(picky.find("◐ mixed: 1/4 passed · unsupported 3"), std::string::npos) << t.out;
  EXPECT_EQ(picky.find("✅"), std::string::npos) << t.out;
  // One config judged both ways is flaky, with its trials per verdict.
  EXPECT_NE(LineOf(t.out, "flip").find("↯ flaky: passed 4 · crashed 4"), std::string::npos) << t.out;
  // Under the grid: which hidden values go with each verdict, and which configs flip.
  EXPECT_NE(t.out.find("picky · cpu: passed with size=s; unsupported with size=m|l|xl"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("flip · cpu: flaky: size=s, size=m, size=l, size=xl judged more than one way (latest trials "),
            std::string::npos) << t.out;
  EXPECT_NE(t.out.find("; trials: passed 4, crashed 4"), std::string::npos) << t.out;

  Out md = G({"matrix", "--sweep", id, "--rows", "backend", "--format", "markdown"});
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("| `fast` | ✅ 1,050–1,210 tok/s |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `picky` | ◐ mixed: 1/4 passed · unsupported 3 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `flip` | ↯ flaky: passed 4 · crashed 4 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("- `picky` · `cpu`: passed with size=s;"), std::string::npos) << md.out;

  // CSV and JSON are the API's, state and all.
  Out csv = G({"matrix", "--sweep", id, "--rows", "backend", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\npicky,cpu,mixed,unsupported,1,4,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nfast,cpu,passed,passed,4,4,passed=8,output_tok_s,1050,1210,tok/s,"), std::string::npos) << csv.out;
  Out js = G({"matrix", "--sweep", id, "--rows", "backend", "--format", "json"});
  ASSERT_EQ(js.code, 0) << js.err;
  json m = json::parse(js.out);
  std::set<std::string> states;
  for (auto& c : m["cells"]) states.insert(c["state"].get<std::string>());
  EXPECT_EQ(states, (std::set<std::string>{"passed", "failed", "mixed", "flaky"})) << js.out;
}

TEST_F(CliResultsTest, MatrixCellsAreCutToTheTerminalUnlessWide) {
  const std::string id = CellsSweep();
  ASSERT_FALSE(id.empty());
  // Sizes as columns: four cells a row, the crash reasons wider together than 160 columns.
  Out wide = G({"matrix", "--sweep", id, "--rows", "backend", "--cols", "size", "--wide"}, {"COLUMNS=160"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  const std::string broken = LineOf(wide.out, "broken");
  ASSERT_GT(cli::DisplayWidth(broken), 160u) << "the test needs cells wider than the terminal: " << wide.out;
  EXPECT_NE(broken.find("❌ crashed: grouped gemm rejected its tile configuration for e…"), std::string::npos) << broken;

  Out cut = G({"matrix", "--sweep", id, "--rows", "backend", "--cols", "size"}, {"COLUMNS=160"});
  ASSERT_EQ(cut.code, 0) << cut.err;
  for (auto& l : Lines(cut.out)) EXPECT_LE(cli::DisplayWidth(l), 160u) << l;
  // Cut cells end in an ellipsis; the row keys and short cells stay whole.
  EXPECT_NE(LineOf(cut.out, "broken").find("❌ crashed: grouped"), std::string::npos) << cut.out;
  EXPECT_NE(LineOf(cut.out, "broken").find("…  "), std::string::npos) << cut.out;
  EXPECT_NE(LineOf(cut.out, "fast").find("✅ 1,050 tok/s"), std::string::npos) << cut.out;
  // Markdown is for pasting: never cut.
  Out md = G({"matrix", "--sweep", id, "--rows", "backend", "--cols", "size", "--format", "markdown"}, {"COLUMNS=40"});
  EXPECT_NE(md.out.find("❌ crashed: grouped gemm rejected its tile configuration for e… |"), std::string::npos) << md.out;
}

TEST_F(CliResultsTest, MatrixSuiteVersionPicksTheResults) {
  const std::string stage = SourceDir() + "/tests/fixtures/suites/fixture_stage.py";
  auto suite = [&](const std::string& desc) {
    return Write("cli-versions.json",
                 {{"name", "cli-versions"}, {"description", desc}, {"parameters", {{"mode", {"pass"}}}},
                  {"stages", {{{"name", "run"}, {"kind", "command"}, {"timeout_s", 60},
                               {"argv", {"python3", stage, "--mode", "{mode}"}}}}}});
  };
  ASSERT_EQ(G({"suites", "push", suite("first")}).code, 0);
  auto f = Write("versions.json", {{"suite", "cli-versions"}});
  ASSERT_EQ(G({"submit", f, "--wait"}).code, 0);
  Out v2 = G({"suites", "push", suite("second")});
  ASSERT_EQ(v2.code, 0) << v2.err;
  ASSERT_NE(v2.out.find("version 2"), std::string::npos) << v2.out;
  // The latest version has no results yet, and says where the earlier ones are.
  Out latest = G({"matrix", "--suite", "cli-versions"});
  EXPECT_EQ(latest.code, 0) << latest.err;
  EXPECT_EQ(latest.out, "");
  EXPECT_NE(latest.err.find("no results for cli-versions (version 2) yet"), std::string::npos) << latest.err;
  EXPECT_NE(latest.err.find("--suite-version all"), std::string::npos) << latest.err;
  Out one = G({"matrix", "--suite", "cli-versions", "--suite-version", "1"});
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(Lines(one.out)[0], "cli-versions v1 · latest verdicts") << one.out;
  EXPECT_NE(one.out.find("✅ 1 pts"), std::string::npos) << one.out;
  Out all = G({"matrix", "--suite", "cli-versions", "--suite-version", "all"});
  EXPECT_EQ(Lines(all.out)[0], "cli-versions · all versions · latest verdicts") << all.out;
  Out bad = G({"matrix", "--suite", "cli-versions", "--suite-version", "newest"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  Out none = G({"matrix"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("--suite NAME or --sweep ID"), std::string::npos) << none.err;
}

TEST_F(CliResultsTest, TrialsAreNewestFirstAndSayWhenTheLimitCutThem) {
  auto f = Write("limit.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}, {"tag", {"l1", "l2", "l3"}}}}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 0) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  json every = json::parse(G({"trials", "--sweep", id, "--format", "json"}).out);
  ASSERT_EQ(every.size(), 3u);
  EXPECT_GT(every[0]["id"].get<int64_t>(), every[2]["id"].get<int64_t>()) << "newest first by default";
  json oldest = json::parse(G({"trials", "--sweep", id, "--format", "json", "--order", "oldest"}).out);
  EXPECT_EQ(oldest[0]["id"], every[2]["id"]);

  Out whole = G({"trials", "--sweep", id});
  EXPECT_EQ(whole.err, "") << "nothing was cut";
  Out cut = G({"trials", "--sweep", id, "--limit", "2", "--format", "json"});
  ASSERT_EQ(cut.code, 0) << cut.err;
  ASSERT_EQ(json::parse(cut.out).size(), 2u);
  const std::string next = every[1]["id"].dump();
  EXPECT_NE(cut.err.find("--limit 2 cut the listing"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("--after " + next), std::string::npos) << cut.err;
  // The cursor it names reads the rest.
  json rest = json::parse(G({"trials", "--sweep", id, "--limit", "2", "--after", next, "--format", "json"}).out);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["id"], every[2]["id"]);
  // CSV (the daemon's own) says so too.
  Out csv = G({"trials", "--sweep", id, "--limit", "1", "--format", "csv"});
  EXPECT_EQ(Lines(csv.out).size(), 2u) << csv.out;
  EXPECT_NE(csv.err.find("--after " + every[0]["id"].dump()), std::string::npos) << csv.err;
}

TEST_F(CliResultsTest, ReusedTrialsAreCountedAsReusedAndTheirLogsSayWhereToLook) {
  auto f = Write("reuse.json", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}, {"tag", {"reuse1"}}}},
                                {"prune", false}});
  Out first = G({"submit", f, "--wait"});
  ASSERT_EQ(first.code, 1) << first.err;
  const std::string first_id = json::parse(Lines(first.out)[0])["id"].dump();
  Out again = G({"submit", f, "--wait"});
  ASSERT_EQ(again.code, 1) << again.err;
  const std::string id = json::parse(Lines(again.out)[0])["id"].dump();
  json last = json::parse(Lines(again.out).back());
  EXPECT_EQ(last["reused"], 2) << again.out;
  EXPECT_EQ(last["by_verdict"], json({{"passed", 1}, {"crashed", 1}})) << "reuse is no skip: " << again.out;
  // The table says reused, not pruned; the CSV has a column for it.
  Out st = G({"status", id});
  EXPECT_NE(st.out.find("reused 2"), std::string::npos) << st.out;
  EXPECT_EQ(st.out.find("pruned"), std::string::npos) << st.out;
  Out csv = G({"status", id, "--format", "csv"});
  EXPECT_NE(Lines(csv.out)[0].find(",reused"), std::string::npos) << csv.out;
  EXPECT_EQ(Lines(csv.out)[1].substr(Lines(csv.out)[1].rfind(',') + 1), "2") << csv.out;

  // A reused trial has no log of its own: `logs` says so and names the trial that ran.
  json reused = json::parse(G({"trials", "--sweep", id, "--verdict", "crashed", "--format", "json"}).out);
  ASSERT_EQ(reused.size(), 1u);
  json ran = json::parse(G({"trials", "--sweep", first_id, "--verdict", "crashed", "--format", "json"}).out);
  ASSERT_EQ(ran.size(), 1u);
  Out lg = G({"logs", reused[0]["id"].dump()});
  EXPECT_EQ(lg.code, 0) << lg.err;
  EXPECT_EQ(lg.out, "");
  EXPECT_NE(lg.err.find("has no log: it never ran: it took an earlier trial's verdict, crashed"), std::string::npos) << lg.err;
  EXPECT_NE(lg.err.find("gauntlet logs " + ran[0]["id"].dump()), std::string::npos) << lg.err;
}

TEST_F(CliResultsTest, LogsOfASkippedTrialNameTheTrialThatSettledIt) {
  // Four configs refused alike, two at a time: the first refusal prunes those not yet started.
  auto f = Write("skip.json", {{"suite", "fixture-cmd"},
                               {"parameters", {{"mode", {"unsupported"}}, {"tag", {"sk1", "sk2", "sk3", "sk4", "sk5", "sk6"}}}},
                               {"reuse", false}});
  Out sub = G({"submit", f, "--wait"});
  ASSERT_EQ(sub.code, 1) << sub.err;
  const std::string id = json::parse(Lines(sub.out)[0])["id"].dump();
  json skipped = json::parse(G({"trials", "--sweep", id, "--verdict", "skipped", "--format", "json"}).out);
  ASSERT_FALSE(skipped.empty()) << "nothing was pruned";
  Out lg = G({"logs", skipped[0]["id"].dump()});
  EXPECT_EQ(lg.code, 0) << lg.err;
  EXPECT_NE(lg.err.find("has no log: it was skipped, never run (pruned: trial "), std::string::npos) << lg.err;
  EXPECT_NE(lg.err.find("gauntlet logs " + skipped[0]["evidence_trial"].dump()), std::string::npos) << lg.err;
  // A trial that ran prints its log and nothing else.
  json ran = json::parse(G({"trials", "--sweep", id, "--verdict", "unsupported", "--format", "json"}).out);
  ASSERT_FALSE(ran.empty());
  Out own = G({"logs", ran[0]["id"].dump()});
  EXPECT_NE(own.out.find("no kernel image"), std::string::npos) << own.out;
  EXPECT_EQ(own.err, "");
}

TEST_F(CliResultsTest, WaitingOnATargetNoNodeCanRunExitsTwoNamingTheRequirement) {
  // The only node is a CPU one; a GPU target can never run here.
  auto f = Write("gpu.json", {{"suite", "fixture-cmd"}, {"targets", {{{"gpus", 1}}}},
                              {"parameters", {{"mode", {"pass"}}, {"tag", {"nogpu"}}}}});
  const auto t0 = std::chrono::steady_clock::now();
  Out o = G({"submit", f, "--wait"});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(o.code, 2) << o.out << o.err;
  EXPECT_LT(secs, 10.0);
  EXPECT_NE(o.err.find("requires.gpus: 1; nodes: cpu-node (cpu)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--wait-for-nodes"), std::string::npos) << o.err;
  const std::string id = json::parse(Lines(o.out)[0])["id"].dump();
  Out st = G({"status", id, "--wait"});
  EXPECT_EQ(st.code, 2) << st.err;
  EXPECT_NE(st.err.find("requires.gpus: 1"), std::string::npos) << st.err;

  // With --wait-for-nodes it waits (a node may still come) until the sweep ends: here, cancelled.
  Child waiter({GauntletBin(), "status", id, "--wait", "--wait-for-nodes"}, dir_->path() + "/waiter.log",
               {"GAUNTLET_SERVER=" + d_->url(), "HOME=" + dir_->path() + "/home"});
  std::this_thread::sleep_for(std::chrono::seconds(4));
  EXPECT_TRUE(waiter.Running()) << waiter.Log();
  EXPECT_EQ(G({"cancel", id}).code, 0);
  const int status = waiter.Wait(std::chrono::seconds(20));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << " " << waiter.Log();
}

}  // namespace
}  // namespace gauntlet::test
