// Answers a user can trust, through a real daemon and worker on loopback: matrix cells that never
// hide disagreement (mixed, flaky, metric ranges) in JSON and CSV, suites as a person writes them
// (the guide's inline metrics line, YAML, a typo), what a run says when it cannot run or is over,
// reuse without a fingerprint, and a suite registered through the API surviving a restart.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "net/http_client.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// A suites folder of our own (so a test may add a file to it): the fixture suites copied.
std::string CopySuites(const TempDir& dir) {
  const std::string to = dir.path() + "/suites";
  fs::create_directories(to);
  for (auto& e : fs::directory_iterator(SourceDir() + "/tests/fixtures/suites"))
    fs::copy(e.path(), to + "/" + e.path().filename().string(), fs::copy_options::overwrite_existing);
  return to;
}

const json* Cell(const json& m, const json& row, const std::string& col_prefix = "") {
  for (auto& c : m["cells"])
    if (c["row"] == row && c["col"].get<std::string>().rfind(col_prefix, 0) == 0) return &c;
  return nullptr;
}

class AnswersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    suites_ = CopySuites(dir_);
    d_ = std::make_unique<Daemon>(dir_.path(), suites_);
    worker_ = StartWorker(dir_.path(), d_->url(), "w", json::object(), {"--max-trials", "2"});
  }
  int64_t RunSweep(const json& body) {
    json s = d_->PostJson("/api/v1/sweeps", body, 201);
    json done = d_->WaitSweep(s["id"]);
    EXPECT_TRUE(done["finished"].get<bool>()) << done.dump();
    return s["id"];
  }
  TempDir dir_;
  std::string suites_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

TEST_F(AnswersTest, ACellOfConfigsThatDisagreeIsMixedAndSaysWhich) {
  // rows=tag hides mode: each tag's cell holds a passing and a failing config.
  const int64_t id = RunSweep({{"suite", "fixture-cmd"}, {"prune", false}, {"reuse", false},
                               {"parameters", {{"mode", {"pass", "fail"}}, {"tag", {"a", "b"}}}}});
  json m = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=tag");  // no suite: the sweep names it
  EXPECT_EQ(m["suite"], "fixture-cmd");
  const json* a = Cell(m, json::array({"a"}));
  ASSERT_TRUE(a) << m.dump();
  EXPECT_EQ((*a)["state"], "mixed") << a->dump();
  EXPECT_EQ((*a)["configs"], 2);
  EXPECT_EQ((*a)["passed"], 1);
  EXPECT_EQ((*a)["counts"]["passed"], 1);
  EXPECT_EQ((*a)["counts"]["crashed"], 1);
  EXPECT_EQ((*a)["verdict"], "crashed");  // the worst present: a mixed cell never reads as a pass
  std::map<std::string, json> by;
  for (auto& b : (*a)["breakdown"]) by[b["verdict"]] = b;
  ASSERT_EQ(by.size(), 2u) << a->dump();
  EXPECT_EQ(by["passed"]["values"]["mode"], json::array({"pass"}));
  EXPECT_EQ(by["crashed"]["values"]["mode"], json::array({"fail"}));
  EXPECT_EQ(by["crashed"]["signatures"], json::array({"crashed:fixture_exploded"}));
  // rows=mode: each cell is one config; the passing ones give their metric as a range.
  json by_mode = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=mode");
  const json* pass = Cell(by_mode, json::array({"pass"}));
  ASSERT_TRUE(pass);
  EXPECT_EQ((*pass)["state"], "passed");
  EXPECT_EQ((*pass)["configs"], 2);  // tags a and b
  EXPECT_EQ((*pass)["metric_min"]["value"], 1.0);
  EXPECT_EQ((*pass)["metric_max"]["unit"], "pts");
  EXPECT_EQ((*Cell(by_mode, json::array({"fail"})))["state"], "failed");
  // The CSV: one line per cell, the state and counts in columns of their own.
  auto csv = d_->Get("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=tag&format=csv");
  ASSERT_EQ(csv.status, 200);
  EXPECT_EQ(csv.body.substr(0, csv.body.find("\r\n")),
            "tag,hardware,state,verdict,passed_configs,configs,counts,metric,metric_min,metric_max,metric_unit,signature,"
            "reused");
  EXPECT_NE(csv.body.find("\r\na,cpu,mixed,crashed,1,2,passed=1 crashed=1,score,1,1,pts,"), std::string::npos) << csv.body;
  // The suite-wide matrix (the results index) tells the same story.
  json suite_wide = d_->GetJson("/api/v1/matrix?suite=fixture-cmd&rows=tag");
  EXPECT_EQ(suite_wide["suite_version"], 1);
  EXPECT_EQ((*Cell(suite_wide, json::array({"a"})))["state"], "mixed") << suite_wide.dump();
}

