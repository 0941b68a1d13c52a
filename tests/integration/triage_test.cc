// The triage loop end to end (docs/CLASSIFIER.md "Triage"): real daemon and worker processes on
// loopback run a stage that fails with words no rule knows; the failures are unclassified, listed
// by GET /api/v1/triage, labelled by an admin (every stored trial re-judged, its previous verdict in
// the audit trail, the matrix with it, a later run judged by the label too), and withdrawn.
#include <gtest/gtest.h>

#include <fstream>

#include "http/auth.h"
#include "tests/integration/cli_fixture.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

net::ClientResponse TriageCall(const Daemon& d, const std::string& method, const std::string& target,
                               const std::string& token, const std::string& body = "{}") {
  net::Client c(d.url(), token);
  auto r = c.Send(method, target, body);
  EXPECT_TRUE(r.ok()) << method << " " << target << ": " << r.status().message();
  return r.ok() ? *r : net::ClientResponse{};
}

json TriageBody(const net::ClientResponse& r) { return json::parse(r.body, nullptr, false); }

// A suite whose stage prints a line no rule reads and exits 3: a failure only the exit status judges.
json FrobSuite() {
  return {{"name", "frob"},
          {"parameters", {{"tag", {"a", "b"}}}},
          {"stages", json::array({{{"name", "run"},
                                   {"kind", "command"},
                                   {"argv", {"python3", "-c", "import sys; print('frobnicator gave up (code 7)'); sys.exit(3)",
                                             "{tag}"}}}})}};
}

