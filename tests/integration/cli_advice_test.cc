// Issue 32's "what to run here" and "will this work" through a real daemon and worker on loopback:
// GET /api/v1/recommend and /check in JSON, markdown and shell, and `gauntlet best` / `gauntlet
// check` with their exit statuses, over a suite whose throughput depends on its backend and shape
// (tests/fixtures/backends_stage.py) and whose broken backend crashes.
#include "core/text_width.h"
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

class AdviceTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    CliTest::SetUpTestSuite();
    const json def = {
        {"name", "advice-moe"},
        {"parameters", {{"backend", {"cutlass", "triton", "broken"}}, {"shape", {"small", "large"}}}},
        {"stages",
         {{{"name", "serve"},
           {"kind", "command"},
           {"argv", {"python3", SourceDir() + "/tests/fixtures/backends_stage.py", "--moe-runner-backend", "{backend}",
                     "--shape={shape}", "--trial", "{trial_id}"}},
           {"env", {{"FP4_GEMM_BACKEND", "{backend}"}}}}}}};
    net::Client c(d_->url(), "");
    auto put = c.Send("PUT", "/api/v1/suites/advice-moe", def.dump());
    ASSERT_TRUE(put.ok());
    ASSERT_EQ(put->status, 201) << put->body;
    // Three real runs of each config (no reuse, no pruning): enough to measure noise.
    json s = d_->PostJson("/api/v1/sweeps", {{"suite", "advice-moe"}, {"repeats", 3}, {"reuse", false}, {"prune", false}}, 201);
    json done = d_->WaitSweep(s["id"], std::chrono::seconds(120));
    ASSERT_TRUE(done["finished"].get<bool>()) << done.dump();
  }
};

const json* Region(const json& rec, const std::string& shape) {
  for (auto& i : rec["items"])
    if (i["region"]["shape"] == shape) return &i;
  return nullptr;
}

TEST_F(AdviceTest, RecommendNamesTheFastestPassingConfigAndWhetherItBeatsTheNoise) {
  json rec = d_->GetJson("/api/v1/recommend?suite=advice-moe&by=shape");
  const json* large = Region(rec, "large");
  const json* small = Region(rec, "small");
  ASSERT_TRUE(large && small) << rec.dump();
  EXPECT_EQ((*large)["best"]["config"]["backend"], "cutlass") << large->dump();
  EXPECT_EQ((*large)["runner_up"]["config"]["backend"], "triton");
  EXPECT_EQ((*large)["decision"], "beyond_noise");
  // 100 against 99.5 with a 1% spread: the answer says either will do.
  EXPECT_EQ((*small)["decision"], "within_noise") << small->dump();
  EXPECT_EQ((*small)["configs"], 3);     // broken ran too,
  EXPECT_EQ((*small)["candidates"], 2);  // but does not pass
  const json& best = (*large)["best"];
  EXPECT_EQ(best["runs"], 3);
  EXPECT_EQ(best["reused"], 0);
  EXPECT_EQ(best["evidence"], "benchmarked");
  EXPECT_EQ(best["metric"]["n"], 3);
  EXPECT_NEAR(best["metric"]["mean"].get<double>(), 200, 2.5);
  EXPECT_EQ(best["flags"], json::array({"--moe-runner-backend", "cutlass", "--shape=large"}));
  EXPECT_EQ(best["env"], json::array({"FP4_GEMM_BACKEND=cutlass"}));
  EXPECT_NE(best["shell"].get<std::string>().find("FP4_GEMM_BACKEND=cutlass python3 "), std::string::npos);
  // The exports: markdown for an issue, a shell line for a script.
  auto md = d_->Get("/api/v1/recommend?suite=advice-moe&by=shape&format=markdown");
  EXPECT_EQ(md.status, 200);
  EXPECT_NE(md.body.find("| cpu | shape=large | `FP4_GEMM_BACKEND=cutlass --moe-runner-backend cutlass --shape=large` |"),
            std::string::npos)
      << md.body;
  auto sh = d_->Get("/api/v1/recommend?suite=advice-moe&by=shape&format=shell");
  EXPECT_NE(sh.body.find("# cpu · shape=large: beyond_noise\nFP4_GEMM_BACKEND=cutlass python3 "), std::string::npos) << sh.body;
  // A `by` that is no parameter, a format that does not exist: named.
  auto bad = d_->Get("/api/v1/recommend?suite=advice-moe&by=shap");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.body.find("\"by\""), std::string::npos) << bad.body;
  EXPECT_EQ(d_->Get("/api/v1/recommend?suite=advice-moe&format=pdf").status, 422);
  EXPECT_EQ(d_->Get("/api/v1/recommend?suite=advice-moe&sort=x").status, 400);
}

