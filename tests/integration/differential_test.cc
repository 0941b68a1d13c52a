// Differential validation end to end, on the fixture server (runs everywhere): through a real
// daemon and worker, the reference config's trial runs first, the daemon hands its recorded smoke
// answers to the other trials, a config with the same answers passes, one whose logprobs moved is
// wrong_output; after a restart the reference comes from the store; a reference that crashed
// judges nobody.
#include <gtest/gtest.h>

#include <map>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

std::string DifferentialSuites() { return SourceDir() + "/tests/fixtures/differential"; }

// The sweep's trials by "mode/shift/variant" (variant may be absent).
std::map<std::string, json> DifferentialTrials(Daemon& d, int64_t sweep) {
  std::map<std::string, json> by;
  const json items = d.GetJson("/api/v1/trials?limit=50&sweep=" + std::to_string(sweep))["items"];
  for (auto& it : items) {
    json t = d.GetJson("/api/v1/trials/" + it["id"].dump());
    const json& c = t["config"];
    by[c["mode"].get<std::string>() + "/" + c["shift"].get<std::string>() + "/" + c.value("variant", "")] = t;
  }
  return by;
}

json Serve(const json& trial) {
  for (auto& st : trial["result"]["stages"])
    if (st["name"] == "serve") return st;
  return json();
}

int64_t Submit(Daemon& d, const json& body) {
  json s = d.PostJson("/api/v1/sweeps", body, 201);
  json done = d.WaitSweep(s["id"], std::chrono::seconds(60));
  EXPECT_TRUE(done["finished"].get<bool>()) << done.dump();
  return s["id"].get<int64_t>();
}

TEST(Differential, JudgedAgainstTheReferenceTrialsAnswers) {
  TempDir dir;
  Daemon d(dir.path(), DifferentialSuites());
  auto worker = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "2000"});
  // Queued before the reference, leased after it.
  const int64_t s1 = Submit(d, {{"suite", "fixture-differential"}, {"prune", false}, {"reuse", false},
                                {"parameters", {{"mode", {"healthy"}}, {"shift", {"0", "0.5"}}, {"variant", {"b", "a"}}}}});
  auto by = DifferentialTrials(d, s1);
  ASSERT_EQ(by.size(), 4u);
  const json& ref = by["healthy/0/a"];
  ASSERT_EQ(ref["verdict"], "passed") << ref.dump();
  EXPECT_EQ(Serve(ref)["differential"]["role"], "reference") << ref.dump();
  ASSERT_EQ(Serve(ref)["smoke_answers"].size(), 2u) << ref.dump();
  EXPECT_EQ(Serve(ref)["smoke_answers"][0]["text"], " Paris. It is known for the Eiffel") << ref.dump();
  for (auto& [k, t] : by) {
    if (k == "healthy/0/a") continue;
    EXPECT_LE(ref["finished_at"].get<int64_t>(), t["started_at"].get<int64_t>()) << k << " started before the reference ended";
  }
  const json& same = by["healthy/0/b"];
  EXPECT_EQ(same["verdict"], "passed") << same.dump();
  EXPECT_EQ(Serve(same)["differential"]["role"], "checked") << same.dump();
  EXPECT_EQ(Serve(same)["differential"]["checked"], 2) << same.dump();
  EXPECT_EQ(Serve(same)["differential"]["reference_trial"], ref["id"]) << same.dump();
  for (const char* k : {"healthy/0.5/a", "healthy/0.5/b"}) {
    const json& moved = by[k];
    EXPECT_EQ(moved["verdict"], "wrong_output") << k << moved.dump();
    EXPECT_EQ(moved["signature"], "wrong_output:differential:logprob") << k << moved.dump();
    const std::string ev = moved["result"]["evidence"];
    EXPECT_NE(ev.find("smoke[0] disagrees with the reference (trial " + ref["id"].dump() +
                      ", mode=healthy shift=0 variant=a) from token 0: reference continues \" Paris."),
              std::string::npos)
        << ev;
    EXPECT_NE(ev.find("(|Δ| 0.5 > tolerance 0.02)"), std::string::npos) << ev;
  }

  // After a restart the daemon holds no answers in memory: a sweep without the reference config is
  // judged against the stored one.
  d.Stop();
  d.Start();
  const int64_t s2 = Submit(d, {{"suite", "fixture-differential"}, {"prune", false}, {"reuse", false},
                                {"parameters", {{"mode", {"healthy"}}, {"shift", {"0.5"}}, {"variant", {"b"}}}}});
  auto by2 = DifferentialTrials(d, s2);
  ASSERT_EQ(by2.size(), 1u);
  const json& later = by2.begin()->second;
  EXPECT_EQ(later["verdict"], "wrong_output") << later.dump();
  EXPECT_EQ(Serve(later)["differential"]["reference_trial"], ref["id"]) << later.dump();
}

