// Issue 20's first two workflows over real HTTP against a real daemon and worker: rerun what failed
// (API and `gauntlet rerun`) and compare two runs (API, CSV, `gauntlet diff` with its exit status
// and Markdown). Outcomes are steered with fixture-flaky's `flaky` mode, whose runs are counted in a
// folder: run 1 fails, runs 2 and 3 pass, run 4 fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "http/http.h"
#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

class Workflow : public ::testing::Test {
 protected:
  TempDir dir;
  std::unique_ptr<Daemon> d = std::make_unique<Daemon>(dir.path(), SourceDir() + "/tests/fixtures/suites");
  std::unique_ptr<Child> w = StartWorker(dir.path(), d->url(), "cpu-node", json::object());
  std::string runs = dir.path() + "/flaky-runs";

  json Sweep(const std::vector<std::string>& modes) {
    json s = d->PostJson("/api/v1/sweeps",
                         {{"suite", "fixture-flaky"}, {"name", "first"}, {"parameters", {{"mode", modes}, {"dir", {runs}}}}},
                         201);
    return d->WaitSweep(s["id"]);
  }
  json Rerun(int64_t sweep, const json& body, int status = 201) {
    return d->PostJson("/api/v1/sweeps/" + std::to_string(sweep) + "/rerun", body, status);
  }
  Out G(std::vector<std::string> args) {
    args.insert(args.begin(), GauntletBin());
    return RunProgram(dir, args, {"GAUNTLET_SERVER=" + d->url()});
  }
  std::map<std::string, json> ByMode(const json& cmp) {
    std::map<std::string, json> out;
    for (auto& it : cmp["items"]) out[it["config"]["mode"]] = it;
    return out;
  }
};

TEST_F(Workflow, RerunMakesALinkedSweepOfExactlyTheFailedTrials) {
  json s1 = Sweep({"flaky", "pass", "fail"});
  ASSERT_EQ(s1["by_verdict"].value("crashed", 0), 2) << s1.dump();
  const int64_t id1 = s1["id"];
  json r = Rerun(id1, json::object());
  EXPECT_EQ(r["trials"], 2);
  EXPECT_EQ(r["rerun_of"], id1);
  EXPECT_EQ(r["dashboard_url"], "/#/sweeps/" + r["id"].dump());
  const int64_t id2 = r["id"];
  json s2 = d->WaitSweep(id2);
  EXPECT_EQ(s2["rerun_of"], id1);
  EXPECT_EQ(s2["source"], "rerun");
  EXPECT_FALSE(s2["request"]["reuse"].get<bool>());
  // The flaky config passes on its second run; the steady failure fails again, not reused.
  EXPECT_EQ(s2["by_verdict"].value("passed", 0), 1) << s2.dump();
  EXPECT_EQ(s2["by_verdict"].value("crashed", 0), 1) << s2.dump();
  EXPECT_EQ(s2["reused"], 0);
  json trials = d->GetJson("/api/v1/trials?sweep=" + std::to_string(id2));
  std::set<std::string> modes;
  for (auto& t : trials["items"]) modes.insert(t["config"]["mode"]);
  EXPECT_EQ(modes, (std::set<std::string>{"flaky", "fail"}));
  // A selection: by verdict, by config (key or values), by target.
  EXPECT_EQ(Rerun(id1, {{"verdicts", {"passed"}}})["trials"], 1);
  EXPECT_EQ(Rerun(id1, {{"configs", json::array({json{{"mode", "fail"}}})}})["trials"], 1);
  EXPECT_EQ(Rerun(id1, {{"verdicts", {"crashed"}}, {"targets", {0}}})["trials"], 2);
  // Errors name the field and store nothing.
  const size_t before = d->GetJson("/api/v1/sweeps")["items"].size();
  auto bad = d->Post("/api/v1/sweeps/" + std::to_string(id1) + "/rerun", R"({"verdicts": ["bogus"]})");
  EXPECT_EQ(bad.status, 422);
  EXPECT_EQ(json::parse(bad.body)["field"], "verdicts[0]");
  bad = d->Post("/api/v1/sweeps/" + std::to_string(id1) + "/rerun", R"({"verdicts": ["oom"]})");
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_EQ(json::parse(bad.body)["field"], "verdicts");
  EXPECT_EQ(d->Post("/api/v1/sweeps/" + std::to_string(id1) + "/rerun", R"({"colour": 1})").status, 422);
  EXPECT_EQ(d->Post("/api/v1/sweeps/" + std::to_string(id1) + "/rerun", R"({"verdicts": )").status, 400);
  EXPECT_EQ(d->Post("/api/v1/sweeps/999999/rerun", "{}").status, 404);
  EXPECT_EQ(d->GetJson("/api/v1/sweeps")["items"].size(), before);
  // A long original name still leaves a request that parses (a restart rebuilds the sweep from it).
  json longer = d->PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"name", std::string(200, 'n')},
                                               {"parameters", {{"mode", {"fail"}}}}}, 201);
  d->WaitSweep(longer["id"]);
  json lr = Rerun(longer["id"], json::object());
  EXPECT_EQ(d->GetJson("/api/v1/sweeps/" + lr["id"].dump())["name"], "rerun of " + longer["id"].dump());
  d->WaitSweep(lr["id"]);
    // The retry of infra errors in place is still there, and answers as before.
  EXPECT_EQ(d->PostJson("/api/v1/sweeps/" + std::to_string(id1) + "/retry", json::object())["requeued"], 0);
}