TEST_F(AdviceTest, CheckAnswersKnownPassKnownFailAndUnknownWithExitStatuses) {
  json fail = d_->GetJson("/api/v1/check?suite=advice-moe&config.backend=broken&config.shape=small");
  EXPECT_EQ(fail["known"], "fails") << fail.dump();
  EXPECT_EQ(fail["exit_code"], 1);
  EXPECT_EQ(fail["hardware"], "cpu");  // the one class the suite ran on
  EXPECT_EQ(fail["latest"]["verdict"], "crashed");
  EXPECT_EQ(fail["runs"], 3);
  ASSERT_GE(fail["nearest"].size(), 2u);
  EXPECT_EQ(fail["nearest"][0]["changed"], json::array({"backend"}));
  EXPECT_EQ(fail["nearest"][0]["config"]["shape"], "small");
  json pass = d_->GetJson("/api/v1/check?suite=advice-moe&hardware=cpu&config.backend=cutlass&config.shape=large");
  EXPECT_EQ(pass["known"], "passes");
  EXPECT_EQ(pass["evidence"], "benchmarked");
  json other = d_->GetJson("/api/v1/check?suite=advice-moe&hardware=NVIDIA%20B200&config.backend=cutlass&config.shape=large");
  EXPECT_EQ(other["known"], "unknown");
  EXPECT_EQ(other["exit_code"], 3);
  // A typo names the field; a value the parameter does not declare too.
  auto typo = d_->Get("/api/v1/check?suite=advice-moe&config.bakend=cutlass&config.shape=large");
  EXPECT_EQ(typo.status, 422);
  EXPECT_NE(typo.body.find("config.bakend"), std::string::npos) << typo.body;
  auto value = d_->Get("/api/v1/check?suite=advice-moe&config.backend=cutlas&config.shape=large");
  EXPECT_EQ(value.status, 422);
  EXPECT_NE(value.body.find("cutlass, triton, broken"), std::string::npos) << value.body;
  // The CLI's exit statuses are the pre-flight contract: 0 passes, 1 fails, 3 unknown, 2 an error.
  EXPECT_EQ(G({"check", "--suite", "advice-moe", "--set", "backend=cutlass", "--set", "shape=large"}).code, 0);
  Out f = G({"check", "--suite", "advice-moe", "--set", "backend=broken", "--set", "shape=small"});
  EXPECT_EQ(f.code, 1) << f.out << f.err;
  EXPECT_NE(f.out.find("fails: FP4_GEMM_BACKEND=broken --moe-runner-backend broken --shape=small on cpu"), std::string::npos)
      << f.out;
  EXPECT_NE(f.out.find("nearest passing:\n  FP4_GEMM_BACKEND="), std::string::npos) << f.out;
  EXPECT_EQ(G({"check", "--suite", "advice-moe", "--hardware", "B200", "--set", "backend=cutlass", "--set", "shape=large"}).code, 3);
  Out err = G({"check", "--suite", "advice-moe", "--set", "bakend=cutlass"});
  EXPECT_EQ(err.code, 2);
  EXPECT_NE(err.err.find("config.bakend"), std::string::npos) << err.err;
}

TEST_F(AdviceTest, BestPrintsATableAndExports) {
  Out t = G({"best", "--suite", "advice-moe", "--by", "shape"});
  EXPECT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("beyond_noise"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("within_noise"), std::string::npos) << t.out;
  Out sh = G({"best", "--suite", "advice-moe", "--by", "shape", "--format", "shell"});
  EXPECT_NE(sh.out.find("--moe-runner-backend cutlass --shape=large"), std::string::npos) << sh.out;
  Out md = G({"best", "--suite", "advice-moe", "--format", "markdown"});
  EXPECT_NE(md.out.find("**Best configuration per hardware**"), std::string::npos) << md.out;
}