// Issue 29: with no logprob_tolerance, the default used to be 0.5 whatever the dtypes, so a backend
// whose logits are biased by 0.6 standard deviations (logprobs 0.07-0.21 off, the fixture's
// model_logprob) passed against a reference of its own dtype. Now the same dtype means the tight
// default; another dtype keeps the loose one, and each trial says which it got.
TEST(Differential, TheDefaultToleranceIsTightAgainstAReferenceOfTheSameDtype) {
  TempDir dir;
  Daemon d(dir.path(), DifferentialSuites());
  auto worker = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "2000"});
  const int64_t s = Submit(d, {{"suite", "fixture-dtype"}, {"prune", false}, {"reuse", false},
                               {"parameters", {{"dtype", {"fp32"}}, {"bias", {"0", "0.6"}}}},
                               {"include", {{{"dtype", "bf16"}, {"bias", "0"}}}}});
  std::map<std::string, json> by;
  const json items = d.GetJson("/api/v1/trials?limit=50&sweep=" + std::to_string(s))["items"];
  for (auto& it : items) {
    json t = d.GetJson("/api/v1/trials/" + it["id"].dump());
    by[t["config"]["dtype"].get<std::string>() + "/" + t["config"]["bias"].get<std::string>()] = t;
  }
  ASSERT_EQ(by.size(), 3u);
  ASSERT_EQ(by["fp32/0"]["verdict"], "passed") << by["fp32/0"].dump();
  const json& biased = by["fp32/0.6"];
  EXPECT_EQ(biased["verdict"], "wrong_output") << biased.dump();
  EXPECT_EQ(biased["signature"], "wrong_output:differential:logprob") << biased.dump();
  EXPECT_EQ(Serve(biased)["differential"]["tolerance"], 0.05) << biased.dump();
  EXPECT_EQ(Serve(biased)["differential"]["tolerance_basis"], "default: same dtype") << biased.dump();
  EXPECT_NE(biased["result"]["evidence"].get<std::string>().find("> tolerance 0.05)"), std::string::npos)
      << biased["result"]["evidence"];
  // bf16 against the fp32 reference: rounding alone moves logprobs, so the loose default applies.
  const json& other = by["bf16/0"];
  EXPECT_EQ(other["verdict"], "passed") << other.dump();
  EXPECT_EQ(Serve(other)["differential"]["role"], "checked") << other.dump();
  EXPECT_EQ(Serve(other)["differential"]["tolerance"], 0.5) << other.dump();
  EXPECT_EQ(Serve(other)["differential"]["tolerance_basis"], "default: other dtype") << other.dump();
}

TEST(Differential, AReferenceThatCrashedJudgesNobody) {
  TempDir dir;
  Daemon d(dir.path(), DifferentialSuites());
  auto worker = StartWorker(dir.path(), d.url(), "w", json::object(), {"--kill-grace-ms", "2000"});
  const int64_t s = Submit(d, {{"suite", "fixture-bad-reference"}, {"prune", false}, {"reuse", false},
                               {"parameters", {{"mode", {"healthy", "crash_on_load"}}, {"shift", {"0"}}}},
                               {"include", {{{"mode", "healthy"}, {"shift", "0.5"}}}}});
  auto by = DifferentialTrials(d, s);
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ(by["crash_on_load/0/"]["verdict"], "crashed") << by["crash_on_load/0/"].dump();
  for (const char* k : {"healthy/0/", "healthy/0.5/"}) {
    const json& t = by[k];
    EXPECT_EQ(t["verdict"], "passed") << k << t.dump();
    json diff = Serve(t)["differential"];
    EXPECT_EQ(diff["role"], "unchecked") << k << t.dump();
    EXPECT_NE(diff["reason"].get<std::string>().find("ended crashed"), std::string::npos) << diff.dump();
    const std::string log = d.Get("/api/v1/trials/" + t["id"].dump() + "/log").body;
    EXPECT_NE(log.find("differential check skipped: the reference trial " + by["crash_on_load/0/"]["id"].dump()),
              std::string::npos)
        << log;
  }
}

}  // namespace
}  // namespace gauntlet::test
