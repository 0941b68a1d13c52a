// Webhooks against a local receiver (tests/fixtures/webhook_receiver.py, which checks signatures with
// Python's own HMAC): every event signed, the first failures retried with backoff, each attempt on
// the delivery's record, Slack's format, and a delivery pending when the daemon is killed delivered
// once after it comes back.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "net/http_client.h"
#include "tests/integration/cli_fixture.h"
#include "tests/integration/ordered_suite.h"

namespace gauntlet::test {
namespace {
namespace fs = std::filesystem;

class Receiver {
 public:
  Receiver(const TempDir& dir, const std::string& secret, int fail_first, const std::string& ok_file = "")
      : log_(dir.path() + "/receiver.jsonl") {
    const std::string port_file = dir.path() + "/receiver.port";
    std::vector<std::string> argv = {"/usr/bin/env", "python3", SourceDir() + "/tests/fixtures/webhook_receiver.py",
                                     "--port-file", port_file, "--log", log_, "--secret", secret,
                                     "--fail-first", std::to_string(fail_first)};
    if (!ok_file.empty()) argv.insert(argv.end(), {"--ok-file", ok_file});
    child_ = std::make_unique<Child>(argv, dir.path() + "/receiver.log");
    EXPECT_TRUE(WaitFor([&] { return fs::exists(port_file); }, std::chrono::seconds(20))) << child_->Log();
    std::ifstream(port_file) >> port_;
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  // Every request received so far, in order.
  std::vector<json> Requests() const {
    std::vector<json> out;
    for (auto& l : Lines(ReadFile(log_))) out.push_back(json::parse(l));
    return out;
  }
  std::vector<json> Delivered(const std::string& path, const std::string& event) const {
    std::vector<json> out;
    for (auto& r : Requests())
      if (r["path"] == path && r["event"] == event && r["status"] == 200) out.push_back(r);
    return out;
  }

 private:
  std::string log_;
  int port_ = 0;
  std::unique_ptr<Child> child_;
};

// A daemon config with two receivers of one event at `rx`: /json and /slack (Slack's format).
std::string JsonAndSlackHooks(const TempDir& dir, const Receiver& rx, const std::string& event) {
  return dir.Write("gauntlet.yaml", R"(
public_url: http://gauntlet.example:8080/
webhooks:
  - url: )" + rx.url("/json") + R"(
    secret: s3cret
    events: [)" + event + R"(]
  - url: )" + rx.url("/slack") + R"(
    secret: s3cret
    format: slack
    events: [)" + event + R"(]
)");
}

TEST(Webhooks, SignedRetriedRecordedAndSlackFormatted) {
  TempDir dir;
  Receiver rx(dir, "s3cret", 2);
  const std::string config = dir.Write("gauntlet.yaml", R"(
public_url: http://gauntlet.example:8080/
webhook_retry: {backoff_ms: 50, max_backoff_ms: 200}
webhooks:
  - url: )" + rx.url("/json") + R"(
    secret: s3cret
  - url: )" + rx.url("/slack") + R"(
    secret: s3cret
    format: slack
    events: [sweep.finished, node.quarantined]
  - url: )" + rx.url("/slack-regressions") + R"(
    secret: s3cret
    format: slack
    events: [regression.found]
)");
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites", {"--config", config});
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object());
  // The flaky config passes on runs 2 and 3 and fails on run 4: seed the count at 2 runs made.
  const std::string runs = dir.path() + "/runs";
  fs::create_directories(runs);
  std::ofstream(runs + "/runs") << "xx";
  json s1 = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"flaky", "pass", "stack"}}, {"dir", {runs}}}}}, 201);
  const int64_t id1 = s1["id"];
  d.WaitSweep(id1);
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "sweep.finished").size() == 1; })) << d.Log();
  json fin = rx.Delivered("/json", "sweep.finished")[0];
  EXPECT_TRUE(fin["signature_ok"].get<bool>());
  EXPECT_EQ(fin["n"], 3);  // after two refusals
  EXPECT_EQ(fin["body"]["sweep"]["id"], id1);
  EXPECT_EQ(fin["body"]["counts"]["passed"], 3);
  EXPECT_EQ(fin["body"]["dashboard_url"], "http://gauntlet.example:8080/#/sweeps/" + std::to_string(id1));
  // Each attempt is on the delivery's record.
  ASSERT_TRUE(WaitFor([&] {
    auto items = d.GetJson("/api/v1/webhooks/deliveries?state=delivered")["items"];
    for (auto& i : items)
      if (i["hook"] == rx.url("/json") && i["event"] == "sweep.finished") return i["attempts"] == 3;
    return false;
  }));
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack", "sweep.finished").size() == 1; }));
  json slack = rx.Delivered("/slack", "sweep.finished")[0];
  EXPECT_TRUE(slack["signature_ok"].get<bool>());
  ASSERT_TRUE(slack["body"].contains("text")) << slack.dump();
  EXPECT_NE(slack["body"]["text"].get<std::string>().find("<http://gauntlet.example:8080/#/sweeps/" + std::to_string(id1) + "|"),
            std::string::npos) << slack.dump();

  // A rerun of the passing flaky config fails (run 4). Its runs passed and then failed, and nothing
  // since contradicts the failure: by the order rule (docs/SCHEDULING.md "Broke or flaky") that is a
  // break whatever the fingerprint (it used to be called flaky, and no regression.found fired on a
  // real break). Passing and failing in turn is flaky: tests/unit/compare_test.cc and store_test.cc.
  json r = d.PostJson("/api/v1/sweeps/" + std::to_string(id1) + "/rerun",
                      {{"verdicts", {"passed"}}, {"configs", json::array({json{{"mode", "flaky"}}})}}, 201);
  json s2 = d.WaitSweep(r["id"]);
  ASSERT_EQ(s2["by_verdict"].value("crashed", 0), 1) << s2.dump();
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "sweep.finished").size() == 2; })) << d.Log();
  EXPECT_EQ(rx.Delivered("/json", "sweep.finished")[1]["body"]["regressions"], 1);
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "regression.found").size() == 1; })) << d.Log();
  EXPECT_EQ(rx.Delivered("/json", "regression.found")[0]["body"]["config"]["mode"], "flaky");
  json regs = d.GetJson("/api/v1/regressions?suite=fixture-flaky");
  EXPECT_TRUE(regs["flaky"].empty()) << regs.dump();

  // Other software (the worker now passes FIXTURE_STACK=broken: another fingerprint) breaks the
  // stack config: that is a regression, with the two trials.
  w.reset();
  ASSERT_TRUE(WaitFor([&] {
    json nodes = d.GetJson("/api/v1/nodes");
    return !nodes["items"].empty() && !nodes["items"][0].value("waiting", true);
  }));
  setenv("FIXTURE_STACK", "broken", 1);
  w = StartWorker(dir.path(), d.url(), "cpu-node", json::object(), {"--pass-env", "FIXTURE_STACK"});
  unsetenv("FIXTURE_STACK");
  json r3 = d.PostJson("/api/v1/sweeps/" + std::to_string(id1) + "/rerun",
                       {{"verdicts", {"passed"}}, {"configs", json::array({json{{"mode", "stack"}}})}}, 201);
  const int64_t id3 = r3["id"];
  json s3 = d.WaitSweep(id3);
  ASSERT_EQ(s3["by_verdict"].value("crashed", 0), 1) << s3.dump();
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "regression.found").size() == 2; })) << d.Log();
  json reg = rx.Delivered("/json", "regression.found")[1]["body"];
  EXPECT_EQ(reg["config"]["mode"], "stack");
  EXPECT_EQ(reg["before"]["verdict"], "passed");
  EXPECT_EQ(reg["before"]["sweep"], id1);
  EXPECT_EQ(reg["after"]["verdict"], "crashed");
  EXPECT_EQ(reg["after"]["sweep"], id3);
  EXPECT_EQ(reg["why"], "verdict");
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "sweep.finished").size() == 3; }));
  EXPECT_EQ(rx.Delivered("/json", "sweep.finished")[2]["body"]["regressions"], 1);
  // The regression's row names the suite version both runs were of: in the API, the CLI's table
  // and its CSV (issue 33: the rows carried none).
  json listed = d.GetJson("/api/v1/regressions?suite=fixture-flaky");
  json stack;
  for (auto& i : listed["items"])
    if (i["config"]["mode"] == "stack") stack = i;
  ASSERT_TRUE(stack.is_object()) << listed.dump();
  EXPECT_EQ(stack["suite_version"], 1) << stack.dump();
  Out table = RunProgram(dir, {GauntletBin(), "regressions", "--suite", "fixture-flaky", "--server", d.url()});
  ASSERT_EQ(table.code, 0) << table.err;
  auto tl = Lines(table.out);
  ASSERT_GE(tl.size(), 2u) << table.out;
  EXPECT_NE(tl[0].find(" version "), std::string::npos) << table.out;
  bool row = false;
  for (auto& l : tl) row = row || (l.find("mode=stack") != std::string::npos && l.find(" v1 ") != std::string::npos);
  EXPECT_TRUE(row) << "no row of the stack config at v1:\n" << table.out;
  Out csv = RunProgram(dir, {GauntletBin(), "regressions", "--suite", "fixture-flaky", "--format", "csv", "--server", d.url()});
  ASSERT_EQ(csv.code, 0) << csv.err;
  auto cl = Lines(csv.out);
  ASSERT_GE(cl.size(), 2u) << csv.out;
  EXPECT_EQ(cl[0].rfind("suite,suite_version,kind,", 0), 0u) << csv.out;
  EXPECT_EQ(cl[1].rfind("fixture-flaky,1,verdict,", 0), 0u) << csv.out;
  // The first Slack hook did not subscribe to regressions; the second gets them, and only them.
  EXPECT_TRUE(rx.Delivered("/slack", "regression.found").empty());
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack-regressions", "regression.found").size() == 2; }));
  const std::string text = rx.Delivered("/slack-regressions", "regression.found")[1]["body"]["text"];
  EXPECT_NE(text.find("Regression in fixture-flaky on cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("its verdict got worse: passed in trial"), std::string::npos) << text;
  EXPECT_NE(text.find("crashed"), std::string::npos) << text;
  EXPECT_TRUE(rx.Delivered("/slack-regressions", "sweep.finished").empty());

  // A node quarantined by an admin is announced to both.
  const int64_t node = d.GetJson("/api/v1/nodes")["items"][0]["id"];
  d.PostJson("/api/v1/nodes/" + std::to_string(node) + "/quarantine", json::object());
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "node.quarantined").size() == 1; })) << d.Log();
  EXPECT_EQ(rx.Delivered("/json", "node.quarantined")[0]["body"]["node"]["name"], "cpu-node");
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack", "node.quarantined").size() == 1; }));
  for (auto& q : rx.Requests()) EXPECT_TRUE(q["signature_ok"].get<bool>()) << q.dump();
  // The records: admin only when tokens are on; here (loopback, no tokens) readable, with filters checked.
  EXPECT_EQ(d.Get("/api/v1/webhooks/deliveries?state=lost").status, 422);
  EXPECT_EQ(d.Get("/api/v1/webhooks/deliveries?colour=1").status, 400);
}