TEST_F(Workflow, ARerunQueuedAcrossADaemonRestartStillRunsFresh) {
  json s1 = Sweep({"flaky"});  // run 1: crashed
  w.reset();                   // no worker: the rerun's trial stays queued
  // The killed worker's lease long-poll is still held until its own timer ends; a trial queued
  // before then would be granted to it (and wait out a lease expiry).
  ASSERT_TRUE(WaitFor([&] {
    json nodes = d->GetJson("/api/v1/nodes");
    return !nodes["items"].empty() && !nodes["items"][0].value("waiting", true);
  }));
  json r = Rerun(s1["id"], json::object());
  EXPECT_EQ(d->Stop(), 0);
  d->Start();
  json queued = d->GetJson("/api/v1/sweeps/" + r["id"].dump());
  EXPECT_EQ(queued["by_state"]["queued"], 1) << queued.dump();
  EXPECT_EQ(queued["rerun_of"], s1["id"]);
  w = StartWorker(dir.path(), d->url(), "cpu-node", json::object());
  json done = d->WaitSweep(r["id"]);
  EXPECT_EQ(done["by_verdict"].value("passed", 0), 1) << done.dump();  // run 2, really run
  EXPECT_EQ(done["reused"], 0);
}

TEST_F(Workflow, CompareSaysWhatChangedAndDiffExitsOneWhenSomethingBroke) {
  json s1 = Sweep({"flaky", "pass", "fail", "stack"});  // flaky run 1: crashed
  const int64_t id1 = s1["id"];
  const int64_t id2 = Rerun(id1, {{"verdicts", {"crashed"}}})["id"];  // flaky run 2: passed
  d->WaitSweep(id2);
  json cmp = d->GetJson("/api/v1/compare?a=" + std::to_string(id1) + "&b=" + std::to_string(id2));
  auto by = ByMode(cmp);
  EXPECT_EQ(by["flaky"]["change"], "fixed");
  EXPECT_EQ(by["flaky"]["a"]["verdict"], "crashed");
  EXPECT_EQ(by["flaky"]["b"]["verdict"], "passed");
  EXPECT_EQ(by["fail"]["change"], "same");
  EXPECT_EQ(by["pass"]["change"], "gone");
  EXPECT_EQ(cmp["summary"]["fixed"], 1);
  EXPECT_EQ(cmp["summary"]["broke"], 0);
  EXPECT_EQ(cmp["items"][0]["change"], "fixed");  // changes first
  EXPECT_EQ(cmp["a"]["dashboard_url"], "/#/sweeps/" + std::to_string(id1));
  // The other way round, the flaky config passed and then failed, but its latest run passed again:
  // the failure did not stay, so it became flaky, it did not break (docs/SCHEDULING.md "Broke or flaky").
  json back = d->GetJson("/api/v1/compare?a=" + std::to_string(id2) + "&b=" + std::to_string(id1));
  EXPECT_EQ(ByMode(back)["flaky"]["change"], "flaky") << back.dump();
  EXPECT_EQ(ByMode(back)["flaky"]["why"], "passed and failed in turn");
  EXPECT_EQ(back["summary"]["broke"], 0);
  EXPECT_EQ(back["summary"]["flaky"], 1);
  EXPECT_EQ(ByMode(back)["pass"]["change"], "new");
  // CSV: a header and one line per config × hardware.
  auto csv = d->Get("/api/v1/compare?a=" + std::to_string(id1) + "&b=" + std::to_string(id2) + "&format=csv");
  EXPECT_EQ(csv.status, 200);
  EXPECT_EQ(csv.content_type.rfind("text/csv", 0), 0u);
  auto lines = Lines(csv.body);
  ASSERT_EQ(lines.size(), 5u) << csv.body;
  EXPECT_EQ(lines[0].rfind("config_key,hardware,change,why,a_verdict,b_verdict", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find(",fixed,"), std::string::npos) << lines[1];
  // Errors.
  EXPECT_EQ(d->Get("/api/v1/compare?a=" + std::to_string(id1)).status, 422);
  EXPECT_EQ(d->Get("/api/v1/compare?a=1&b=999999").status, 404);
  EXPECT_EQ(d->Get("/api/v1/compare?a=1&b=2&colour=red").status, 400);
  EXPECT_EQ(d->Get("/api/v1/compare?a=1&b=2&threshold=lots").status, 422);
  EXPECT_EQ(d->Get("/api/v1/compare?a_version=1&b_version=1").status, 422);  // no suite
  // Suite versions: version 1 against itself is all "same".
  json ver = d->GetJson("/api/v1/compare?suite=fixture-flaky&a_version=1&b_version=1");
  EXPECT_EQ(ver["summary"]["same"], 4) << ver.dump();

  // Other software breaks the stack config: the worker now passes FIXTURE_STACK=broken, which its
  // fingerprint reports, and the config crashes. That broke.
  w.reset();
  ASSERT_TRUE(WaitFor([&] {
    json nodes = d->GetJson("/api/v1/nodes");
    return !nodes["items"].empty() && !nodes["items"][0].value("waiting", true);
  }));
  setenv("FIXTURE_STACK", "broken", 1);
  w = StartWorker(dir.path(), d->url(), "cpu-node", json::object(), {"--pass-env", "FIXTURE_STACK"});
  unsetenv("FIXTURE_STACK");
  const int64_t id3 = Rerun(id1, {{"verdicts", {"passed"}}, {"configs", json::array({json{{"mode", "stack"}}})}})["id"];
  d->WaitSweep(id3);
  json broke_cmp = d->GetJson("/api/v1/compare?a=" + std::to_string(id1) + "&b=" + std::to_string(id3));
  EXPECT_EQ(ByMode(broke_cmp)["stack"]["change"], "broke") << broke_cmp.dump();
  EXPECT_EQ(ByMode(broke_cmp)["stack"]["why"], "verdict");

  // gauntlet diff: 0 when nothing broke (a config that became flaky did not), 1 when something did;
  // table, markdown, json.
  Out ok = G({"diff", std::to_string(id1), std::to_string(id2)});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("fixed"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find(d->url() + "/#/sweeps/" + std::to_string(id2)), std::string::npos) << ok.out;
  Out flaky = G({"diff", std::to_string(id2), std::to_string(id1)});
  EXPECT_EQ(flaky.code, 0) << flaky.err << flaky.out;
  EXPECT_NE(flaky.out.find("became flaky"), std::string::npos) << flaky.out;
  EXPECT_EQ(flaky.out.find("broke"), std::string::npos) << flaky.out;
  Out broke = G({"diff", std::to_string(id1), std::to_string(id3), "--format", "markdown"});
  EXPECT_EQ(broke.code, 1) << broke.err;
  EXPECT_NE(broke.out.find("| CONFIG | HARDWARE | CHANGE |"), std::string::npos) << broke.out;
  EXPECT_NE(broke.out.find("| broke |"), std::string::npos) << broke.out;
  EXPECT_EQ(broke.out.find("| same |"), std::string::npos) << broke.out;  // unchanged rows left out
  Out js = G({"diff", std::to_string(id1), std::to_string(id3), "--format", "json"});
  EXPECT_EQ(js.code, 1);
  EXPECT_EQ(json::parse(js.out)["summary"]["broke"], 1);
  Out csvo = G({"diff", std::to_string(id1), std::to_string(id2), "--format", "csv"});
  EXPECT_EQ(csvo.code, 0);
  EXPECT_EQ(Lines(csvo.out).size(), 5u) << csvo.out;
  Out err = G({"diff", std::to_string(id1), "999999"});
  EXPECT_EQ(err.code, 2);
  EXPECT_NE(err.err.find("404"), std::string::npos) << err.err;
  EXPECT_EQ(G({"diff", "v1", "v2"}).code, 2);  // a version needs --suite
  // Two suites: the comparison says that configs are matched by parameter values alone.
  EXPECT_FALSE(broke_cmp.contains("note")) << broke_cmp.dump();
  json other = d->WaitSweep(d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}}, 201)["id"]);
  json across = d->GetJson("/api/v1/compare?a=" + std::to_string(id1) + "&b=" + other["id"].dump());
  EXPECT_EQ(across["note"], "A is suite fixture-flaky and B suite fixture-cmd: their configs are matched by parameter values alone")
      << across.dump();
  Out cross = G({"diff", std::to_string(id1), other["id"].dump()});
  EXPECT_NE(cross.err.find("gauntlet: A is suite fixture-flaky and B suite fixture-cmd"), std::string::npos) << cross.err;
}

