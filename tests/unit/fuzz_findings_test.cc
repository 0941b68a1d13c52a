// What the fuzzers of tests/fuzz/ found (docs/RELIABILITY.md), one test per finding, each named in
// a comment after its regression input under tests/fuzz/corpus/. Each fails on the code before its
// fix: by a wrong answer, an exception, or the test process dying of the stack overflow or hanging
// in the backtracking that the input caused.
#include <gtest/gtest.h>

#include "core/hardware.h"
#include "core/suite.h"
#include "core/sweep.h"
#include "core/user_regex.h"
#include "core/yaml_json.h"
#include "http/http.h"

namespace gauntlet {
namespace {
using nlohmann::json;

json SuiteWith(json parameters) {
  return {{"name", "f"},
          {"parameters", std::move(parameters)},
          {"stages", json::array({{{"name", "s"}, {"kind", "command"}, {"argv", json::array({"true"})}}})}};
}

// The field of the error ParseSuite gives, or "accepted".
std::string RefusedFieldOf(const json& suite) {
  auto r = ParseSuite(suite);
  return r.ok() ? "accepted" : r.status().field();
}

// yaml_json/regress-latin1-byte.yaml: yaml-cpp passes bytes that are not UTF-8 through, and the JSON
// then could not be dumped (a Latin-1 byte in a suite file stopped the daemon's start).
TEST(YamlFindings, TextThatIsNotUtf8IsRefusedWithItsLine) {
  auto r = YamlToJson("name: x\ndescription: caf\xe9 au lait\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "body");
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("UTF-8"), std::string::npos) << r.status().message();
  EXPECT_FALSE(YamlToJson("caf\xe9: 1\n").ok());  // keys too
  EXPECT_TRUE(YamlToJson("description: caf\xc3\xa9\n").ok());
}

// yaml_json/regress-alias-inside-its-anchor.yaml: converting followed the alias into itself until
// the stack overflowed.
TEST(YamlFindings, AnAliasInsideItsOwnAnchorIsRefused) {
  auto r = YamlToJson("defaults: &d {gpus: 1, again: *d}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper than 64"), std::string::npos) << r.status().message();
  EXPECT_TRUE(YamlToJson("d: &d {gpus: 1}\ntargets: [*d, {<<: *d, gpus: 2}]\n").ok());  // aliases as people use them
}

// yaml_json/regress-billion-laughs.yaml: nine levels of ten aliases each are 10^9 values.
TEST(YamlFindings, NestedAliasesCannotExpandWithoutBound) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  auto r = YamlToJson(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 100000 values"), std::string::npos) << r.status().message();
}

// yaml_json/regress-60k-digit-scalar.yaml: std::regex_match, which typed scalars, recursed per
// character and overflowed the stack on 50,000 digits (a 1 MiB request body holds far more).
TEST(YamlFindings, AScalarOfSixtyThousandDigitsIsReadWithoutRecursion) {
  auto r = YamlToJson("big: " + std::string(60000, '1') + "\nfrac: 0." + std::string(60000, '5') + "\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE((*r)["big"].is_string());  // past int64: the text it is
  EXPECT_TRUE((*r)["frac"].is_number_float());
}

// The hand-written scanner that replaced the two regexes reads every scalar as they did.
TEST(YamlFindings, ScalarsAreTypedAsBefore) {
  auto r = YamlToJson(
      "[1, -7, +3, 0, .5, '1', \"2\", 1., 1e3, 1.5e-2, -2.E+4, 0x80, 1e, ., -, +, 1_000, 1.5.1, e5, .e5, "
      "true, False, ~, null, abc]");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json want = json::parse(
      R"([1, -7, 3, 0, 0.5, "1", "2", 1.0, 1000.0, 0.015, -20000.0, "0x80", "1e", ".", "-", "+", "1_000",
          "1.5.1", "e5", ".e5", true, false, null, null, "abc"])");
  EXPECT_EQ(*r, want) << r->dump();
  EXPECT_TRUE((*r)[0].is_number_integer());
  EXPECT_TRUE((*r)[7].is_number_float());
}

// suite/regress-stage-kind-not-a-string.json: value("kind", "") threw type_error out of ParseSuite.
TEST(SuiteFindings, AStageKindThatIsNotAStringIsAFieldError) {
  json j = SuiteWith({{"a", json::array({"x"})}});
  j["stages"][0]["kind"] = json::array({"python3"});
  EXPECT_EQ(RefusedFieldOf(j), "stages[0].kind");
  j["stages"][0]["kind"] = 7;
  EXPECT_EQ(RefusedFieldOf(j), "stages[0].kind");
}

// suite/regress-timeout-1e44.json: timeout_s went through static_cast<int> unchecked (undefined
// behaviour; in practice a negative limit), and a fraction under a second became 0.
TEST(SuiteFindings, AStageTimeoutIsOneSecondToAYear) {
  json j = SuiteWith({{"a", json::array({"x"})}});
  for (double t : {6.1e44, 1e10, 31536001.0, 0.5, 0.0, -1.0}) {
    j["stages"][0]["timeout_s"] = t;
    EXPECT_EQ(RefusedFieldOf(j), "stages[0].timeout_s") << t;
  }
  for (double t : {1.0, 90.5, 31536000.0}) {
    j["stages"][0]["timeout_s"] = t;
    auto r = ParseSuite(j);
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_EQ(r->stages[0].timeout_s, static_cast<int>(t));
  }
}

// suite/regress-60k-parameter-name.json, suite/regress-60k-default.json: std::regex_match on a
// 60,000-character name or value overflowed the stack.
TEST(SuiteFindings, LongNamesAndValuesAreRefusedWithoutRecursion) {
  const std::string name(60000, 'a');
  EXPECT_EQ(RefusedFieldOf(SuiteWith({{name, json::array({"x"})}})), "parameters." + name);
  EXPECT_EQ(RefusedFieldOf(SuiteWith({{"a", {{"pattern", "^[0-9]+$"}, {"default", std::string(60000, '1')}}}})),
            "parameters.a.default");
  // What fits within the bound still works.
  EXPECT_EQ(RefusedFieldOf(SuiteWith({{"a", {{"pattern", "^[0-9]+$"}, {"default", std::string(4000, '1')}}}})), "accepted");
}

// suite/regress-30k-nested-pattern.json: compiling 30,000 nested groups overflowed the stack;
// suite/regress-repeat-count-overflow.json: libstdc++ read a huge count with signed overflow. RE2
// refuses each with its reason, and back-references (which need backtracking) at compile time.
TEST(SuiteFindings, PatternsOutOfBoundsAreRefused) {
  auto pattern_error = [](const std::string& p) {
    auto r = ParseSuite(SuiteWith({{"a", {{"pattern", p}, {"default", ""}}}}));
    return r.ok() ? std::string("accepted") : r.status().field() + ": " + r.status().message();
  };
  EXPECT_NE(pattern_error(std::string(30000, '(') + std::string(30000, ')')).find("longer than 1000"), std::string::npos);
  EXPECT_EQ(pattern_error(std::string(400, '(') + std::string(400, ')')), "accepted");  // RE2 does not recurse on it
  // An octal escape to RE2 (\777, then digits), where libstdc++ read a back-reference's number.
  EXPECT_NE(pattern_error("^0\\77777777777777777777777.[0-9]+$").find("parameters.a.default"), std::string::npos);
  EXPECT_NE(pattern_error("^(a)\\1$").find("parameters.a.pattern: bad pattern: invalid"), std::string::npos);
  // A count RE2 cannot read is literal text to it (as in Perl), read without overflow: the empty
  // default then does not match. A count it reads is at most 1000.
  EXPECT_EQ(pattern_error("^a{99999999999999999999}$").substr(0, 20), "parameters.a.default");
  EXPECT_EQ(pattern_error("^a{2,77777777777}$").substr(0, 20), "parameters.a.default");
  EXPECT_NE(pattern_error("^a{1001}$").find("invalid repetition size"), std::string::npos);
  EXPECT_NE(pattern_error("^(?=a)a*$").find("bad pattern"), std::string::npos);  // look-ahead: not linear
  EXPECT_EQ(pattern_error("^(a{0,1000}|\\{99999\\})*$"), "accepted");
}

// suite/regress-nested-quantifier-pattern.json: the backtracking matcher took exponential time on
// nested repetitions; RE2 answers at once (this test hung before).
TEST(SuiteFindings, NestedRepetitionsMatchInLinearTime) {
  ParamSpec p;
  p.name = "a";
  p.pattern = "^(a*)*#$";
  EXPECT_FALSE(p.Accepts(std::string(40, 'a')));
  EXPECT_FALSE(p.Accepts(std::string(4000, 'a')));
  p.pattern = "^(a|aa)*$";
  EXPECT_TRUE(p.Accepts(std::string(4000, 'a')));
  p.pattern = "^[a-z0-9]*++#$";  // not a pattern RE2 compiles: accepts nothing, and says so at parse time
  EXPECT_FALSE(p.Accepts("t#"));
}

// suite/regress-cost-s-not-a-number.json: cost_s was not checked, so the coordinator's
// value("cost_s", 60.0) threw at every sweep of the suite (a 400 about the sweep's body).
TEST(SuiteFindings, CostAndKeyMetricHaveTheirTypes) {
  json j = SuiteWith({{"a", json::array({"x"})}});
  j["cost_s"] = "soon";
  EXPECT_EQ(RefusedFieldOf(j), "cost_s");
  j["cost_s"] = -5;
  EXPECT_EQ(RefusedFieldOf(j), "cost_s");
  j["cost_s"] = 90.5;
  j["key_metric"] = json::object();
  EXPECT_EQ(RefusedFieldOf(j), "key_metric");
  j["key_metric"] = "tflops";
  EXPECT_EQ(RefusedFieldOf(j), "accepted");
}

// sweep/regress-60k-value.json: a sweep value checked against a pattern parameter overflowed the
// daemon's stack (POST /api/v1/sweeps, any submitter).
TEST(SweepFindings, ASixtyThousandCharacterValueIsRefused) {
  auto suite = ParseSuite(SuiteWith({{"seconds", {{"pattern", "^[0-9.]+$"}, {"default", "60"}}}}));
  ASSERT_TRUE(suite.ok());
  auto req = ParseSweepRequest({{"suite", "f"}, {"parameters", {{"seconds", json::array({std::string(60000, '1')})}}}});
  ASSERT_TRUE(req.ok());
  auto r = ExpandSweep(*suite, *req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "parameters.seconds");
}

// http_router/regress-register-number-overflow, regress-sweep-number-past-double: a number past
// double's range makes nlohmann throw out_of_range, which ParseJson let through: a 500.
TEST(HttpFindings, ANumberPastDoublesRangeIsBadJson) {
  EXPECT_THROW(http::ParseJson(R"({"priority": 1e400})"), http::BadJson);
  try {
    http::ParseJson("[2e308]");
    ADD_FAILURE() << "[2e308] parsed";
  } catch (const http::BadJson& e) {
    EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
  }
}

// http_router/regress-register-memory-1e300, regress-register-index-1e300: a worker's inventory
// with a double past int64's range was converted unchecked (undefined behaviour).
TEST(HardwareFindings, InventoryNumbersAreRangeCheckedBeforeConversion) {
  auto field = [](const char* gpu) {
    auto r = ParseInventory(json::parse(std::string(R"({"gpus": [)") + gpu + "]}"));
    return r.ok() ? std::string("accepted") : r.status().field();
  };
  EXPECT_EQ(field(R"({"name": "X", "compute_capability": "9.0", "memory_mb": 1e300})"), "gpus[0].memory_mb");
  EXPECT_EQ(field(R"({"name": "X", "compute_capability": "9.0", "memory_mb": -1})"), "gpus[0].memory_mb");
  EXPECT_EQ(field(R"({"name": "X", "compute_capability": "9.0", "index": 1e300})"), "gpus[0].index");
  EXPECT_EQ(field(R"({"name": "X", "compute_capability": "9.0", "index": 1.5})"), "gpus[0].index");
  EXPECT_EQ(field(R"({"name": "X", "compute_capability": "9.0", "index": 3, "memory_mb": 143771.5})"), "accepted");
}

// The wrapper's bounds (core/user_regex.h): a 40 KB value is refused by length, not by the stack;
// a search reads the whole text in linear time (std::regex overflowed the stack on a 40 KB value).
TEST(UserRegex, BoundsAndLinearSearch) {
  auto needle = UserRegex::Compile("needle [0-9]+");
  ASSERT_TRUE(needle.ok());
  EXPECT_TRUE(needle->Search(std::string(100000, 'x') + "needle 42"));
  EXPECT_TRUE(needle->Search("needle " + std::string(100000, '1')));
  auto xs = UserRegex::Compile("x*");
  ASSERT_TRUE(xs.ok());
  EXPECT_TRUE(xs->FullMatch(std::string(kMaxPatternValue, 'x')));
  EXPECT_FALSE(xs->FullMatch(std::string(kMaxPatternValue + 1, 'x')));
  EXPECT_TRUE(xs->Search(std::string(40000, 'x')));  // std::regex_search recursed here
  auto dots = UserRegex::Compile("(.*)*y");
  ASSERT_TRUE(dots.ok());
  EXPECT_FALSE(dots->Search(std::string(40000, 'x')));  // exponential for a backtracking matcher
  EXPECT_FALSE(UserRegex::Compile(std::string(kMaxRegexPattern + 1, 'x')).ok());
  EXPECT_FALSE(UserRegex::Compile("(a)\\1").ok());
  EXPECT_FALSE(UserRegex::Compile("((((a{1000}){1000}){1000}){1000})").ok());  // a program past max_mem
  EXPECT_EQ(UserRegex::Compile("(").status().message().substr(0, 14), "invalid regex:");
}

}  // namespace
}  // namespace gauntlet