// A metric's name and unit come from the runs whose values are reported: a later run that did not
// count (an infra error) with another metric never renames the passed runs' mean ("2400 TFLOP/s" for
// a tok/s value).
TEST_F(AdviceTest, AMetricsUnitComesFromTheRunsItsValueComesFrom) {
  const std::string flag = dir_->path() + "/second-run";
  const json def = {
      {"name", "advice-units"},
      {"parameters", {{"backend", {"cutlass"}}}},
      {"stages", {{{"name", "run"}, {"kind", "command"},
                   {"argv", {"sh", "-c", "if [ -e " + flag + " ]; then printf '%s' '{\"verdict\": \"infra_error\", \"metrics\": "
                                          "{\"tflops\": {\"value\": 2400, \"unit\": \"TFLOP/s\"}}}' > \"$GAUNTLET_RESULT_FILE\"; "
                                          "else printf '%s' '{\"metrics\": {\"tok_s\": {\"value\": 100, \"unit\": \"tok/s\"}}}' "
                                          "> \"$GAUNTLET_RESULT_FILE\"; fi"}}}}}};
  net::Client c(d_->url(), "");
  auto put = c.Send("PUT", "/api/v1/suites/advice-units", def.dump());
  ASSERT_TRUE(put.ok());
  ASSERT_EQ(put->status, 201) << put->body;
  json first = d_->WaitSweep(d_->PostJson("/api/v1/sweeps", {{"suite", "advice-units"}, {"repeats", 3}, {"reuse", false}}, 201)["id"],
                             std::chrono::seconds(120));
  std::ofstream(flag) << "1";
  json second = d_->WaitSweep(d_->PostJson("/api/v1/sweeps", {{"suite", "advice-units"}, {"reuse", false}}, 201)["id"],
                              std::chrono::seconds(120));
  ASSERT_EQ(second["by_verdict"].value("infra_error", 0), 1) << second.dump();
  json rec = d_->GetJson("/api/v1/recommend?suite=advice-units");
  ASSERT_EQ(rec["items"].size(), 1u) << rec.dump();
  const json& best = rec["items"][0]["best"];
  ASSERT_TRUE(best.is_object()) << rec.dump();
  EXPECT_EQ(best["metric"]["name"], "tok_s") << rec.dump();
  EXPECT_EQ(best["metric"]["unit"], "tok/s") << rec.dump();
  EXPECT_DOUBLE_EQ(best["metric"]["mean"].get<double>(), 100.0);
  Out t = G({"best", "--suite", "advice-units"});
  EXPECT_NE(t.out.find("100 tok/s"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("TFLOP/s"), std::string::npos) << t.out;
}

// No answer is cut: a table is fitted to the terminal (cells cut to their column) where it can be, or
// wrapped (each row a block of whole "head: cell" lines) where it cannot; the launch flags follow
// whole, to paste; --wide prints every cell whole.
TEST_F(AdviceTest, ATerminalsWidthNeverCutsTheLaunchLine) {
  const std::string launch = "cpu shape=large: FP4_GEMM_BACKEND=cutlass --moe-runner-backend cutlass --shape=large\n";
  for (const char* columns : {"COLUMNS=60", "COLUMNS=110"}) {
    Out t = G({"best", "--suite", "advice-moe", "--by", "shape"}, {columns});
    EXPECT_EQ(t.code, 0) << t.err;
    const size_t width = std::stoul(std::string(columns).substr(8));
    std::istringstream lines(t.out);
    std::string line;
    while (std::getline(lines, line))
      EXPECT_TRUE(DisplayWidth(line) <= width || line.find("…") == std::string::npos) << columns << ": cut and too wide: " << line;
    EXPECT_NE(t.out.find("to run (whole):\n  " + launch), std::string::npos) << columns << "\n" << t.out;
  }
  // 60 columns cannot hold eight columns: wrapped, whole.
  Out narrow = G({"best", "--suite", "advice-moe", "--by", "shape"}, {"COLUMNS=60"});
  EXPECT_NE(narrow.out.find("\nrun:       FP4_GEMM_BACKEND=cutlass --moe-runner-backend cutlass --shape=large\n"), std::string::npos)
      << narrow.out;
  Out wide = G({"best", "--suite", "advice-moe", "--by", "shape", "--wide"}, {"COLUMNS=60"});
  EXPECT_EQ(wide.code, 0) << wide.err;
  EXPECT_NE(wide.out.find("FP4_GEMM_BACKEND=cutlass --moe-runner-backend cutlass --shape=large"), std::string::npos) << wide.out;
  EXPECT_EQ(wide.out.find("…"), std::string::npos) << "a cell was cut:\n" << wide.out;
}

}  // namespace
}  // namespace gauntlet::test