TEST_F(Workflow, CliRerunPrintsTheNewSweepAndItsDashboardAndWaits) {
  json s1 = Sweep({"flaky", "pass"});  // flaky run 1: crashed
  const int64_t id1 = s1["id"];
  Out r = G({"rerun", std::to_string(id1), "--failed", "--wait", "--json"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;  // the flaky config passed this time
  json first = json::parse(Lines(r.out).at(0));
  EXPECT_EQ(first["rerun_of"], id1);
  EXPECT_EQ(first["trials"], 1);
  EXPECT_EQ(first["dashboard_url"], d->url() + "/#/sweeps/" + first["id"].dump());
  Out again = G({"rerun", std::to_string(id1), "--verdict", "passed", "--verdict", "crashed"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(json::parse(Lines(again.out).at(0))["trials"], 2);
  Out none = G({"rerun", std::to_string(id1), "--verdict", "oom"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("422"), std::string::npos) << none.err;
  Out bad = G({"rerun", std::to_string(id1), "--verdict", "nope"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("verdicts[0]"), std::string::npos) << bad.err;
  // A sweep shows where it came from: the CLI's User-Agent marks a submission as the CLI's.
  const std::string file = dir.Write("s.json", json{{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"pass"}}}}}.dump());
  Out sub = G({"submit", file});
  ASSERT_EQ(sub.code, 0) << sub.err;
  json created = json::parse(Lines(sub.out).at(0));
  EXPECT_EQ(created["dashboard_url"], d->url() + "/#/sweeps/" + created["id"].dump());
  EXPECT_EQ(d->GetJson("/api/v1/sweeps/" + created["id"].dump())["source"], "cli");
  EXPECT_EQ(d->GetJson("/api/v1/sweeps/" + std::to_string(id1))["source"], "api");
  Out st = G({"status", created["id"].dump()});
  EXPECT_EQ(st.code, 0);
  EXPECT_NE(st.out.find(d->url() + "/#/sweeps/" + created["id"].dump()), std::string::npos) << st.out;
}

TEST_F(Workflow, SweepsFilterBySuiteStateAndSourceAndTrialsBySignature) {
  json s1 = Sweep({"pass", "fail"});
  const int64_t id1 = s1["id"];
  const int64_t id2 = Rerun(id1, json::object())["id"];
  d->WaitSweep(id2);
  auto ids = [&](const std::string& q) {
    std::vector<int64_t> out;
    const json list = d->GetJson("/api/v1/sweeps" + q);  // kept: the loop reads into it
    for (auto& s : list["items"]) out.push_back(s["id"]);
    return out;
  };
  EXPECT_EQ(ids("?source=rerun"), std::vector<int64_t>{id2});
  EXPECT_EQ(ids("?source=api&state=finished"), std::vector<int64_t>{id1});
  EXPECT_EQ(ids("?suite=fixture-flaky&state=finished"), (std::vector<int64_t>{id2, id1}));
  EXPECT_TRUE(ids("?suite=fixture-cmd").empty());
  EXPECT_TRUE(ids("?state=running").empty());
  EXPECT_TRUE(ids("?submitted_by=sha256:nobody").empty());
  EXPECT_EQ(d->Get("/api/v1/sweeps?state=asleep").status, 422);
  EXPECT_EQ(d->Get("/api/v1/sweeps?colour=red").status, 400);
  // A cancelled sweep is "cancelled", not "finished".
  json queued = d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}},
                                               {"targets", json::array({json{{"arch", "sm_100"}}})}}, 201);
  EXPECT_EQ(ids("?state=running"), std::vector<int64_t>{queued["id"].get<int64_t>()});
  d->PostJson("/api/v1/sweeps/" + queued["id"].dump() + "/cancel", json::object());
  EXPECT_EQ(ids("?state=cancelled"), std::vector<int64_t>{queued["id"].get<int64_t>()});
  // Trials of one signature.
  json failed = d->GetJson("/api/v1/trials?sweep=" + std::to_string(id1) + "&verdict=crashed")["items"];
  ASSERT_EQ(failed.size(), 1u);
  const std::string sig = failed[0]["signature"];
  json bysig = d->GetJson("/api/v1/trials?signature=" + http::UrlEncode(sig))["items"];
  ASSERT_EQ(bysig.size(), 2u);  // the original and its rerun
  for (auto& t : bysig) EXPECT_EQ(t["signature"], sig);
}

