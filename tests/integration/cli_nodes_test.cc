// A node that cannot serve a sweep is visible where its user waits (docs/CLI.md "nodes"): the only
// worker quarantined, `submit --wait` says which node the sweep waits for and the command that
// resumes it, `status` says the same, and `gauntlet nodes resume NAME` (an admin's) lets the wait end.
// An unknown node is refused with the nearest name.
#include <gtest/gtest.h>

#include "tests/integration/cli_fixture.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

TEST(CliNodes, AWaitOnAQuarantinedNodeSaysSoAndEndsWhenItIsResumed) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object(), {"--max-trials", "1"});
  json node;
  ASSERT_TRUE(WaitFor([&] {
    json items = d.GetJson("/api/v1/nodes")["items"];
    if (items.empty()) return false;
    node = items[0];
    return true;
  }, std::chrono::seconds(60)));
  const std::string id = node["id"].dump();
  d.PostJson("/api/v1/nodes/" + id + "/quarantine", {{"reason", "preflight failed: bf16 GEMM 12 TFLOP/s"}}, 200);
  const std::string sweep_file = dir.Write("sweep.json", json({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}},
                                                               {"prune", false}, {"reuse", false}}).dump());
  Child wait({GauntletBin(), "submit", sweep_file, "--wait", "--json"}, dir.path() + "/wait.log",
             {"GAUNTLET_SERVER=" + d.url(), "HOME=" + dir.path()});
  const std::string said = "waits: node cpu-node (" + id + ") is quarantined: preflight failed: bf16 GEMM 12 TFLOP/s; "
                           "an admin resumes it: gauntlet nodes resume " + id;
  ASSERT_TRUE(WaitFor([&] { return wait.Log().find(said) != std::string::npos; }, std::chrono::seconds(60))) << wait.Log();
  EXPECT_TRUE(wait.Running()) << "the wait ended, though a resume would let it finish:\n" << wait.Log();
  // status says it too.
  const json sweeps = d.GetJson("/api/v1/sweeps");
  const std::string sweep_id = sweeps["items"][0]["id"].dump();
  Out st = RunProgram(dir, {GauntletBin(), "status", sweep_id}, {"GAUNTLET_SERVER=" + d.url()});
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("waits: node cpu-node (" + id + ") is quarantined"), std::string::npos) << st.out;
  // An unknown node: refused, naming the nearest.
  Out bad = RunProgram(dir, {GauntletBin(), "nodes", "resume", "cpu-nod"}, {"GAUNTLET_SERVER=" + d.url()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("no node 'cpu-nod' (did you mean cpu-node?)"), std::string::npos) << bad.err;
  // Resumed by name: the sweep runs and the wait ends as a pass.
  Out ok = RunProgram(dir, {GauntletBin(), "nodes", "resume", "cpu-node"}, {"GAUNTLET_SERVER=" + d.url()});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("node cpu-node (" + id + "): online"), std::string::npos) << ok.out;
  EXPECT_EQ(wait.Wait(std::chrono::seconds(120)), 0) << wait.Log();
  // And drained by id: the node says so.
  Out drained = RunProgram(dir, {GauntletBin(), "nodes", "drain", id}, {"GAUNTLET_SERVER=" + d.url()});
  EXPECT_EQ(drained.code, 0) << drained.err;
  EXPECT_NE(drained.out.find(": draining"), std::string::npos) << drained.out;
}

}  // namespace
}  // namespace gauntlet::test
