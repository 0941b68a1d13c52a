// Differential validation on recorded streams (openai/smoke_diff.h, workers/differential.h,
// core/smoke_reference.h): the comparison rules, both logprob shapes servers send, the stored form,
// and the suite fields that declare a reference. The streams are shaped on what hf-serve answered
// on the H200 (2026-12-01, "The capital of France is", 24 tokens): eager fp32 and bf16 agree for
// five tokens and part at a near tie (gap 0.015); the perturbed layer keeps the tokens for fifteen
// but moves the first logprob by 0.047.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/smoke_reference.h"
#include "core/suite.h"
#include "workers/differential.h"
#include "openai/smoke_diff.h"

namespace gauntlet {
using openai::AnswerFromJson;
using openai::AnswerJson;
using openai::CompareAnswers;
using openai::DiffResult;
using openai::SmokeAnswer;
using openai::StepsFromLogprobs;
using openai::TokenStep;
namespace {
using nlohmann::json;

// A step whose top-5 is `top` (best first); the chosen token is the first.
TokenStep Step(std::vector<std::pair<std::string, double>> top) {
  TokenStep s;
  s.token = top[0].first;
  s.logprob = top[0].second;
  s.top = std::move(top);
  return s;
}

SmokeAnswer Ref() {
  SmokeAnswer a;
  a.steps = {Step({{"#", -0.8542}, {"$", -1.35}, {"a", -2.1}, {"b", -3.0}, {"c", -3.2}}),
             Step({{"5", -0.8837}, {"6", -2.04}, {"x", -2.5}, {"y", -3.1}, {"z", -3.3}}),
             Step({{"-", -0.7595}, {"+", -1.73}, {"=", -2.6}, {"*", -3.0}, {"/", -3.4}}),
             Step({{"}", -1.6689}, {"!", -1.6839}, {"k", -2.9}, {"m", -3.0}, {"n", -3.1}}),
             Step({{"*", -1.3198}, {"q", -1.52}, {"r", -2.2}, {"s", -2.8}, {"t", -3.0}})};
  for (auto& s : a.steps) a.text += s.token;
  return a;
}

SmokeAnswer With(SmokeAnswer a, size_t i, std::vector<std::pair<std::string, double>> top) {
  a.steps.resize(i);
  a.steps.push_back(Step(std::move(top)));
  a.text.clear();
  for (auto& s : a.steps) a.text += s.token;
  return a;
}

TEST(SmokeDiff, IdenticalAnswersAgreeAtEveryPosition) {
  DiffResult d = CompareAnswers(Ref(), Ref(), 0.02);
  EXPECT_TRUE(d.agree);
  EXPECT_FALSE(d.excused);
  EXPECT_EQ(d.compared, 5);
  EXPECT_EQ(d.position, -1);
}

TEST(SmokeDiff, LogprobsWithinTheToleranceAgree) {
  SmokeAnswer c = Ref();
  c.steps[0].logprob += 0.015;
  c.steps[2].logprob -= 0.019;
  EXPECT_TRUE(CompareAnswers(Ref(), c, 0.02).agree);
}

TEST(SmokeDiff, APerturbedLayerIsCaughtByTheLogprobAtTheFirstToken) {
  SmokeAnswer c = Ref();
  c.steps[0].logprob = -0.8069;  // the --fault layer trial's first logprob, tokens unchanged
  DiffResult d = CompareAnswers(Ref(), c, 0.02);
  EXPECT_FALSE(d.agree);
  EXPECT_EQ(d.kind, "logprob");
  EXPECT_EQ(d.position, 0);
  EXPECT_NE(d.reason.find("(|Δ| 0.0473 > tolerance 0.02)"), std::string::npos) << d.reason;
  EXPECT_EQ(d.reference_continuation, "#5-}*");
  // The same difference is inside bf16's tolerance.
  EXPECT_TRUE(CompareAnswers(Ref(), c, 0.8).agree);
}

TEST(SmokeDiff, ANearTieIsExcusedAndTheComparisonStopsThere) {
  // bf16 chose '!' where fp32 chose '}' (fp32's second, 0.015 behind); after that anything goes.
  SmokeAnswer c = With(Ref(), 3, {{"!", -1.60}, {"}", -1.62}, {"k", -2.8}, {"m", -3.0}, {"n", -3.1}});
  c.steps.push_back(Step({{"Y", -0.1}, {"h", -3.0}, {"L", -3.5}, {"E", -3.6}, {"G", -3.7}}));
  DiffResult d = CompareAnswers(Ref(), c, 0.8);
  EXPECT_TRUE(d.agree) << d.reason;
  EXPECT_TRUE(d.excused);
  EXPECT_EQ(d.position, 3);
  EXPECT_EQ(d.compared, 3);
  EXPECT_EQ(d.candidate_continuation, "!Y");
}

TEST(SmokeDiff, ATokenOutsideTheReferencesTopKIsWrong) {
  SmokeAnswer c = With(Ref(), 3, {{"@", -0.5}, {"}", -1.9}, {"k", -2.8}, {"m", -3.0}, {"n", -3.1}});
  DiffResult d = CompareAnswers(Ref(), c, 0.8);
  EXPECT_FALSE(d.agree);
  EXPECT_EQ(d.kind, "token");
  EXPECT_EQ(d.position, 3);
  EXPECT_NE(d.reason.find("'@' is not in the reference's top"), std::string::npos) << d.reason;
  EXPECT_EQ(d.reference_continuation, "}*");
  EXPECT_EQ(d.candidate_continuation, "@");
}

TEST(SmokeDiff, TheReferencesTokenMustBeInTheCandidatesTopKToo) {
  // The candidate's token is the reference's second, but the candidate ranks '}' nowhere.
  SmokeAnswer c = With(Ref(), 3, {{"!", -0.2}, {"k", -2.8}, {"m", -3.0}, {"n", -3.1}, {"o", -3.2}});
  DiffResult d = CompareAnswers(Ref(), c, 0.8);
  EXPECT_FALSE(d.agree);
  EXPECT_NE(d.reason.find("'}' is not in this config's top"), std::string::npos) << d.reason;
}

TEST(SmokeDiff, WithoutLogprobsTheTextsMustBeEqual) {
  SmokeAnswer a{"Paris is", {}}, b{"Paris was", {}};
  EXPECT_TRUE(CompareAnswers(a, a, 0.02).agree);
  DiffResult d = CompareAnswers(a, b, 0.02);
  EXPECT_FALSE(d.agree);
  EXPECT_EQ(d.kind, "text");
  EXPECT_EQ(d.position, 6);
  EXPECT_EQ(d.reference_continuation, "is");
  EXPECT_EQ(d.candidate_continuation, "was");
}

TEST(SmokeDiff, ReadsBothLogprobShapesBestFirst) {
  // /v1/completions: a dict of top logprobs, in no particular order.
  json comp = json::parse(R"({"tokens": ["#", "5"], "token_logprobs": [-0.85, -0.88],
    "top_logprobs": [{"$": -1.35, "#": -0.85, "a": -2.1}, {"5": -0.88, "6": -2.04}], "text_offset": [0, 1]})");
  auto s = StepsFromLogprobs(comp);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].token, "#");
  EXPECT_DOUBLE_EQ(s[0].logprob, -0.85);
  ASSERT_EQ(s[0].top.size(), 3u);
  EXPECT_EQ(s[0].top[0].first, "#");
  EXPECT_EQ(s[0].top[2].first, "a");
  // /v1/chat/completions: a list per position.
  json chat = json::parse(R"({"content": [{"token": "#", "logprob": -0.85, "bytes": [35],
    "top_logprobs": [{"token": "#", "logprob": -0.85}, {"token": "$", "logprob": -1.35}]}]})");
  s = StepsFromLogprobs(chat);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].top[1].first, "$");
  EXPECT_TRUE(StepsFromLogprobs(json()).empty());
  EXPECT_TRUE(StepsFromLogprobs(json::parse(R"({"x": 1})")).empty());
}