namespace gauntlet::test {
namespace {

TEST_F(AdviceTest, DriftHoldsTheDeclaredSupportAgainstTheRuns) {
  net::Client c(d_->url(), "");
  // A typo in a rule names the rule and the field; nothing is stored.
  auto typo = c.Send("PUT", "/api/v1/suites/advice-moe/declared",
                     R"({"source": {"url": "https://example.org/support"}, "rules": [{"when": {"bakend": "triton"}, "supported": false}]})");
  ASSERT_TRUE(typo.ok());
  EXPECT_EQ(typo->status, 422) << typo->body;
  EXPECT_NE(typo->body.find("rules[0].when.bakend"), std::string::npos) << typo->body;
  EXPECT_EQ(d_->Get("/api/v1/drift?suite=advice-moe").status, 404);
  const std::string decl = dir_->Write("declared.yaml",
                                       "source: {url: 'https://example.org/support', version: '1.2'}\n"
                                       "rules:\n"
                                       "  - {when: {backend: broken}, supported: true}\n"
                                       "  - {when: {backend: triton}, hardware: cpu, supported: false, note: GPU only}\n"
                                       "  - {when: {backend: cutlass, shape: large}, supported: true}\n");
  Out put = G({"declare", "--suite", "advice-moe", decl});
  ASSERT_EQ(put.code, 0) << put.err;
  EXPECT_NE(put.out.find("3 rules from https://example.org/support"), std::string::npos) << put.out;
  json drift = d_->GetJson("/api/v1/drift?suite=advice-moe");
  EXPECT_EQ(drift["summary"]["supported_but_failing"], 2) << drift.dump();   // broken, both shapes
  EXPECT_EQ(drift["summary"]["unsupported_but_passing"], 2);                 // triton, both shapes
  EXPECT_EQ(drift["summary"]["undeclared"], 1);                              // cutlass small
  EXPECT_EQ(drift["summary"]["agrees"], 1);                                  // cutlass large
  ASSERT_EQ(drift["items"].size(), 5u);
  EXPECT_EQ(drift["items"][0]["kind"], "supported_but_failing");
  EXPECT_EQ(drift["items"][0]["observed"]["latest"]["verdict"], "crashed");
  EXPECT_EQ(drift["items"][2]["kind"], "unsupported_but_passing");
  EXPECT_EQ(drift["items"][2]["declared"]["note"], "GPU only");
  EXPECT_EQ(drift["items"][2]["observed"]["metric"]["n"], 3);
  EXPECT_EQ(d_->GetJson("/api/v1/drift?suite=advice-moe&agrees=1")["items"].size(), 6u);
  // Markdown for the upstream issue names the source and its version, the hardware and the trials.
  auto md = d_->Get("/api/v1/drift?suite=advice-moe&format=markdown");
  EXPECT_NE(md.body.find("Source: https://example.org/support (version 1.2)"), std::string::npos) << md.body;
  EXPECT_NE(md.body.find("- cpu: `FP4_GEMM_BACKEND=broken --moe-runner-backend broken --shape=large`: declared supported, but crashed"),
            std::string::npos)
      << md.body;
  Out table = G({"drift", "--suite", "advice-moe"});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("2 supported but failing, 2 unsupported but passing, 1 undeclared, 1 agree"), std::string::npos) << table.out;
  // The check says what the table claims beside what ran.
  json chk = d_->GetJson("/api/v1/check?suite=advice-moe&config.backend=triton&config.shape=small");
  EXPECT_EQ(chk["known"], "passes");
  EXPECT_EQ(chk["declared"]["supported"], false) << chk.dump();
  json never = d_->GetJson("/api/v1/check?suite=advice-moe&hardware=NVIDIA%20B200&config.backend=broken&config.shape=small");
  EXPECT_EQ(never["known"], "unknown");
  EXPECT_EQ(never["evidence"], "declared");
}

}  // namespace
}  // namespace gauntlet::test