TEST_F(AnswersTest, OneConfigThatBothPassedAndFailedIsFlaky) {
  const std::string runs = dir_.path() + "/flaky-runs";
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"prune", false}, {"reuse", false}, {"repeats", 3},
                               {"parameters", {{"mode", {"flaky", "pass"}}, {"dir", {runs}}}}});
  json m = d_->GetJson("/api/v1/matrix?sweep=" + std::to_string(id) + "&rows=mode");
  const json* flaky = Cell(m, json::array({"flaky"}));
  ASSERT_TRUE(flaky) << m.dump();
  EXPECT_EQ((*flaky)["state"], "flaky") << flaky->dump();
  EXPECT_EQ((*flaky)["configs"], 1);
  EXPECT_EQ((*flaky)["counts"]["crashed"], 1);
  EXPECT_EQ((*flaky)["counts"]["passed"], 2);
  ASSERT_EQ((*flaky)["flaky"].size(), 1u);
  EXPECT_EQ((*flaky)["flaky"][0]["config"]["mode"], "flaky");
  EXPECT_EQ((*Cell(m, json::array({"pass"})))["state"], "passed");
  // The results index keeps it flaky across the suite's history too.
  json suite_wide = d_->GetJson("/api/v1/matrix?suite=fixture-flaky&rows=mode");
  EXPECT_EQ((*Cell(suite_wide, json::array({"flaky"})))["state"], "flaky") << suite_wide.dump();
}