TEST(Triage, LabelARejudgesEveryTrialKeepsTheAuditAndCanBeWithdrawn) {
  TempDir dir;
  std::ofstream(dir.path() + "/tokens") << "worker sha256:" << http::Sha256Hex("fleet-token") << "\n"
                                        << "admin sha256:" << http::Sha256Hex("boss") << "\n"
                                        << "read sha256:" << http::Sha256Hex("viewer") << "\n";
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", dir.path() + "/tokens"});
  ASSERT_EQ(TriageCall(d, "PUT", "/api/v1/suites/frob", "boss", FrobSuite().dump()).status, 201);
  auto w = StartWorker(dir.path(), d.url(), "cpu-node", json::object(), {"--token", "fleet-token"});
  const json submit = {{"suite", "frob"}, {"parameters", {{"tag", {"a", "b"}}}}, {"prune", false}, {"reuse", false}};
  auto s1 = TriageCall(d, "POST", "/api/v1/sweeps", "boss", submit.dump());
  ASSERT_EQ(s1.status, 201) << s1.body;
  const int64_t id1 = TriageBody(s1)["id"];
  ASSERT_TRUE(WaitFor([&] {
    auto s = TriageCall(d, "GET", "/api/v1/sweeps/" + std::to_string(id1), "viewer");
    return TriageBody(s)["by_verdict"].value("crashed", 0) == 2;
  }, std::chrono::seconds(120))) << d.Log();

  // Unclassified: a failure, with the line the classifier would have used.
  json trials = TriageBody(TriageCall(d, "GET", "/api/v1/trials?sweep=" + std::to_string(id1), "viewer"))["items"];
  ASSERT_EQ(trials.size(), 2u);
  const std::string t0 = trials[0]["id"].dump();
  json trial = TriageBody(TriageCall(d, "GET", "/api/v1/trials/" + t0, "viewer"));
  EXPECT_EQ(trial["verdict"], "crashed");
  EXPECT_EQ(trial["signature"], "crashed:exit_code:3");
  EXPECT_EQ(trial["basis"], "exit_status");
  EXPECT_EQ(trial["unclassified"], true);
  EXPECT_EQ(trial["result"]["evidence"], "frobnicator gave up (code 7)");
  json matrix = TriageBody(TriageCall(d, "GET", "/api/v1/matrix?suite=frob&rows=tag", "viewer"));
  EXPECT_NE(matrix.dump().find("\"unclassified\":true"), std::string::npos) << matrix.dump();

  // The triage list groups them, with an example trial.
  json triage = TriageBody(TriageCall(d, "GET", "/api/v1/triage", "viewer"));
  ASSERT_EQ(triage["items"].size(), 1u) << triage.dump();
  const json& item = triage["items"][0];
  EXPECT_EQ(item["signature"], "crashed:exit_code:3");
  EXPECT_EQ(item["evidence"], "frobnicator gave up (code 7)");
  EXPECT_EQ(item["trials"], 2);
  EXPECT_EQ(item["suites"], json::array({"frob"}));
  EXPECT_EQ(TriageCall(d, "GET", "/api/v1/triage?suite=nope", "viewer").status, 404);

  // The CLI says the same, and how to label one.
  Out listed = RunProgram(dir, {GauntletBin(), "triage", "--server", d.url(), "--token", "viewer"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("crashed:exit_code:3"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("frobnicator gave up (code 7)"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("gauntlet triage label"), std::string::npos) << listed.out;
  Out cli_trials = RunProgram(dir, {GauntletBin(), "trials", "--sweep", std::to_string(id1), "--server", d.url(), "--token", "viewer"});
  EXPECT_NE(cli_trials.out.find("crashed (unclassified)"), std::string::npos) << cli_trials.out;

  // Only an admin labels; a bad verdict is refused naming the field, and nothing changes.
  const json label = {{"signature", "crashed:exit_code:3"}, {"match", "frobnicator gave up"}, {"verdict", "unsupported"},
                      {"suite", "frob"}, {"note", "the frobnicator is not built for this GPU"}};
  EXPECT_EQ(TriageCall(d, "POST", "/api/v1/labels", "viewer", label.dump()).status, 403);
  json bad = label;
  bad["verdict"] = "exploded";
  auto refused = TriageCall(d, "POST", "/api/v1/labels", "boss", bad.dump());
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(TriageBody(refused)["field"], "verdict") << refused.body;
  auto added = TriageCall(d, "POST", "/api/v1/labels", "boss", label.dump());
  ASSERT_EQ(added.status, 201) << added.body;
  const json l = TriageBody(added);
  EXPECT_EQ(l["rejudged"], 2);
  EXPECT_EQ(l["created_by"], "sha256:" + http::Sha256Hex("boss").substr(0, 12));
  const std::string new_sig = l["new_signature"];

  // Every stored trial re-judged, its previous verdict in its audit trail; the matrix agrees.
  trial = TriageBody(TriageCall(d, "GET", "/api/v1/trials/" + t0, "viewer"));
  EXPECT_EQ(trial["verdict"], "unsupported");
  EXPECT_EQ(trial["signature"], new_sig);
  EXPECT_EQ(trial["basis"], "label");
  EXPECT_EQ(trial["unclassified"], false);
  ASSERT_EQ(trial["audit"].size(), 1u) << trial.dump();
  EXPECT_EQ(trial["audit"][0]["from"]["verdict"], "crashed");
  EXPECT_EQ(trial["audit"][0]["from"]["signature"], "crashed:exit_code:3");
  matrix = TriageBody(TriageCall(d, "GET", "/api/v1/matrix?suite=frob&rows=tag", "viewer"));
  EXPECT_EQ(matrix.dump().find("\"crashed\""), std::string::npos) << matrix.dump();
  EXPECT_NE(matrix.dump().find("\"unsupported\""), std::string::npos) << matrix.dump();
  EXPECT_TRUE(TriageBody(TriageCall(d, "GET", "/api/v1/triage", "viewer"))["items"].empty());

  // A trial reported after the label is judged by it too.
  auto s2 = TriageCall(d, "POST", "/api/v1/sweeps", "boss", submit.dump());
  ASSERT_EQ(s2.status, 201) << s2.body;
  const int64_t id2 = TriageBody(s2)["id"];
  ASSERT_TRUE(WaitFor([&] {
    auto s = TriageCall(d, "GET", "/api/v1/sweeps/" + std::to_string(id2), "viewer");
    return TriageBody(s)["by_verdict"].value("unsupported", 0) == 2;
  }, std::chrono::seconds(120))) << d.Log();

  Out labels_cli = RunProgram(dir, {GauntletBin(), "triage", "labels", "--server", d.url(), "--token", "viewer"});
  ASSERT_EQ(labels_cli.code, 0) << labels_cli.err;
  EXPECT_NE(labels_cli.out.find("frobnicator gave up"), std::string::npos) << labels_cli.out;

  // Withdrawn (through the CLI): every trial it judged goes back, recorded; the triage list has them again.
  Out viewer_withdraw = RunProgram(dir, {GauntletBin(), "triage", "withdraw", l["id"].dump(), "--server", d.url(), "--token", "viewer"});
  EXPECT_EQ(viewer_withdraw.code, 2);
  Out withdrawn_cli = RunProgram(dir, {GauntletBin(), "triage", "withdraw", l["id"].dump(), "--server", d.url(), "--token", "boss"});
  ASSERT_EQ(withdrawn_cli.code, 0) << withdrawn_cli.err;
  EXPECT_NE(withdrawn_cli.out.find("4 trial(s) back"), std::string::npos) << withdrawn_cli.out;
  EXPECT_EQ(TriageCall(d, "POST", "/api/v1/labels/" + l["id"].dump() + "/withdraw", "boss").status, 422);
  trial = TriageBody(TriageCall(d, "GET", "/api/v1/trials/" + t0, "viewer"));
  EXPECT_EQ(trial["verdict"], "crashed");
  EXPECT_EQ(trial["signature"], "crashed:exit_code:3");
  EXPECT_EQ(trial["unclassified"], true);
  EXPECT_EQ(trial["basis"], "exit_status");  // what it was judged from before the label, kept in the audit
  EXPECT_EQ(trial["audit"].size(), 2u);
  EXPECT_EQ(TriageBody(TriageCall(d, "GET", "/api/v1/triage", "viewer"))["items"][0]["trials"], 4);
  json labels = TriageBody(TriageCall(d, "GET", "/api/v1/labels", "viewer"))["items"];
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_FALSE(labels[0]["withdrawn_at"].is_null());
}

}  // namespace
}  // namespace gauntlet::test
