// The bring-up scenario end to end: real daemon, real workers declared as an sm_120 and an sm_100
// node, and a fixture backend (suites/demo/backend.py, run by tests/fixtures/bringup/fixture-bringup.json) that fails the way MoE-runner and
// FP4-GEMM backends fail on Blackwell. Checks the matrix cell by cell, what pruning skipped and on
// what evidence, that nothing it settled ever started, reuse, retry and fair share.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/integration/cli_fixture.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

const char* kRtx = "NVIDIA RTX PRO 6000 Blackwell Server Edition · sm_120 · x1";
const char* kB200 = "NVIDIA B200 · sm_100 · x1";

std::string BringupSuites() { return SourceDir() + "/tests/fixtures/bringup"; }

json OneGpu(const std::string& name, const std::string& cc) {
  return {{"gpus", {{{"index", 0}, {"name", name}, {"uuid", "GPU-" + cc}, {"compute_capability", cc},
                     {"memory_mb", 97887}}}}};
}

// Every trial of a sweep, in full (the list omits results).
std::map<int64_t, json> BringupTrials(Daemon& d, int64_t sweep) {
  std::map<int64_t, json> out;
  json j = d.GetJson("/api/v1/trials?limit=1000&sweep=" + std::to_string(sweep));
  for (auto& t : j["items"]) out[t["id"].get<int64_t>()] = d.GetJson("/api/v1/trials/" + t["id"].dump());
  return out;
}

// The starts the fixture backend logged: trial id -> stages started, in order.
std::map<int64_t, std::vector<std::string>> Starts(const std::string& path) {
  std::map<int64_t, std::vector<std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object()) out[std::stoll(j["trial"].get<std::string>())].push_back(j["stage"]);
  }
  return out;
}

std::string Key(const json& t) {
  return t["config"]["moe_runner_backend"].get<std::string>() + "|" + t["config"]["fp4_gemm_backend"].get<std::string>();
}

class Bringup : public ::testing::Test {
 protected:
  TempDir dir;
  std::unique_ptr<Daemon> d;
  std::unique_ptr<Child> rtx, b200;
  std::string startlog;