TEST(SmokeDiff, TheStoredFormRoundTrips) {
  SmokeAnswer a = Ref();
  auto back = AnswerFromJson(AnswerJson(a));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->text, a.text);
  ASSERT_EQ(back->steps.size(), 5u);
  EXPECT_TRUE(CompareAnswers(a, *back, 0.0).agree);
  EXPECT_EQ(AnswerJson(a, 2)["tokens"].size(), 2u);
  EXPECT_FALSE(AnswerFromJson(json::parse(R"({"tokens": ["a"]})")));
  EXPECT_FALSE(AnswerFromJson(json::parse(R"({"text": "a", "tokens": [1]})")));
}

json SuiteWithReference(const json& reference) {
  return {{"name", "s"},
          {"parameters", {{"attn", {"eager", "sdpa"}}, {"dtype", {"fp32", "bf16"}}}},
          {"stages", {{{"name", "serve"}, {"kind", "server"}, {"argv", {"srv", "{port}"}},
                       {"smoke", {{"prompts", {{{"prompt", "p"}}}}, {"reference", reference}}}}}}};
}

std::string RefusedField(const json& j) {
  auto r = ParseSuite(j);
  return r.ok() ? "" : r.status().field();
}

TEST(SmokeReference, TheSuiteFieldsAreValidatedWithTheFieldAtFault) {
  json ok = {{"config", {{"attn", "eager"}, {"dtype", "fp32"}}}, {"top_k", 5}, {"tolerance_by", "dtype"},
             {"logprob_tolerance", {{"fp32", 0.02}, {"*", 0.5}}}};
  EXPECT_EQ(RefusedField(SuiteWithReference(ok)), "");
  json bad = ok;
  bad["config"]["attn"] = "flash";
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.config.attn");
  bad = ok;
  bad["config"]["backend"] = "x";
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.config.backend");
  bad = ok;
  bad["top_k"] = 0;
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.top_k");
  bad = ok;
  bad["tolerance_by"] = "precision";
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.tolerance_by");
  bad = ok;
  bad["logprob_tolerance"]["fp8"] = 1;
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.logprob_tolerance.fp8");
  bad = ok;
  bad["logprob_tolerance"]["fp32"] = -1;
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.logprob_tolerance.fp32");
  bad = ok;
  bad.erase("tolerance_by");
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.logprob_tolerance");
  bad = ok;
  bad["tolerence"] = 1;
  EXPECT_EQ(RefusedField(SuiteWithReference(bad)), "stages[0].smoke.reference.tolerence");
  json j = SuiteWithReference(ok);
  j["stages"][0]["smoke"]["prompts"] = json::array();
  EXPECT_EQ(RefusedField(j), "stages[0].smoke.prompts");
  j = SuiteWithReference(ok);
  j["stages"][0]["smoke"]["prompts"][0]["regex"] = "(";
  EXPECT_EQ(RefusedField(j), "stages[0].smoke.prompts[0].regex");
}

