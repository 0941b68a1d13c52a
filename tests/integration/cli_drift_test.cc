// Issue 32's drift and evidence through a real daemon and worker on loopback: a suite whose first
// stage is a probe that asks the framework about each configuration (tests/fixtures/
// sdpa_probe_stage.py, a CPU stand-in printing what PyTorch's can_use_*_attention(debug=True)
// prints), its answers as the framework's declared support in GET /api/v1/drift, /check and the
// matrix's drift and evidence layers, the same through `gauntlet drift`, `check` and `matrix
// --layer`, and a broken probe as an infra_error that names what was wrong.
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

json ProbeSuite(const std::string& name) {
  const std::string fx = SourceDir() + "/tests/fixtures/sdpa_probe_stage.py";
  return {{"name", name},
          {"parameters",
           {{"backend", {"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"}},
            {"head_dim", {"64", "512"}},
            {"answer", {{"values", {"good", "garbage", "crash", "none", "hang"}}, {"default", "good"}}}}},
          {"fingerprint", {{"argv", {"python3", fx, "--fingerprint"}}}},
          {"stages",
           {{{"name", "ask"}, {"kind", "probe"}, {"framework", "torch"},
             {"argv", {"python3", fx, "--probe", "--backend", "{backend}", "--head-dim", "{head_dim}", "--answer", "{answer}"}}},
            {{"name", "sdpa"}, {"kind", "command"},
             {"argv", {"python3", fx, "--run", "--backend", "{backend}", "--head-dim", "{head_dim}", "--trial", "{trial_id}"}}}}},
          {"signatures",
           {{{"match", "No available kernel"}, {"verdict", "unsupported"}},
            {{"match", "sdpa_fixture: over tolerance"}, {"verdict", "wrong_output"}}}}};
}

class DriftTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    CliTest::SetUpTestSuite();
    net::Client c(d_->url(), "");
    for (const char* name : {"probe-sdpa", "probe-broken"}) {
      json def = ProbeSuite(name);
      // A probe that never answers meets its own limit (the others answer in well under it).
      if (std::string(name) == "probe-broken") def["stages"][0]["timeout_s"] = 5;
      auto put = c.Send("PUT", std::string("/api/v1/suites/") + name, def.dump());
      ASSERT_TRUE(put.ok());
      ASSERT_EQ(put->status, 201) << put->body;
    }
    // Two real runs of each config: MATH and FLASH at 64 pass twice with a metric (benchmarked).
    json s = d_->PostJson("/api/v1/sweeps", {{"suite", "probe-sdpa"}, {"repeats", 2}, {"reuse", false}, {"prune", false}}, 201);
    json done = d_->WaitSweep(s["id"], std::chrono::seconds(120));
    ASSERT_TRUE(done["finished"].get<bool>()) << done.dump();
  }
};

const json* Item(const json& drift, const std::string& backend, const std::string& head_dim) {
  for (auto& i : drift["items"])
    if (i["config"]["backend"] == backend && i["config"]["head_dim"] == head_dim) return &i;
  return nullptr;
}

const json* CellAt(const json& m, const std::string& row, const std::string& col) {
  for (auto& c : m["cells"])
    if (c["row"][0] == row && c["col"] == col) return &c;
  return nullptr;
}