TEST(SweepOrigin, ASweepSaysWhichTokenSubmittedIt) {
  TempDir dir;
  Out tok = RunProgram(dir, {GauntletBin(), "token", "--role", "submit", "--name", "ci"});
  ASSERT_EQ(tok.code, 0) << tok.err;
  auto tl = Lines(tok.out);
  ASSERT_GE(tl.size(), 2u) << tok.out;
  const std::string token = tl[0].substr(tl[0].find(": ") + 2);
  const std::string line = tl[1].substr(tl[1].find(": ") + 2);  // "submit sha256:HEX ci"
  const std::string hash = line.substr(line.find("sha256:") + 7, 12);
  std::ofstream(dir.path() + "/tokens") << line << "\n";
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites", {"--tokens", dir.path() + "/tokens"});
  net::Client c(d.url(), token);
  auto r = c.Send("POST", "/api/v1/sweeps", json{{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"pass"}}}}}.dump());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  auto sw = c.Send("GET", "/api/v1/sweeps/" + json::parse(r->body)["id"].dump());
  ASSERT_TRUE(sw.ok());
  json s = json::parse(sw->body);
  EXPECT_EQ(s["submitted_by"], "ci");  // the token's NAME in the tokens file
  EXPECT_EQ(s["source"], "api");
  // A token listed without a name is named by its hash's first 12 hex digits.
  Out anon = RunProgram(dir, {GauntletBin(), "token", "--role", "submit"});
  ASSERT_EQ(anon.code, 0) << anon.err;
  auto al = Lines(anon.out);
  ASSERT_GE(al.size(), 2u) << anon.out;
  const std::string anon_token = al[0].substr(al[0].find(": ") + 2);
  const std::string anon_line = al[1].substr(al[1].find(": ") + 2);
  const std::string anon_hash = anon_line.substr(anon_line.find("sha256:") + 7, 12);
  d.Stop();
  std::ofstream(dir.path() + "/tokens") << line << "\n" << anon_line << "\n";
  d.Start();
  net::Client c2(d.url(), anon_token);
  auto r2 = c2.Send("POST", "/api/v1/sweeps", json{{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"pass"}}}}}.dump());
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->status, 201) << r2->body;
  auto sw2 = c2.Send("GET", "/api/v1/sweeps/" + json::parse(r2->body)["id"].dump());
  ASSERT_TRUE(sw2.ok());
  EXPECT_EQ(json::parse(sw2->body)["submitted_by"], "sha256:" + anon_hash);
  // A rerun needs the submit role too: without a token it is refused and nothing is made.
  EXPECT_EQ(d.Post("/api/v1/sweeps/" + s["id"].dump() + "/rerun", "{}").status, 401);
}

}  // namespace
}  // namespace gauntlet::test