// A config that passed at version 3 in one sweep and failed at version 30 in a later one is a
// regression along the ordered parameter: told as such, with the untested gap and how to bisect it.
TEST(Webhooks, ARegressionAlongAnOrderedParameterIsToldWithItsGap) {
  TempDir dir;
  Receiver rx(dir, "s3cret", 0);
  const std::string config = JsonAndSlackHooks(dir, rx, "regression.found");
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites", {"--config", config});
  net::Client c(d.url(), "");
  auto put = c.Send("PUT", "/api/v1/suites/versions40", OrderedSuite40("versions40").dump());
  ASSERT_TRUE(put.ok());
  ASSERT_EQ(put->status, 201) << put->body;
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object());
  json s1 = d.PostJson("/api/v1/sweeps", {{"suite", "versions40"}, {"parameters", {{"version", {"3"}}, {"backend", {"a"}}}}}, 201);
  d.WaitSweep(s1["id"]);
  json s2 = d.PostJson("/api/v1/sweeps", {{"suite", "versions40"}, {"parameters", {{"version", {"30"}}, {"backend", {"a"}}}}}, 201);
  const int64_t id2 = s2["id"];
  ASSERT_EQ(d.WaitSweep(id2)["by_verdict"].value("crashed", 0), 1);
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "regression.found").size() == 1; })) << d.Log();
  json reg = rx.Delivered("/json", "regression.found")[0]["body"];
  EXPECT_EQ(reg["why"], "ordered") << reg.dump();
  EXPECT_EQ(reg["parameter"], "version");
  EXPECT_EQ(reg["before"]["value"], "3");
  EXPECT_EQ(reg["before"]["sweep"], s1["id"]);
  EXPECT_EQ(reg["after"]["value"], "30");
  EXPECT_EQ(reg["after"]["sweep"], id2);
  EXPECT_EQ(reg["untested"], 26);
  EXPECT_EQ(reg["sweep"], id2);
  ASSERT_TRUE(reg["start"].is_object()) << reg.dump();
  EXPECT_NE(reg["start"]["command"].get<std::string>().find("gauntlet bisect"), std::string::npos) << reg.dump();
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack", "regression.found").size() == 1; }));
  const std::string text = rx.Delivered("/slack", "regression.found")[0]["body"]["text"];
  EXPECT_NE(text.find("along version"), std::string::npos) << text;
  EXPECT_NE(text.find("passed at version=3, failed at 30 (crashed); 26 value(s) between untested"), std::string::npos) << text;
  EXPECT_NE(text.find("start a bisection: `gauntlet bisect"), std::string::npos) << text;
}

