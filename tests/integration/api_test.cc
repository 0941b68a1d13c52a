// The REST API over real HTTP on loopback against a real `gauntlet serve`: every error code, the
// happy paths, tokens, keep-alive, restart persistence and a clean stop.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "http/auth.h"
#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;


class ApiTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::unique_ptr<Daemon> d = std::make_unique<Daemon>(dir.path(), FixtureSuites());

  json Problem(const net::ClientResponse& r, int status) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.content_type, "application/problem+json") << r.body;
    json j = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(j.is_object());
    EXPECT_EQ(j.value("status", 0), status);
    return j;
  }
};

TEST_F(ApiTest, HealthAndOpenApi) {
  json h = d->GetJson("/api/v1/health");
  EXPECT_EQ(h["status"], "ok");
  EXPECT_FALSE(h["version"].get<std::string>().empty());
  json doc = d->GetJson("/api/v1/openapi.json");
  EXPECT_TRUE(doc["paths"].contains("/api/v1/sweeps"));
}

TEST_F(ApiTest, RoutingErrors) {
  Problem(d->Get("/api/v1/nope"), 404);
  net::Client c(d->url(), "");
  auto r = c.Send("DELETE", "/api/v1/sweeps");
  ASSERT_TRUE(r.ok());
  Problem(*r, 405);
  EXPECT_EQ(r->Header("Allow"), "POST, GET");
  Problem(d->Get("/api/v1/sweeps/abc"), 404);
  Problem(d->Get("/api/v1/trials/999999"), 404);
}

TEST_F(ApiTest, BodyErrors) {
  json p = Problem(d->Post("/api/v1/sweeps", "{\"suite\": "), 400);
  EXPECT_EQ(p["field"], "body");
  std::string deep = std::string(65, '[') + std::string(65, ']');
  p = Problem(d->Post("/api/v1/sweeps", "{\"suite\": " + deep + "}"), 400);
  EXPECT_NE(p["detail"].get<std::string>().find("deeper"), std::string::npos);
  net::Client c(d->url(), "");
  auto big = c.Send("POST", "/api/v1/sweeps", std::string((1 << 20) + 10, ' '));
  ASSERT_TRUE(big.ok()) << big.status().message();
  Problem(*big, 413);
  // The daemon is still healthy after all of that.
  EXPECT_EQ(d->Get("/api/v1/health").status, 200);
}

TEST_F(ApiTest, SweepValidationNamesTheField) {
  auto field = [&](const json& body, int status) {
    json p = Problem(d->Post("/api/v1/sweeps", body.dump()), status);
    return p.value("field", "");
  };
  field({{"suite", "no-such-suite"}}, 404);
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"parameters", {{"colour", {"red"}}}}}, 422), "parameters.colour");
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"teleport"}}}}}, 422), "parameters.mode");
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"parameters", {{"seconds", {"soon"}}}}}, 422), "parameters.seconds");
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass"}}}}, {"exclude", {{{"mode", "pass"}}}}}, 422),
            "exclude");
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"max_trials", 3}}, 422), "max_trials");
  EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"targets", {{{"arch", "hopper"}}}}}, 422), "targets[0].arch");
  for (const json& price : {json(0), json(-2), json("cheap")})
    EXPECT_EQ(field({{"suite", "fixture-cmd"}, {"targets", {{{"arch", "sm_90"}}, {{"cost_per_gpu_hour", price}}}}}, 422),
              "targets[1].cost_per_gpu_hour");
  // Nothing of those was stored.
  EXPECT_EQ(d->GetJson("/api/v1/sweeps")["items"].size(), 0u);
}

TEST_F(ApiTest, SubmitListFilterPageAndCancel) {
  json created = d->PostJson("/api/v1/sweeps",
                             {{"suite", "fixture-cmd"}, {"name", "first"}, {"parameters", {{"tag", {"a", "b", "c"}}}},
                              {"targets", {json::object(), {{"arch", "sm_90"}}}}},
                             201);
  const int64_t id = created["id"];
  EXPECT_EQ(created["trials"], 8 * 3 * 2);
  json sw = d->GetJson("/api/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(sw["trials"], 48);
  EXPECT_EQ(sw["by_state"]["queued"], 48);
  EXPECT_EQ(sw["unmatched_targets"].size(), 2u);  // no node is registered at all
  // Filters and paging.
  json page = d->GetJson("/api/v1/trials?sweep=" + std::to_string(id) + "&param.mode=fail&limit=4");
  EXPECT_EQ(page["items"].size(), 4u);
  for (auto& t : page["items"]) EXPECT_EQ(t["config"]["mode"], "fail");
  json rest = d->GetJson("/api/v1/trials?sweep=" + std::to_string(id) + "&param.mode=fail&limit=4&after=" +
                         page["next"].dump());
  EXPECT_EQ(rest["items"].size(), 2u);
  EXPECT_TRUE(rest["next"].is_null());
  auto csv = d->Get("/api/v1/trials?sweep=" + std::to_string(id) + "&state=queued&format=csv&limit=1000");
  EXPECT_EQ(csv.status, 200);
  EXPECT_EQ(csv.content_type.rfind("text/csv", 0), 0u);
  EXPECT_EQ(std::count(csv.body.begin(), csv.body.end(), '\n'), 49);
  EXPECT_NE(csv.body.find("param.mode"), std::string::npos);
  json one = d->GetJson("/api/v1/trials/" + page["items"][0]["id"].dump());
  EXPECT_EQ(one["state"], "queued");
  Problem(d->Get("/api/v1/trials?bogus=1"), 400);
  // Cancel: every queued trial ends cancelled.
  json c = d->PostJson("/api/v1/sweeps/" + std::to_string(id) + "/cancel", json::object());
  EXPECT_EQ(c["by_verdict"]["cancelled"], 48);
  EXPECT_TRUE(c["finished"].get<bool>());
}

TEST_F(ApiTest, SuitesListShowAndVersionedPut) {
  json list = d->GetJson("/api/v1/suites");
  EXPECT_GE(list["items"].size(), 2u);
  json s = d->GetJson("/api/v1/suites/fixture-cmd");
  EXPECT_EQ(s["version"], 1);
  json def = s["definition"];
  def["description"] = "changed";
  net::Client c(d->url(), "");
  auto put = c.Send("PUT", "/api/v1/suites/fixture-cmd", def.dump());
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->status, 201) << put->body;
  EXPECT_EQ(json::parse(put->body)["version"], 2);
  EXPECT_EQ(d->GetJson("/api/v1/suites/fixture-cmd?version=1")["description"], "Test fixture: a command stage whose behaviour the parameters choose");
  def["stages"][0]["kind"] = "teleport";
  auto bad = c.Send("PUT", "/api/v1/suites/fixture-cmd", def.dump());
  json p = Problem(*bad, 422);
  EXPECT_EQ(p["field"], "stages[0].kind");
}

