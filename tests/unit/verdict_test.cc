// The one vocabulary (core/verdict.h): the enum, the table and the SQL/JSON spellings agree.
#include "core/verdict.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/signature_rule.h"

namespace gauntlet {

TEST(Vocabulary, TheTableIsIndexedByTheEnumAndEveryNameRoundTrips) {
  ASSERT_EQ(Verdicts().size(), static_cast<size_t>(kVerdictCount));
  for (size_t i = 0; i < Verdicts().size(); ++i) {
    const VerdictInfo& v = Verdicts()[i];
    EXPECT_EQ(static_cast<size_t>(v.verdict), i) << v.name;
    EXPECT_EQ(&Info(v.verdict), &v);
    EXPECT_EQ(Name(v.verdict), v.name);
    ASSERT_TRUE(ParseVerdict(v.name).has_value()) << v.name;
    EXPECT_EQ(*ParseVerdict(v.name), v.verdict);
  }
  EXPECT_FALSE(ParseVerdict("").has_value());
  EXPECT_FALSE(ParseVerdict("Passed").has_value());
  EXPECT_EQ(Name(Verdict::kWrongOutput), "wrong_output");
}

TEST(Vocabulary, FallbackIsAJudgedFindingOnlyTheDispatchCheckGives) {
  const VerdictInfo& f = Info(Verdict::kFallback);
  EXPECT_EQ(f.name, "fallback");
  EXPECT_TRUE(f.judged);
  EXPECT_TRUE(f.reported);
  EXPECT_FALSE(f.rule) << "no result file or signature rule may claim a fallback";
  EXPECT_GT(f.severity, Info(Verdict::kPassed).severity);
  auto r = ParseSignatureRules(nlohmann::json::array({{{"match", "x"}, {"verdict", "fallback"}}}));
  EXPECT_FALSE(r.ok());
}

TEST(Vocabulary, TrialStatesRoundTrip) {
  for (TrialState s : {TrialState::kQueued, TrialState::kLeased, TrialState::kRunning, TrialState::kDone})
    EXPECT_EQ(ParseTrialState(Name(s)), s);
  EXPECT_EQ(Name(TrialState::kDone), "done");
  EXPECT_FALSE(ParseTrialState("finished").has_value());
}

TEST(Vocabulary, SweepStatesAndKindsRoundTrip) {
  for (SweepState s : {SweepState::kRunning, SweepState::kFinished, SweepState::kCancelled})
    EXPECT_EQ(ParseSweepState(Name(s)), s);
  for (SweepKind k : {SweepKind::kGrid, SweepKind::kBisect}) EXPECT_EQ(ParseSweepKind(Name(k)), k);
  // The spellings the stored column (migration's DEFAULT 'grid') and the API's "kind" field hold.
  EXPECT_EQ(Name(SweepKind::kGrid), "grid");
  EXPECT_EQ(Name(SweepKind::kBisect), "bisect");
  EXPECT_FALSE(ParseSweepKind("Grid").has_value());
  EXPECT_FALSE(ParseSweepKind("").has_value());
}

TEST(Vocabulary, CausesOutrankTheirConsequences) {
  // A refusal or a lack of memory explains the crash that follows it, never the other way round.
  EXPECT_GT(Info(Verdict::kUnsupported).cause_rank, Info(Verdict::kCrashed).cause_rank);
  EXPECT_GT(Info(Verdict::kOom).cause_rank, Info(Verdict::kCrashed).cause_rank);
  EXPECT_GT(Info(Verdict::kWrongOutput).cause_rank, Info(Verdict::kCrashed).cause_rank);
  EXPECT_EQ(Info(Verdict::kPassed).cause_rank, 0);
}

// The JSON edge of a suite's rules: a known name becomes the enum, an unknown one (or one a rule
// may not assign) is an Invalid naming the field, never a default verdict.
TEST(Vocabulary, SignatureRulesParseTheVerdictAtTheJsonEdge) {
  auto ok = ParseSignatureRules(nlohmann::json::parse(R"([{"match": "x", "verdict": "wrong_output"}])"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].verdict, Verdict::kWrongOutput);
  for (const char* bad : {"meh", "", "Crashed", "skipped", "cancelled"}) {
    auto r = ParseSignatureRules(nlohmann::json::array({{{"match", "x"}, {"verdict", bad}}}));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalid) << bad;
    EXPECT_EQ(r.status().field(), "signatures[0].verdict") << bad;
  }
}

TEST(Vocabulary, TestsPrintVerdictsAndStatesByName) {
  std::ostringstream os;
  PrintTo(Verdict::kInfraError, &os);
  os << ' ';
  PrintTo(TrialState::kLeased, &os);
  EXPECT_EQ(os.str(), "infra_error leased");
  EXPECT_EQ(::testing::PrintToString(Verdict::kOom), "oom");
}

}  // namespace gauntlet

// Supersedes (core/verdict.h): the one rule of "which observation of a config is shown".
TEST(Supersedes, ARealVerdictBeatsNoneAndSkipsThenTheLaterFinishThenTheHigherTrial) {
  using gauntlet::Observation;
  using gauntlet::Verdict;
  const Observation none{std::nullopt, 50, 9};
  const Observation passed{Verdict::kPassed, 10, 1}, crashed_later{Verdict::kCrashed, 20, 2};
  const Observation skipped_latest{Verdict::kSkipped, 99, 3}, cancelled{Verdict::kCancelled, 98, 4};
  EXPECT_FALSE(gauntlet::Supersedes(none, passed));
  EXPECT_TRUE(gauntlet::Supersedes(passed, none));
  EXPECT_TRUE(gauntlet::Supersedes(crashed_later, passed));
  EXPECT_FALSE(gauntlet::Supersedes(passed, crashed_later));
  EXPECT_FALSE(gauntlet::Supersedes(skipped_latest, passed));  // a skip says nothing about the config
  EXPECT_TRUE(gauntlet::Supersedes(passed, skipped_latest));
  EXPECT_TRUE(gauntlet::Supersedes(skipped_latest, cancelled));  // both say nothing: the later one
  const Observation same_time_higher{Verdict::kOom, 10, 7};
  EXPECT_TRUE(gauntlet::Supersedes(same_time_higher, passed));
  EXPECT_FALSE(gauntlet::Supersedes(passed, same_time_higher));
}