  void SetUp() override {
    startlog = dir.path() + "/starts.jsonl";
    d = std::make_unique<Daemon>(dir.path(), BringupSuites());
  }
  // One GPU per node: each node runs its trials one at a time, in queue order, so what pruning
  // settles is fixed by the suite, not by timing.
  void StartFleet() {
    rtx = StartWorker(dir.path(), d->url(), "rtx-node", OneGpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"));
    b200 = StartWorker(dir.path(), d->url(), "b200-node", OneGpu("NVIDIA B200", "10.0"));
    ASSERT_TRUE(WaitFor([&] { return d->GetJson("/api/v1/nodes")["items"].size() == 2; }));
  }
  json Sweep(json extra = json::object()) {
    json req = {{"suite", "fixture-bringup"},
                {"name", "bringup"},
                {"parameters", {{"startlog", {startlog}}}},
                {"targets", {{{"arch", "sm_120"}}, {{"arch", "sm_100"}}}}};
    req.update(extra);
    json created = d->PostJson("/api/v1/sweeps", req, 201);
    EXPECT_EQ(created["trials"], 24) << created.dump();
    return d->WaitSweep(created["id"], std::chrono::seconds(120));
  }
};

// What sm_120 does with each (moe, gemm) config; sm_100 passes all twelve.
const std::map<std::string, std::string> kSm120 = {
    {"flashinfer_cutlass|flashinfer_cutlass", "passed"},
    {"flashinfer_cutlass|flashinfer_cudnn", "wrong_output"},     // "!!!!" from the cuDNN FP4 GEMM
    {"flashinfer_cutlass|flashinfer_trtllm", "skipped"},         // by the gemm refusal
    {"flashinfer_trtllm|flashinfer_cutlass", "skipped"},         // by the moe refusal
    {"flashinfer_trtllm|flashinfer_cudnn", "unsupported"},       // moe stage: SM100-only
    {"flashinfer_trtllm|flashinfer_trtllm", "skipped"},          // by the moe refusal (it ran first)
    {"flashinfer_cutedsl|flashinfer_cutlass", "crashed"},        // Error Internal at the first forward
    {"flashinfer_cutedsl|flashinfer_cudnn", "crashed"},
    {"flashinfer_cutedsl|flashinfer_trtllm", "unsupported"},     // gemm stage: sm_100a only
    {"triton|flashinfer_cutlass", "passed"},
    {"triton|flashinfer_cudnn", "wrong_output"},
    {"triton|flashinfer_trtllm", "skipped"},
};

TEST_F(Bringup, TheMatrixPruningAndWhatNeverStarted) {
  StartFleet();
  json sw = Sweep();
  const int64_t id = sw["id"];
  EXPECT_EQ(sw["by_verdict"], json({{"passed", 14}, {"wrong_output", 2}, {"unsupported", 2}, {"crashed", 2}, {"skipped", 4}}))
      << sw.dump();
  // Pruning saved four trials of the suite's estimated 900 s on one GPU: one GPU-hour.
  EXPECT_EQ(sw["pruned"]["trials"], 4) << sw.dump();
  EXPECT_NEAR(sw["pruned"]["gpu_hours_saved"].get<double>(), 1.0, 1e-9);

  // The matrix, cell by cell.
  json m = d->GetJson("/api/v1/matrix?suite=fixture-bringup&rows=moe_runner_backend,fp4_gemm_backend&cols=hardware&sweep=" +
                      std::to_string(id));
  EXPECT_EQ(m["col_keys"], json({kB200, kRtx}));
  ASSERT_EQ(m["cells"].size(), 24u) << m.dump();
  for (auto& c : m["cells"]) {
    const std::string key = c["row"][0].get<std::string>() + "|" + c["row"][1].get<std::string>();
    const bool sm120 = c["col"] == kRtx;
    const std::string want = sm120 ? kSm120.at(key) : "passed";
    EXPECT_EQ(c["verdict"], want) << key << " on " << c["col"];
    if (want == "passed") {
      ASSERT_TRUE(c["metric"].is_object()) << c.dump();
      EXPECT_EQ(c["metric"]["unit"], "tok/s");
      EXPECT_GT(c["metric"]["value"].get<double>(), 0);
    }
  }

  auto trials = BringupTrials(*d, id);
  auto starts = Starts(startlog);
  std::map<std::string, json> on120;  // config -> trial, sm_120 only
  for (auto& [tid, t] : trials)
    if (t["hardware"] == kRtx) on120[Key(t)] = t;
  ASSERT_EQ(on120.size(), 12u);
  auto sig = [&](const std::string& k) { return on120[k]["signature"].get<std::string>(); };
  EXPECT_EQ(sig("flashinfer_cutedsl|flashinfer_trtllm"), "unsupported:fp4_gemm_sm100a_only");
  EXPECT_EQ(sig("flashinfer_trtllm|flashinfer_cudnn"), "unsupported:trtllm_moe_sm100_only");
  EXPECT_EQ(sig("flashinfer_cutedsl|flashinfer_cutlass").rfind("crashed:RuntimeError:Error Internal", 0), 0u)
      << sig("flashinfer_cutedsl|flashinfer_cutlass");
  EXPECT_EQ(sig("flashinfer_cutlass|flashinfer_cudnn").rfind("wrong_output:", 0), 0u) << sig("flashinfer_cutlass|flashinfer_cudnn");

  // Skipped trials name their evidence trial and the gate key, and never started.
  const int64_t gemm_evidence = on120["flashinfer_cutedsl|flashinfer_trtllm"]["id"];
  const int64_t moe_evidence = on120["flashinfer_trtllm|flashinfer_cudnn"]["id"];
  for (auto& [key, t] : on120) {
    if (t["verdict"] != "skipped") continue;
    // The sweep settles first (docs/SCHEDULING.md "Order within a sweep"): on the one sm_120 GPU
    // the first four trials open every value of both backends (gemm/moe cutlass/cutlass,
    // cutlass/triton, cudnn/trtllm, trtllm/cutedsl, in grid order). The third is the trtllm MoE
    // refusal, which skips both other trtllm-MoE configs; the fourth the trtllm GEMM refusal, which
    // skips the rest of its column.
    const bool by_moe = t["config"]["moe_runner_backend"] == "flashinfer_trtllm";
    EXPECT_EQ(t["evidence_trial"], by_moe ? moe_evidence : gemm_evidence) << t.dump();
    EXPECT_EQ(t["signature"], by_moe ? "skipped:unsupported:trtllm_moe_sm100_only" : "skipped:unsupported:fp4_gemm_sm100a_only");
    const std::string ev = t["result"]["evidence"];
    EXPECT_NE(ev.find("trial " + std::to_string(by_moe ? moe_evidence : gemm_evidence)), std::string::npos) << ev;
    EXPECT_NE(ev.find(by_moe ? "key moe_runner_backend=flashinfer_trtllm" : "key fp4_gemm_backend=flashinfer_trtllm"),
              std::string::npos) << ev;
    EXPECT_EQ(t["result"]["failing_stage"], by_moe ? "moe" : "gemm");
    EXPECT_TRUE(t["started_at"].is_null()) << t.dump();
    EXPECT_TRUE(t["node"].is_null()) << t.dump();
    EXPECT_EQ(t["attempt"], 0);
    EXPECT_FALSE(starts.count(t["id"].get<int64_t>())) << "pruning settled trial " << t["id"] << " but it started";
  }

  // Cheap stages first, and a failed stage ends the trial: the gemm refusal never reached moe or
  // serve, the moe refusal never reached serve; everything that ran started gemm first.
  EXPECT_EQ(starts[gemm_evidence], std::vector<std::string>{"gemm"});
  EXPECT_EQ(starts[moe_evidence], (std::vector<std::string>{"gemm", "moe"}));
  for (auto& [tid, t] : trials) {
    if (t["verdict"] == "skipped") continue;
    ASSERT_TRUE(starts.count(tid)) << t.dump();
    EXPECT_EQ(starts[tid].front(), "gemm");
    const bool served = std::find(starts[tid].begin(), starts[tid].end(), "serve") != starts[tid].end();
    EXPECT_EQ(served, t["result"]["failing_stage"] == "" || t["result"]["failing_stage"] == "serve") << t.dump();
    EXPECT_EQ(t["node"], t["hardware"] == kRtx ? "rtx-node" : "b200-node");
  }
  EXPECT_EQ(starts.size(), 20u);  // 24 trials, 4 skipped
}

TEST_F(Bringup, ASecondIdenticalSweepRunsNothingAndReuseFalseRunsAgain) {
  StartFleet();
  json first = Sweep();
  const size_t ran = Starts(startlog).size();
  ASSERT_EQ(ran, 20u);
  std::map<std::string, json> before;  // (config, hardware) -> trial of the first sweep
  for (auto& [tid, t] : BringupTrials(*d, first["id"])) before[Key(t) + "@" + t["hardware"].get<std::string>()] = t;

  json second = Sweep();
  EXPECT_EQ(Starts(startlog).size(), ran) << "a repeated sweep started trials";
  EXPECT_EQ(second["by_verdict"], first["by_verdict"]);
  for (auto& [tid, t] : BringupTrials(*d, second["id"])) {
    const json& was = before[Key(t) + "@" + t["hardware"].get<std::string>()];
    EXPECT_EQ(t["verdict"], was["verdict"]) << t.dump();
    EXPECT_TRUE(t["started_at"].is_null()) << t.dump();
    ASSERT_TRUE(t["evidence_trial"].is_number_integer()) << t.dump();
    const int64_t ev = t["evidence_trial"];
    if (was["verdict"] == "skipped") {
      // Pruned again, on the reused verdict of this sweep's own trial, which links to the first run.
      EXPECT_EQ(d->GetJson("/api/v1/trials/" + std::to_string(ev))["evidence_trial"], was["evidence_trial"]);
    } else {
      EXPECT_EQ(ev, was["id"].get<int64_t>()) << t.dump();
      EXPECT_NE(t["result"]["evidence"].get<std::string>().find("reused the verdict of trial " + was["id"].dump()),
                std::string::npos);
    }
  }

  json third = Sweep({{"reuse", false}});
  EXPECT_EQ(third["by_verdict"], first["by_verdict"]);
  auto starts = Starts(startlog);
  EXPECT_EQ(starts.size(), 2 * ran);
  for (auto& [tid, t] : BringupTrials(*d, third["id"]))
    EXPECT_EQ(starts.count(tid), t["verdict"] == "skipped" ? 0u : 1u) << t.dump();
}

TEST_F(Bringup, RetryRequeuesInfraErrorsAndTimeoutsOnly) {
  // A node driven by hand through the worker protocol, so each verdict is chosen, not provoked.
  json reg = d->PostJson("/api/v1/nodes/register", {{"name", "manual"}, {"inventory", OneGpu("NVIDIA B200", "10.0")}});
  const std::string node = reg["node"].dump();
  json sweep = d->PostJson("/api/v1/sweeps",
                           {{"suite", "fixture-bringup"}, {"max_attempts", 1}, {"targets", {{{"arch", "sm_100"}}}},
                            {"parameters", {{"moe_runner_backend", {"flashinfer_cutlass"}},
                                            {"fp4_gemm_backend", {"flashinfer_cutlass", "flashinfer_cudnn", "flashinfer_trtllm"}}}}},
                           201);
  const std::string sid = sweep["id"].dump();
  std::map<int64_t, std::string> verdict_of;
  const std::vector<std::string> verdicts = {"infra_error", "timeout", "passed"};
  for (auto& v : verdicts) {
    json g = d->PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}, {"free_gpus", {0}}});
    ASSERT_TRUE(g.contains("lease")) << g.dump();
    verdict_of[g["trial"].get<int64_t>()] = v;
    json rep = {{"verdict", v}, {"signature", v + ":by_hand"}, {"failing_stage", "gemm"}};
    EXPECT_EQ(d->Post("/api/v1/leases/" + g["lease"].get<std::string>() + "/result", rep.dump()).status, 200);
  }
  json done = d->WaitSweep(sweep["id"]);
  EXPECT_EQ(done["by_verdict"], json({{"infra_error", 1}, {"timeout", 1}, {"passed", 1}})) << done.dump();

  json retried = d->PostJson("/api/v1/sweeps/" + sid + "/retry", json::object());
  EXPECT_EQ(retried["requeued"], 2);
  std::set<int64_t> again;
  for (int i = 0; i < 2; ++i) {
    json g = d->PostJson("/api/v1/nodes/" + node + "/lease", {{"wait_s", 0}, {"free_gpus", {0}}});
    ASSERT_TRUE(g.contains("lease")) << g.dump();
    again.insert(g["trial"].get<int64_t>());
    EXPECT_EQ(g["attempt"], 1);  // attempts start over
    EXPECT_EQ(d->Post("/api/v1/leases/" + g["lease"].get<std::string>() + "/result", json{{"verdict", "passed"}}.dump()).status,
              200);
  }
  std::set<int64_t> failed;
  for (auto& [t, v] : verdict_of)
    if (v != "passed") failed.insert(t);
  EXPECT_EQ(again, failed);  // the passed trial stayed as it was
  EXPECT_EQ(d->Post("/api/v1/nodes/" + node + "/lease", json{{"wait_s", 0}, {"free_gpus", {0}}}.dump()).status, 204)
      << "nothing else is queued";
  EXPECT_EQ(d->WaitSweep(sweep["id"])["by_verdict"], json({{"passed", 3}}));
}