TEST_F(ApiTest, TrialsSortByAKnownColumnAndNameTheFieldOtherwise) {
  d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}}}}, 201);
  json asc = d->GetJson("/api/v1/trials?sort=config&limit=10000");
  json desc = d->GetJson("/api/v1/trials?sort=config&desc=1&limit=10000");
  ASSERT_GE(asc["items"].size(), 2u);
  std::vector<std::string> a, b;
  for (auto& t : asc["items"]) a.push_back(t["config"].value("mode", ""));
  for (auto& t : desc["items"]) b.push_back(t["config"].value("mode", ""));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end())) << asc.dump();
  std::reverse(b.begin(), b.end());
  EXPECT_EQ(a, b) << desc.dump();
  net::Client c(d->url(), "");
  auto bad = c.Send("GET", "/api/v1/trials?sort=colour");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(Problem(*bad, 422)["field"], "sort");
  auto flag = c.Send("GET", "/api/v1/trials?sort=verdict&desc=maybe");
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(Problem(*flag, 400)["field"], "desc");
}

TEST_F(ApiTest, KeepAliveServesManyRequestsOnOneConnection) {
  net::Client c(d->url(), "");
  for (int i = 0; i < 50; ++i) {
    auto r = c.Send("GET", "/api/v1/health");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200);
  }
}

TEST_F(ApiTest, AnAcknowledgedSweepSurvivesSigkill) {
  json created = d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}, {"parameters", {{"mode", {"pass", "fail"}}}}}, 201);
  d->Kill();
  d->Start();
  json sw = d->GetJson("/api/v1/sweeps/" + created["id"].dump());
  EXPECT_EQ(sw["trials"], 2);
  EXPECT_EQ(sw["by_state"]["queued"], 2);
}

TEST_F(ApiTest, SigtermStopsCleanlyAndARestartSeesEverything) {
  d->PostJson("/api/v1/sweeps", {{"suite", "fixture-cmd"}}, 201);
  int st = d->Stop();
  ASSERT_TRUE(WIFEXITED(st)) << d->Log();
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_NE(d->Log().find("stopped cleanly"), std::string::npos);
  d->Start();
  EXPECT_EQ(d->GetJson("/api/v1/sweeps")["items"].size(), 1u);
}

TEST(ApiAccess, TokensRolesAndRefusingAnOpenBind) {
  TempDir dir;
  std::ofstream(dir.path() + "/tokens") << "read sha256:" << http::Sha256Hex("reader") << "\nsubmit sha256:"
                                        << http::Sha256Hex("submitter") << "\nadmin sha256:" << http::Sha256Hex("boss")
                                        << "\n";
  Daemon d(dir.path(), FixtureSuites(), {"--tokens", dir.path() + "/tokens"});
  EXPECT_EQ(d.Get("/api/v1/sweeps").status, 401);
  EXPECT_EQ(d.Get("/api/v1/sweeps", "reader").status, 200);
  const std::string body = json{{"suite", "fixture-cmd"}}.dump();
  EXPECT_EQ(d.Post("/api/v1/sweeps", body, "reader").status, 403);
  EXPECT_EQ(d.Post("/api/v1/sweeps", body, "submitter").status, 201);
  EXPECT_EQ(d.Post("/api/v1/nodes/register", "{}", "submitter").status, 403);
  net::Client admin(d.url(), "boss");
  auto put = admin.Send("PUT", "/api/v1/suites/fixture-cmd", d.Get("/api/v1/suites/fixture-cmd", "boss").body);
  ASSERT_TRUE(put.ok());
  EXPECT_NE(put->status, 403);
  EXPECT_EQ(d.Get("/", "").status == 200 || d.Get("/", "").status == 404, true);  // public, even with tokens

  TempDir other;
  Child open({GauntletBin(), "serve", "--db", other.path() + "/x.db", "--suites", FixtureSuites(), "--listen", "0.0.0.0:0"},
             other.path() + "/log");
  int st = open.Wait(std::chrono::seconds(20));
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  EXPECT_NE(open.Log().find("--tokens"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet::test