TEST(SmokeReference, ReferenceConfigAndToleranceFollowTheTrialsConfig) {
  auto r = SuiteSmokeReference(SuiteWithReference(
      {{"config", {{"attn", "eager"}, {"dtype", "fp32"}}}, {"tolerance_by", "dtype"},
       {"logprob_tolerance", {{"fp32", 0.02}, {"*", 0.5}}}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stage, "serve");
  EXPECT_EQ(r->top_k, 5);
  Config c = {{"attn", "sdpa"}, {"dtype", "bf16"}, {"model", "m"}};
  EXPECT_FALSE(IsReferenceConfig(*r, c));
  Config rc = ReferenceConfigFor(*r, c);
  EXPECT_EQ(rc, (Config{{"attn", "eager"}, {"dtype", "fp32"}, {"model", "m"}}));
  EXPECT_TRUE(IsReferenceConfig(*r, rc));
  EXPECT_DOUBLE_EQ(ToleranceFor(*r, c), 0.5);
  EXPECT_DOUBLE_EQ(ToleranceFor(*r, rc), 0.02);
  EXPECT_FALSE(SuiteSmokeReference(json::parse(R"({"stages": [{"kind": "server", "smoke": [{"prompt": "p"}]}]})")));
}

// The worker's side: what a trial is judged against, from the grant's "reference".
TEST(SmokeReference, TheCheckSaysWhatItComparedOrWhyNot) {
  worker::TrialContext ctx;
  ctx.suite = SuiteWithReference({{"config", {{"attn", "eager"}, {"dtype", "fp32"}}}, {"logprob_tolerance", 0.02}});
  ctx.config = {{"attn", "eager"}, {"dtype", "fp32"}};
  {
    worker::DifferentialCheck ref(ctx, "serve");
    EXPECT_TRUE(ref.active());
    EXPECT_FALSE(ref.Check(0, "p", "#5", AnswerJson(Ref())["text"]));
    EXPECT_EQ(ref.Summary()["differential"]["role"], "reference");
  }
  ctx.config = {{"attn", "sdpa"}, {"dtype", "fp32"}};
  ctx.reference = {{"trial", 7}, {"verdict", "crashed"}};
  {
    worker::DifferentialCheck c(ctx, "serve");
    EXPECT_FALSE(c.Check(0, "p", "x", json()));
    json s = c.Summary()["differential"];
    EXPECT_EQ(s["role"], "unchecked");
    EXPECT_NE(s["reason"].get<std::string>().find("reference trial 7 ended crashed"), std::string::npos) << s;
  }
  // A recorded reference answer and a candidate whose first logprob moved: wrong, with both sides.
  json rec = AnswerJson(Ref());
  rec["prompt"] = "p";
  ctx.reference = {{"trial", 7}, {"verdict", "passed"}, {"config", {{"attn", "eager"}, {"dtype", "fp32"}}},
                   {"smoke_answers", {rec}}};
  worker::DifferentialCheck c(ctx, "serve");
  json lp = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()}};
  SmokeAnswer mine = Ref();
  mine.steps[0].logprob = -0.8069;
  for (auto& s : mine.steps) {
    lp["tokens"].push_back(s.token);
    lp["token_logprobs"].push_back(s.logprob);
    json top = json::object();
    for (auto& [t, v] : s.top) top[t] = v;
    lp["top_logprobs"].push_back(top);
  }
  auto f = c.Check(0, "p", mine.text, lp);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->signature, "wrong_output:differential:logprob");
  EXPECT_NE(f->evidence.find("trial 7, attn=eager dtype=fp32"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("reference continues \"#5-}*\", this config \"#5-}*\""), std::string::npos)
      << f->evidence;
  EXPECT_EQ(c.Summary()["differential"]["checked"], 1);
}

}  // namespace
}  // namespace gauntlet