TEST_F(Bringup, ATenTrialSweepFinishesLongBeforeABigOneSubmittedEarlier) {
  b200 = StartWorker(dir.path(), d->url(), "b200-node", OneGpu("NVIDIA B200", "10.0"));
  ASSERT_TRUE(WaitFor([&] { return d->GetJson("/api/v1/nodes")["items"].size() == 1; }));
  // No reuse (repeats of one config would settle each other) and no pruning: every trial runs.
  json common = {{"targets", {{{"arch", "sm_100"}}}}, {"reuse", false}, {"prune", false}, {"suite", "fixture-bringup"}};
  json big_req = common;
  big_req["repeats"] = 10;  // 12 configs x 10 = 120 trials
  json big = d->PostJson("/api/v1/sweeps", big_req, 201);
  json small_req = common;
  small_req["parameters"] = {{"moe_runner_backend", {"flashinfer_cutlass", "triton"}}, {"fp4_gemm_backend", {"flashinfer_cutlass"}}};
  small_req["repeats"] = 5;  // 10 trials
  json small = d->PostJson("/api/v1/sweeps", small_req, 201);
  ASSERT_EQ(big["trials"], 120);
  ASSERT_EQ(small["trials"], 10);
  d->WaitSweep(small["id"], std::chrono::seconds(120));
  d->PostJson("/api/v1/sweeps/" + big["id"].dump() + "/cancel", json::object());

  std::vector<int64_t> small_starts, big_starts;
  for (auto& [tid, t] : BringupTrials(*d, small["id"])) {
    EXPECT_EQ(t["verdict"], "passed") << t.dump();
    small_starts.push_back(t["started_at"]);
  }
  for (auto& [tid, t] : BringupTrials(*d, big["id"]))
    if (t["started_at"].is_number_integer()) big_starts.push_back(t["started_at"]);
  const int64_t first = *std::min_element(small_starts.begin(), small_starts.end());
  const int64_t last = *std::max_element(small_starts.begin(), small_starts.end());
  // One GPU, so one trial at a time: once the small sweep arrives the two alternate, so at most
  // one big trial starts between two small ones, and most of the big sweep was still waiting.
  const auto between = std::count_if(big_starts.begin(), big_starts.end(), [&](int64_t s) { return s > first && s < last; });
  EXPECT_LE(between, 10) << "the big sweep took " << between << " turns while the small one waited";
  EXPECT_LT(big_starts.size(), 60u) << "the small sweep finished only after half of the big one";
}