TEST_F(DriftTest, TheFrameworksOwnAnswersAreHeldAgainstTheRuns) {
  // No table was PUT: the probe's answers alone are the declaration.
  json drift = d_->GetJson("/api/v1/drift?suite=probe-sdpa&agrees=1");
  EXPECT_TRUE(drift["source"].is_null()) << drift.dump();
  EXPECT_EQ(drift["framework_claims"], 6);
  EXPECT_EQ(drift["summary"]["supported_but_failing"], 1) << drift.dump();
  EXPECT_EQ(drift["summary"]["unsupported_but_passing"], 1);
  EXPECT_EQ(drift["summary"]["undeclared"], 0);
  EXPECT_EQ(drift["summary"]["agrees"], 4);
  const json* wrong = Item(drift, "EFFICIENT_ATTENTION", "64");
  ASSERT_TRUE(wrong) << drift.dump();
  EXPECT_EQ((*wrong)["kind"], "supported_but_failing");
  EXPECT_EQ((*wrong)["framework"]["supported"], true);
  EXPECT_EQ((*wrong)["framework"]["framework"], "torch");
  EXPECT_EQ((*wrong)["framework"]["version"], "2.11.0+fixture");
  EXPECT_EQ((*wrong)["observed"]["latest"]["verdict"], "wrong_output");
  EXPECT_EQ((*wrong)["evidence"], "started");
  const json* big = Item(drift, "EFFICIENT_ATTENTION", "512");
  ASSERT_TRUE(big);
  EXPECT_EQ((*big)["kind"], "unsupported_but_passing");
  EXPECT_NE((*big)["framework"]["reason"].get<std::string>().find("at most 256"), std::string::npos) << big->dump();
  EXPECT_EQ((*big)["observed"]["metric"]["n"], 2);
  // PyTorch said no to flash at 512, and flash refused: agreement, with the framework's words.
  EXPECT_EQ((*Item(drift, "FLASH_ATTENTION", "512"))["kind"], "agrees");
  auto md = d_->Get("/api/v1/drift?suite=probe-sdpa&format=markdown");
  EXPECT_NE(md.body.find("declared by torch 2.11.0+fixture unsupported, but passed 2/2 runs"), std::string::npos) << md.body;
  EXPECT_NE(md.body.find("the framework said: Mem efficient attention requires"), std::string::npos) << md.body;

  Out table = G({"drift", "--suite", "probe-sdpa"});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("1 supported but failing, 1 unsupported but passing, 0 undeclared, 4 agree"), std::string::npos)
      << table.out;
  // The check says what the framework said beside what ran, with the evidence level of the answer.
  Out chk = G({"check", "--suite", "probe-sdpa", "--set", "backend=EFFICIENT_ATTENTION", "--set", "head_dim=512"});
  EXPECT_EQ(chk.code, 0) << chk.out << chk.err;  // it passes, whatever was declared
  EXPECT_NE(chk.out.find("declared by framework torch 2.11.0+fixture: unsupported (Mem efficient attention"), std::string::npos)
      << chk.out;
  json j = d_->GetJson("/api/v1/check?suite=probe-sdpa&config.backend=MATH&config.head_dim=64");
  EXPECT_EQ(j["framework"]["supported"], true) << j.dump();
  EXPECT_EQ(j["drift"], "agrees");
  EXPECT_EQ(j["evidence"], "benchmarked");
}

TEST_F(DriftTest, TheMatrixLayersSayTheDriftAndTheEvidenceOfEachCell) {
  const std::string q = "/api/v1/matrix?suite=probe-sdpa&rows=backend&cols=head_dim";
  json m = d_->GetJson(q + "&layer=drift");
  EXPECT_EQ(m["layer"], "drift");
  const json* wrong = CellAt(m, "EFFICIENT_ATTENTION", "64");
  ASSERT_TRUE(wrong) << m.dump();
  EXPECT_EQ((*wrong)["drift"]["kind"], "supported_but_failing");
  EXPECT_EQ((*wrong)["drift"]["declared_by"], json::array({"framework"}));
  EXPECT_NE((*wrong)["drift"]["signature"].get<std::string>().find("wrong_output"), std::string::npos) << wrong->dump();
  const json* big = CellAt(m, "EFFICIENT_ATTENTION", "512");
  ASSERT_TRUE(big);
  EXPECT_EQ((*big)["drift"]["kind"], "unsupported_but_passing");
  EXPECT_EQ((*big)["drift"]["metric"]["unit"], "TFLOP/s");
  EXPECT_EQ((*CellAt(m, "MATH", "64"))["drift"]["kind"], "agrees");

  json e = d_->GetJson(q + "&layer=evidence");
  EXPECT_EQ((*CellAt(e, "MATH", "64"))["evidence"], "benchmarked") << e.dump();
  EXPECT_EQ((*CellAt(e, "FLASH_ATTENTION", "512"))["evidence"], "started");
  EXPECT_EQ((*CellAt(e, "EFFICIENT_ATTENTION", "64"))["evidence_counts"]["started"], 1);
  // The same judgement as the drift answer: the evidence of each item there is the cell's here.
  json drift = d_->GetJson("/api/v1/drift?suite=probe-sdpa&agrees=1");
  for (auto& i : drift["items"]) {
    const json* c = CellAt(e, i["config"]["backend"].get<std::string>(), i["config"]["head_dim"].get<std::string>());
    ASSERT_TRUE(c);
    EXPECT_EQ((*c)["evidence"], i["evidence"]) << i.dump();
  }
  auto csv = d_->Get(q + "&layer=drift&format=csv");
  EXPECT_NE(csv.body.find("drift,drift_config,drift_detail"), std::string::npos) << csv.body;
  EXPECT_NE(csv.body.find("unsupported_but_passing"), std::string::npos);

  Out dt = G({"matrix", "--suite", "probe-sdpa", "--rows", "backend", "--cols", "head_dim", "--layer", "drift", "--wide"});
  EXPECT_EQ(dt.code, 0) << dt.err;
  EXPECT_NE(dt.out.find("[supported_but_failing (framework): wrong_output"), std::string::npos) << dt.out;
  EXPECT_NE(dt.out.find("[unsupported_but_passing (framework): "), std::string::npos) << dt.out;
  Out ev = G({"matrix", "--suite", "probe-sdpa", "--rows", "backend", "--cols", "head_dim", "--layer", "evidence", "--wide"});
  EXPECT_EQ(ev.code, 0) << ev.err;
  EXPECT_NE(ev.out.find("[evidence: benchmarked]"), std::string::npos) << ev.out;

  // A layer judges one suite version; an unknown layer is named.
  auto all = d_->Get(q + "&layer=drift&suite_version=all");
  EXPECT_EQ(all.status, 422) << all.body;
  EXPECT_NE(all.body.find("suite_version"), std::string::npos);
  auto bogus = d_->Get(q + "&layer=vibes");
  EXPECT_EQ(bogus.status, 422);
  EXPECT_NE(bogus.body.find("\"layer\""), std::string::npos) << bogus.body;
}