// The pruning flaw as users met it: a flaky crash of one mode and a crash of another mode with the
// generic `crashed:exit_code:1` settled both modes, skipping trials that would have run. A crash that
// says nothing never prunes, so every trial here runs and is judged.
TEST_F(AnswersTest, CrashesThatSayNothingNeverPrune) {
  const std::string runs = dir_.path() + "/bare-runs";
  const int64_t id = RunSweep({{"suite", "fixture-flaky"}, {"reuse", false},
                               {"parameters", {{"mode", {"flaky_bare", "exit1"}}, {"dir", {runs}},
                                               {"value", {"1", "2", "3", "4"}}}}});
  json sw = d_->GetJson("/api/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(sw["by_verdict"].value("skipped", 0), 0) << sw.dump();
  EXPECT_EQ(sw["pruned"]["trials"], 0) << sw.dump();
  EXPECT_EQ(sw["by_verdict"].value("crashed", 0) + sw["by_verdict"].value("passed", 0), 8) << sw.dump();
}

TEST_F(AnswersTest, FinishedSweepsAndUnknownFiltersSayWhatIsWrong) {
  const int64_t id = RunSweep({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}});
  auto c = d_->Post("/api/v1/sweeps/" + std::to_string(id) + "/cancel", "{}");
  EXPECT_EQ(c.status, 409) << c.body;
  EXPECT_EQ(d_->GetJson("/api/v1/sweeps/" + std::to_string(id))["by_verdict"].value("cancelled", 0), 0);
  auto bad = d_->Get("/api/v1/trials?verdict=crashd");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.body.find("wrong_output"), std::string::npos) << bad.body;  // the allowed values
  EXPECT_EQ(d_->Get("/api/v1/trials?state=finished").status, 422);
  EXPECT_EQ(d_->Get("/api/v1/matrix?suite=fixture-cmd&suite_version=x").status, 422);
  // A sweep no node can run names the requirement and the nodes.
  json gpu = d_->PostJson("/api/v1/sweeps", {{"suite", "fixture-gpu"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  json sw = d_->GetJson("/api/v1/sweeps/" + gpu["id"].dump());
  ASSERT_EQ(sw["unmatched_targets"].size(), 1u) << sw.dump();
  EXPECT_EQ(sw["unmatched_targets"][0]["requires"], "requires.gpus: 1") << sw.dump();
  EXPECT_EQ(sw["unmatched_targets"][0]["nodes"], "w (cpu)") << sw.dump();
}

TEST_F(AnswersTest, SuitesAsAPersonWritesThem) {
  net::Client c(d_->url(), "");
  // YAML through PUT, the guide's inline metrics line (its }}} included), no fingerprint command.
  const std::string yaml =
      "name: inline\n"
      "parameters:\n"
      "  zeta: [\"1\"]\n"
      "  alpha: [\"x\"]\n"
      "stages:\n"
      "  - name: run\n"
      "    kind: command\n"
      "    argv: [\"python3\", \"-c\", \"print('{\\\"metrics\\\": {\\\"tflops\\\": {\\\"value\\\": 1}}}')\"]\n";
  auto put = c.Send("PUT", "/api/v1/suites/inline", yaml, "application/yaml");
  ASSERT_TRUE(put.ok());
  ASSERT_EQ(put->status, 201) << put->body;
  const int64_t first = RunSweep({{"suite", "inline"}});
  json t = d_->GetJson("/api/v1/trials?sweep=" + std::to_string(first))["items"][0];
  EXPECT_EQ(t["verdict"], "passed") << t.dump();
  json trial = d_->GetJson("/api/v1/trials/" + t["id"].dump());
  EXPECT_EQ(trial["result"]["metrics"]["tflops"]["value"], 1) << trial.dump();
  // Rows follow the declared order (zeta before alpha), not the alphabet.
  EXPECT_EQ(d_->GetJson("/api/v1/matrix?suite=inline")["rows"], json::array({"zeta", "alpha"}));
  // Reuse without a fingerprint: keyed on the suite version and the hardware, and the sweep says so.
  json again = d_->PostJson("/api/v1/sweeps", {{"suite", "inline"}}, 201);
  json sw = d_->WaitSweep(again["id"]);
  EXPECT_EQ(sw["reused"], 1) << sw.dump();
  EXPECT_NE(sw["reuse"]["keyed_on"].get<std::string>().find("no fingerprint"), std::string::npos) << sw.dump();
  // A typo in a field name is an unknown field, named.
  auto typo = c.Send("PUT", "/api/v1/suites/typo",
                     json({{"name", "typo"}, {"parameters", {{"a", {"1"}}}},
                           {"stages", {{{"name", "s"}, {"kind", "command"}, {"argv", {"true"}}, {"timeout", 5}}}}})
                         .dump());
  ASSERT_TRUE(typo.ok());
  EXPECT_EQ(typo->status, 422);
  EXPECT_NE(typo->body.find("stages[0].timeout"), std::string::npos) << typo->body;
}

// Outside bytes that are not UTF-8 stop nothing: a request path is a 400 problem (valid JSON), and a
// suite whose fingerprint and log print 0xFF runs and is reported like any other (such a fingerprint
// once aborted every worker that took the trial, in the JSON dump of its report).
TEST_F(AnswersTest, BytesThatAreNotUtf8StopNothing) {
  net::Client c(d_->url(), "");
  auto bad = c.Send("GET", "/%ff");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["field"], "path");
  const std::string print_ff = "import sys; sys.stdout.buffer.write(b'\\xff\\xfe not utf-8\\n')";
  json def = {{"name", "bytes"}, {"parameters", {{"a", {"1"}}}},
              {"fingerprint", {{"argv", {"python3", "-c", print_ff}}}},
              {"stages", {{{"name", "s"}, {"kind", "command"}, {"argv", {"python3", "-c", print_ff}}}}}};
  auto put = c.Send("PUT", "/api/v1/suites/bytes", def.dump());
  ASSERT_TRUE(put.ok() && put->status == 201) << (put.ok() ? put->body : put.status().message());
  for (int round = 0; round < 2; ++round) {  // the same worker takes the second one: it survived
    const int64_t id = RunSweep({{"suite", "bytes"}, {"reuse", false}});
    json t = d_->GetJson("/api/v1/trials?sweep=" + std::to_string(id))["items"][0];
    EXPECT_EQ(t["verdict"], "passed") << t.dump() << "\n" << worker_->Log();
  }
  EXPECT_TRUE(worker_->Running()) << worker_->Log();
  EXPECT_EQ(d_->Get("/api/v1/health").status, 200);
}

TEST_F(AnswersTest, ASuiteRegisteredThroughTheApiSurvivesARestart) {
  net::Client c(d_->url(), "");
  json def = {{"name", "mine"}, {"description", "registered through the API"}, {"parameters", {{"a", {"1"}}}},
              {"stages", {{{"name", "s"}, {"kind", "command"}, {"argv", {"true"}}}}}};
  auto put = c.Send("PUT", "/api/v1/suites/mine", def.dump());
  ASSERT_TRUE(put.ok() && put->status == 201) << (put.ok() ? put->body : put.status().message());
  // A file of the same name (say an old copy) appears in --suites; the daemon restarts.
  json file = def;
  file["description"] = "the file's copy";
  std::ofstream(suites_ + "/mine.json") << file.dump();
  worker_.reset();
  ASSERT_EQ(d_->Stop(), 0);
  d_->Start();
  json s = d_->GetJson("/api/v1/suites/mine");
  EXPECT_EQ(s["description"], "registered through the API") << s.dump();
  EXPECT_EQ(s["version"], 1);
  bool listed = false;
  const json list = d_->GetJson("/api/v1/suites");  // the loop below must not outlive it
  for (auto& item : list["items"])
    if (item["name"] == "mine") {
      listed = true;
      EXPECT_NE(item.value("conflict", "").find("mine.json"), std::string::npos) << item.dump();
    }
  EXPECT_TRUE(listed);
  EXPECT_NE(d_->Log().find("was not loaded"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet::test

namespace gauntlet::test {
namespace {

// SIGTERM ends an idle worker and an idle daemon at once: neither waits out the worker's lease
// long-poll (30 s here), which a person at the terminal would take for a hang. The bound below is
// far under the poll, so it asserts the behaviour, not a speed.
// A worker whose lease long-poll lasts 30 s (the harness's StartWorker uses 5).
std::unique_ptr<Child> SlowPollWorker(const TempDir& dir, const Daemon& d, const std::string& name) {
  const std::string inv = dir.Write(name + ".json", "{}");
  return std::make_unique<Child>(std::vector<std::string>{GauntletBin(), "worker", "--server", d.url(), "--name", name,
                                                          "--inventory", inv, "--workdir", dir.path() + "/work-" + name,
                                                          "--preflight", "off", "--wait-s", "30", "--max-trials", "2"},
                                 dir.path() + "/" + name + ".log");
}

TEST(Stopping, AnIdleDaemonAndWorkerStopWithoutWaitingOutTheLongPoll) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  auto nodes = [&] { return d.GetJson("/api/v1/nodes")["items"].size(); };
  auto w = SlowPollWorker(dir, d, "w");
  ASSERT_TRUE(WaitFor([&] { return nodes() == 1; }, std::chrono::seconds(10))) << w->Log();
  w->Signal(SIGTERM);
  EXPECT_EQ(w->Wait(std::chrono::seconds(10)), 0) << "the worker waited out its long-poll:\n" << w->Log();
  auto w2 = SlowPollWorker(dir, d, "w2");
  ASSERT_TRUE(WaitFor([&] { return nodes() == 2; }, std::chrono::seconds(10))) << w2->Log();
  d.child().Signal(SIGTERM);
  EXPECT_EQ(d.child().Wait(std::chrono::seconds(10)), 0) << "the daemon waited out a long-poll:\n" << d.Log();
}

// Two workers cannot share a --workdir: a worker clears what its folder's earlier workers left, so a
// second one would kill the first one's stages. The second exits 2 saying who holds the folder.
TEST(Workdir, ASecondWorkerOnTheSameFolderRefusesToStart) {
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites");
  const std::string inv = dir.Write("inv.json", "{}");
  auto worker = [&](const std::string& name) {
    return std::make_unique<Child>(std::vector<std::string>{GauntletBin(), "worker", "--server", d.url(), "--name", name,
                                                            "--inventory", inv, "--workdir", dir.path() + "/shared",
                                                            "--preflight", "off"},
                                   dir.path() + "/" + name + ".log");
  };
  auto first = worker("first");
  ASSERT_TRUE(WaitFor([&] { return d.GetJson("/api/v1/nodes")["items"].size() == 1; }, std::chrono::seconds(10)))
      << first->Log();
  auto second = worker("second");
  const int status = second->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(status != -1 && WIFEXITED(status)) << second->Log();
  EXPECT_EQ(WEXITSTATUS(status), 2) << second->Log();
  EXPECT_NE(second->Log().find("another worker (pid"), std::string::npos) << second->Log();
  EXPECT_TRUE(first->Running()) << first->Log();
}

}  // namespace
}  // namespace gauntlet::test