TEST_F(Bringup, ANodeThatTwoPricedTargetsFitRunsTheCheaperTargetFirstAndThePriceWeighsTheSavings) {
  // One B200 driven by hand; both targets fit it. The cheaper one is listed second: the order
  // comes from the price (1 GPU x price x the suite's 900 s), not from the list.
  json reg = d->PostJson("/api/v1/nodes/register", {{"name", "manual"}, {"inventory", OneGpu("NVIDIA B200", "10.0")}});
  const std::string node = reg["node"].dump();
  json sweep = d->PostJson(
      "/api/v1/sweeps",
      {{"suite", "fixture-bringup"}, {"reuse", false},
       {"targets", {{{"arch", "sm_100"}, {"cost_per_gpu_hour", 6.0}}, {{"gpu_name", "NVIDIA B200*"}, {"cost_per_gpu_hour", 1.5}}}},
       {"parameters", {{"moe_runner_backend", {"flashinfer_cutlass", "triton"}},
                       {"fp4_gemm_backend", {"flashinfer_cutlass", "flashinfer_trtllm"}}}}},
      201);
  ASSERT_EQ(sweep["trials"], 8);
  std::vector<int> targets;
  for (;;) {
    auto r = d->Post("/api/v1/nodes/" + node + "/lease", json{{"wait_s", 0}, {"free_gpus", {0}}}.dump());
    if (r.status == 204) break;
    ASSERT_EQ(r.status, 200) << r.body;
    json g = json::parse(r.body);
    json t = d->GetJson("/api/v1/trials/" + g["trial"].dump());
    targets.push_back(t["target"]);
    // The cheap target refuses the TRT-LLM GEMM: its other trial of that backend is pruned.
    const bool refuse = t["target"] == 1 && t["config"]["fp4_gemm_backend"] == "flashinfer_trtllm";
    json rep = refuse ? json{{"verdict", "unsupported"}, {"signature", "unsupported:fp4_gemm_sm100a_only"},
                             {"failing_stage", "gemm"}}
                      : json{{"verdict", "passed"}};
    ASSERT_EQ(d->Post("/api/v1/leases/" + g["lease"].get<std::string>() + "/result", rep.dump()).status, 200);
  }
  EXPECT_EQ(targets, (std::vector<int>{1, 1, 1, 0, 0, 0, 0})) << "the cheaper target's trials first";
  json done = d->WaitSweep(sweep["id"]);
  EXPECT_EQ(done["pruned"]["trials"], 1) << done.dump();
  EXPECT_DOUBLE_EQ(done["pruned"]["gpu_hours_saved"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(done["pruned"]["cost_saved"].get<double>(), 0.375);  // 0.25 GPU-hours x 1.5
  EXPECT_EQ(done["request"]["targets"][1]["cost_per_gpu_hour"], 1.5);
  // A person reads the priced saving too, in the price's own unit.
  Out st = RunProgram(dir, {GauntletBin(), "status", sweep["id"].dump()}, {"GAUNTLET_SERVER=" + d->url()});
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("pruned 1 (0.2 GPU-h saved, 0.38 in the targets' price saved)"), std::string::npos) << st.out;
}

}  // namespace
}  // namespace gauntlet::test