// A label in the triage loop re-judges stored trials: receivers hear of it, and of its withdrawal,
// once each, with the trials it changed (docs/USER_GUIDE.md "Webhooks").
TEST(Webhooks, ALabelAndItsWithdrawalAreToldWithTheTrialsTheyRejudged) {
  TempDir dir;
  Receiver rx(dir, "s3cret", 0);
  const std::string config = JsonAndSlackHooks(dir, rx, "verdicts.relabelled");
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/suites", {"--config", config});
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object());
  // exit1 fails saying nothing: unclassified, crashed:exit_code:1.
  json s1 = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"prune", false}, {"reuse", false},
                                          {"parameters", {{"mode", {"exit1"}}, {"dir", {dir.path() + "/runs"}}, {"value", {"1", "2"}}}}},
                       201);
  ASSERT_EQ(d.WaitSweep(s1["id"])["by_verdict"].value("crashed", 0), 2);
  json label = d.PostJson("/api/v1/labels", {{"signature", "crashed:exit_code:1"}, {"verdict", "infra_error"},
                                             {"note", "the node's disk was full"}}, 201);
  ASSERT_EQ(label["rejudged"], 2) << label.dump();
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "verdicts.relabelled").size() == 1; })) << d.Log();
  json told = rx.Delivered("/json", "verdicts.relabelled")[0]["body"];
  EXPECT_EQ(told["action"], "labelled") << told.dump();
  EXPECT_EQ(told["label"]["id"], label["id"]);
  EXPECT_EQ(told["label"]["verdict"], "infra_error");
  EXPECT_EQ(told["label"]["note"], "the node's disk was full");
  EXPECT_EQ(told["rejudged"], 2);
  EXPECT_EQ(told["trials"].size(), 2u);
  EXPECT_EQ(told["dashboard_url"], "http://gauntlet.example:8080/#/triage");
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack", "verdicts.relabelled").size() == 1; }));
  const std::string text = rx.Delivered("/slack", "verdicts.relabelled")[0]["body"]["text"];
  EXPECT_NE(text.find("`crashed:exit_code:1` in every suite is now infra_error; 2 trial(s) re-judged"), std::string::npos) << text;

  d.PostJson("/api/v1/labels/" + label["id"].dump() + "/withdraw", json::object());
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/json", "verdicts.relabelled").size() == 2; })) << d.Log();
  json back = rx.Delivered("/json", "verdicts.relabelled")[1]["body"];
  EXPECT_EQ(back["action"], "withdrawn") << back.dump();
  EXPECT_EQ(back["trials"], told["trials"]);
  // Told once each: a later sweep that finishes (a scan of the notifier) tells nothing again.
  json s2 = d.PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"pass"}}, {"dir", {dir.path() + "/runs"}}}}}, 201);
  d.WaitSweep(s2["id"]);
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/slack", "verdicts.relabelled").size() == 2; }));
  EXPECT_EQ(rx.Delivered("/json", "verdicts.relabelled").size(), 2u);
}

