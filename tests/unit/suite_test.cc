// Suite validation: every rejection names the field at fault.
#include <gtest/gtest.h>

#include "core/suite.h"
#include "daemon/suite_loader.h"
#include "tests/support/harness.h"

namespace gauntlet {
namespace {
using nlohmann::json;

json Valid() {
  return json::parse(R"({
    "name": "demo", "version": 1,
    "requires": {"gpus": 1, "arch": ["sm_90"]},
    "parameters": {"backend": ["a", "b"], "model": {"pattern": "^[a-z/]+$", "default": "m/x"}},
    "stages": [{"name": "k", "kind": "command", "gate_on": ["backend"], "argv": ["run", "--b", "{backend}", "{model}", "{port}"]},
               {"name": "s", "kind": "server", "argv": ["serve", "--port", "{port}"],
                "smoke": [{"prompt": "p", "expect": "x"}]}],
    "signatures": [{"match": "SM100-only", "verdict": "unsupported"}]
  })");
}

std::string FieldOf(const json& j) {
  auto r = ParseSuite(j);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().field();
}

TEST(Suite, AcceptsAValidSuite) {
  auto r = ParseSuite(Valid());
  ASSERT_TRUE(r.ok()) << r.status().field() << ": " << r.status().message();
  EXPECT_EQ(r->params.size(), 2u);
  EXPECT_EQ(r->stages[0].gate_on, std::vector<std::string>{"backend"});
  EXPECT_EQ(r->requires_.arch, std::vector<std::string>{"sm_90"});
  EXPECT_TRUE(r->Param("model")->Accepts("org/name"));
  EXPECT_FALSE(r->Param("model")->Accepts("Bad Name"));
}

TEST(Suite, RejectsUnknownStageKind) {
  json j = Valid();
  j["stages"][1]["kind"] = "container";
  EXPECT_EQ(FieldOf(j), "stages[1].kind");
}

TEST(Suite, RejectsPlaceholderNamingNoParameter) {
  json j = Valid();
  j["stages"][0]["argv"][2] = "{backnd}";
  EXPECT_EQ(FieldOf(j), "stages[0].argv[2]");
}

TEST(Suite, RejectsEmptyValueList) {
  json j = Valid();
  j["parameters"]["backend"] = json::array();
  EXPECT_EQ(FieldOf(j), "parameters.backend");
}

TEST(Suite, RejectsBadPattern) {
  json j = Valid();
  j["parameters"]["model"]["pattern"] = "([a-z";
  EXPECT_EQ(FieldOf(j), "parameters.model.pattern");
}

TEST(Suite, RejectsOtherMistakesByField) {
  json j = Valid();
  j["stages"][0]["gate_on"] = {"nope"};
  EXPECT_EQ(FieldOf(j), "stages[0].gate_on");
  j = Valid();
  j["requires"]["arch"] = {"hopper"};
  EXPECT_EQ(FieldOf(j), "requires.arch");
  j = Valid();
  j["signatures"][0]["verdict"] = "meh";
  EXPECT_EQ(FieldOf(j), "signatures[0].verdict");
  j = Valid();
  j["stages"][1]["smoke"][0]["regex"] = "(";
  EXPECT_EQ(FieldOf(j), "stages[1].smoke[0].regex");
  j = Valid();
  j["extra"] = 1;
  EXPECT_EQ(FieldOf(j), "extra");
  j = Valid();
  j["name"] = "Has Spaces";
  EXPECT_EQ(FieldOf(j), "name");
}

TEST(Suite, RanksAreACommandStagesCountOrGpus) {
  for (json ok : {json(2), json(1), json(64), json("gpus")}) {
    json j = Valid();
    j["stages"][0]["ranks"] = ok;
    EXPECT_TRUE(ParseSuite(j).ok()) << ok.dump();
  }
  for (json bad : {json(0), json(65), json(1.5), json("two"), json::array()}) {
    json j = Valid();
    j["stages"][0]["ranks"] = bad;
    EXPECT_EQ(FieldOf(j), "stages[0].ranks") << bad.dump();
  }
  json j = Valid();
  j["stages"][1]["ranks"] = 2;  // a server stage is one process: its own launcher starts its ranks
  EXPECT_EQ(FieldOf(j), "stages[1].ranks");
}

TEST(Suite, SubstitutesPlaceholdersWithoutAShell) {
  EXPECT_EQ(Substitute("--x={a}-{b} {{literal}}", {{"a", "1"}, {"b", "$(rm -rf /)"}}), "--x=1-$(rm -rf /) {{literal}}");
  EXPECT_EQ(PlaceholdersIn("{a}{{b}}{c}"), (std::vector<std::string>{"a", "b", "c"}));
  // The user guide's inline metrics line, as a person writes it in `python3 -c`: nothing changes.
  const std::string guide = R"(print('{"metrics": {"tflops": {"value": 1}}}'))";
  EXPECT_EQ(Substitute(guide, {{"a", "1"}, {"value", "x"}}), guide);
  EXPECT_TRUE(PlaceholdersIn(guide).empty());
  // Braces around anything but an identifier are text: Python code in an argv needs no escaping.
  EXPECT_TRUE(PlaceholdersIn("print({'k': 1})").empty());
  EXPECT_EQ(Substitute("d = {'x': {a}}", {{"a", "1"}}), "d = {'x': 1}");
}

TEST(SuiteLoader, LoadsBuiltInAndExampleSuites) {
  for (std::string dir : {test::SourceDir() + "/suites", test::SourceDir() + "/suites/examples"}) {
    auto store = std::move(*store::Store::Open(":memory:"));
    auto r = daemon::LoadSuitesDir(dir, *store);
    ASSERT_TRUE(r.ok()) << dir << ": " << r.status().message();
    for (auto& s : *r) EXPECT_EQ(s.error, "") << dir;
  }
}

// Issue 33: one bad file no longer stops the daemon; it is named with its field, and skipped.
TEST(SuiteLoader, ABadFileIsNamedWithItsFieldAndSkipped) {
  test::TempDir dir;
  json good = Valid();
  dir.Write("a.json", good.dump());
  json bad = Valid();
  bad["name"] = "other";
  bad["stages"][0]["kind"] = "nope";
  dir.Write("b.yaml", "name: other\nparameters: {x: [1]}\nstages:\n  - {name: k, kind: nope, argv: [a]}\n");
  auto store = std::move(*store::Store::Open(":memory:"));
  auto r = daemon::LoadSuitesDir(dir.path(), *store);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string error;
  for (auto& s : *r)
    if (!s.error.empty()) error = s.error;
  EXPECT_NE(error.find("b.yaml: stages[0].kind: "), std::string::npos) << error;
  ASSERT_EQ(store->ListSuites()->size(), 1u);
  EXPECT_EQ(store->ListSuites()->at(0).name, good["name"]);
}


// Issue 31: 100,000 declared values parse in linear time (a hash set; the pairwise check took 9.3 s
// for 80,000), a duplicate is still named, and lookups find each value's position.
TEST(SuiteScale, AHundredThousandOrderedValuesParseAndADuplicateIsNamed) {
  json values = json::array();
  for (int i = 0; i < 100000; ++i) values.push_back("c" + std::to_string(i));
  json suite = {{"name", "many"},
                {"parameters", {{"commit", {{"values", values}, {"ordered", true}}}}},
                {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
  auto s = ParseSuite(suite);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const ParamSpec* p = s->Param("commit");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->values.size(), 100000u);
  EXPECT_EQ(p->IndexOf("c0"), 0);
  EXPECT_EQ(p->IndexOf("c99999"), 99999);
  EXPECT_EQ(p->IndexOf("c100000"), -1);
  EXPECT_TRUE(p->Accepts("c54321"));
  suite["parameters"]["commit"]["values"].push_back("c777");
  auto dup = ParseSuite(suite);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().field(), "parameters.commit.values");
  EXPECT_NE(dup.status().message().find("duplicate value 'c777'"), std::string::npos) << dup.status().message();
}

}  // namespace
}  // namespace gauntlet

#include "core/utf8.h"

namespace gauntlet {
namespace {

TEST(Utf8, ValidatesAsTheStandardSays) {
  EXPECT_TRUE(ValidUtf8("plain ascii"));
  EXPECT_TRUE(ValidUtf8("\xc3\xa9t\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"));  // é, ✓, 😀
  EXPECT_FALSE(ValidUtf8("\xff"));
  EXPECT_FALSE(ValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(ValidUtf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(ValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(ValidUtf8("\xe2\x9c"));          // cut short
  EXPECT_EQ(SafeDump(nlohmann::json{{"k", std::string("a\xff")}}), "{\"k\":\"a\xef\xbf\xbd\"}");
}

}  // namespace
}  // namespace gauntlet