TEST_F(DriftTest, ABrokenProbeIsAnInfraErrorThatSaysWhatWasWrong) {
  // Three broken probes, the most infra errors in a row a node takes before it is quarantined
  // (docs/SCHEDULING.md): a probe that cannot answer counts against the node like any
  // infrastructure failure, so it is the last thing this worker runs.
  json s = d_->PostJson("/api/v1/sweeps",
                        {{"suite", "probe-broken"},
                         {"parameters", {{"backend", {"MATH"}}, {"head_dim", {"64"}}, {"answer", {"garbage", "crash", "hang"}}}},
                         {"max_attempts", 1}, {"reuse", false}, {"prune", false}},
                        201);
  json done = d_->WaitSweep(s["id"], std::chrono::seconds(120));
  ASSERT_TRUE(done["finished"].get<bool>()) << done.dump();
  json trials = d_->GetJson("/api/v1/trials?sweep=" + s["id"].dump());
  std::map<std::string, json> by;
  for (auto& t : trials["items"]) by[t["config"]["answer"].get<std::string>()] = t;
  ASSERT_EQ(by.size(), 3u) << trials.dump();
  EXPECT_EQ(by["garbage"]["verdict"], "infra_error");
  EXPECT_EQ(by["garbage"]["signature"], "infra_error:probe_answer");
  EXPECT_EQ(by["crash"]["signature"], "infra_error:probe_failed");
  EXPECT_EQ(by["hang"]["signature"], "infra_error:probe_timeout");
  json t = d_->GetJson("/api/v1/trials/" + by["garbage"]["id"].dump());
  EXPECT_NE(t.dump().find("not a JSON object"), std::string::npos) << t.dump();
  // Its log says what the stage came to, after the process's own end line.
  const std::string log = d_->Get("/api/v1/trials/" + by["garbage"]["id"].dump() + "/log").body;
  EXPECT_NE(log.find("gauntlet: probe ask could not answer, so the stage is infra_error:probe_answer: "), std::string::npos) << log;
  EXPECT_NE(d_->GetJson("/api/v1/trials/" + by["crash"]["id"].dump()).dump().find("exited 1 instead of answering"), std::string::npos);
  // Nothing was heard, so nothing is declared: the drift answer has no claim to hold.
  EXPECT_EQ(d_->Get("/api/v1/drift?suite=probe-broken").status, 404);
  EXPECT_EQ(d_->Get("/api/v1/health").status, 200);
}

}  // namespace
}  // namespace gauntlet::test