TEST(Webhooks, APendingDeliveryOutlivesADaemonKilledMidRetry) {
  TempDir dir;
  const std::string ok = dir.path() + "/receiver-ok";
  Receiver rx(dir, "k3y", 0, ok);  // refuses everything until `ok` exists
  const std::string config = dir.Write("gauntlet.json", json{{"webhook_retry", {{"backoff_ms", 50}, {"max_backoff_ms", 100}}},
                                                             {"webhooks", {{{"url", rx.url("/hook")}, {"secret", "k3y"},
                                                                            {"events", {"sweep.finished"}}}}}}
                                                            .dump());
  auto d = std::make_unique<Daemon>(dir.path(), SourceDir() + "/tests/fixtures/suites", std::vector<std::string>{"--config", config});
  auto w = StartWorker(dir.path(), d->url(), "cpu-node", json::object());
  json s = d->PostJson("/api/v1/sweeps", {{"suite", "fixture-flaky"}, {"parameters", {{"mode", {"pass"}}}}}, 201);
  d->WaitSweep(s["id"]);
  // Refused at least twice: the delivery is pending, being retried.
  ASSERT_TRUE(WaitFor([&] { return rx.Requests().size() >= 2; })) << d->Log();
  json pending = d->GetJson("/api/v1/webhooks/deliveries?state=pending")["items"];
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0]["last_status"], 503);
  d->Kill();
  std::ofstream(ok) << "ok";
  const size_t tries_before = rx.Requests().size();
  d->Start();
  ASSERT_TRUE(WaitFor([&] { return rx.Delivered("/hook", "sweep.finished").size() == 1; })) << d->Log();
  json got = rx.Delivered("/hook", "sweep.finished")[0];
  EXPECT_TRUE(got["signature_ok"].get<bool>());
  EXPECT_EQ(got["body"]["sweep"]["id"], s["id"]);
  EXPECT_GT(rx.Requests().size(), tries_before);
  // The receiver has the body before the daemon has stored the answer it got: wait for the record.
  json rec;
  WaitFor([&] {
    rec = d->GetJson("/api/v1/webhooks/deliveries")["items"];
    return rec.size() != 1u || rec[0]["state"] == "delivered";
  });
  ASSERT_EQ(rec.size(), 1u);  // the restart queued nothing twice
  EXPECT_EQ(rec[0]["state"], "delivered");
  EXPECT_EQ(rec[0]["last_status"], 200);
  // And nothing more arrives: a second, later restart announces no sweep again.
  d->Stop();
  d->Start();
  json again = d->GetJson("/api/v1/webhooks/deliveries")["items"];
  EXPECT_EQ(again.size(), 1u);
}

TEST(Webhooks, ABadConfigStopsTheDaemonWithTheFieldAtFault) {
  TempDir dir;
  const std::string bad = dir.Write("bad.yaml", "webhooks:\n  - url: http://127.0.0.1:9/x\n    events: [sweep.done]\n");
  Out o = RunProgram(dir, {GauntletBin(), "serve", "--db", dir.path() + "/g.db", "--listen", "127.0.0.1:0", "--config", bad});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("webhooks[0].events[0]"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("sweep.done"), std::string::npos) << o.err;
  Out ftp = RunProgram(dir, {GauntletBin(), "serve", "--db", dir.path() + "/g.db", "--listen", "127.0.0.1:0", "--webhook",
                             "ftp://hooks.example/x,sweep.finished"});
  EXPECT_EQ(ftp.code, 2);
  EXPECT_NE(ftp.err.find("http:// or https://"), std::string::npos) << ftp.err;
}

}  // namespace
}  // namespace gauntlet::test
