// Garbage detection on generated text, and NaN logprobs.
#include <gtest/gtest.h>

#include "classifier/garbage.h"

using namespace gauntlet;
using namespace gauntlet::classifier;

namespace {
std::string Key(std::string_view text) {
  auto g = FindGarbage(text);
  return g ? g->key : "";
}
}  // namespace

TEST(Garbage, FlagsTheFailureShapes) {
  EXPECT_EQ(DetectGarbage("!!!!!!!!"), "repeated character '!'");
  EXPECT_EQ(Key("!!!!!!!!!!!!!!!!"), "repeated_char");
  EXPECT_EQ(Key(" Paris!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"), "repeated_char");
  EXPECT_EQ(Key(""), "empty");
  EXPECT_EQ(DetectGarbage(""), "empty output");
  EXPECT_EQ(Key("   \n\t "), "whitespace");
  EXPECT_EQ(DetectGarbage(" \n "), "whitespace only");
  EXPECT_EQ(Key("Paris \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"), "replacement_char");
  EXPECT_EQ(DetectGarbage("\xEF\xBF\xBD\xEF\xBF\xBD"), "U+FFFD replacement characters");
  EXPECT_EQ(Key("Paris Paris Paris Paris Paris Paris"), "repeated_token");
  EXPECT_EQ(DetectGarbage("the the the the the the the the"), "single token repeated");
  EXPECT_EQ(Key("ParisParisParisParisParisParis"), "repeated_token");
  EXPECT_EQ(Key("你好你好你好你好你好你好"), "repeated_token");
  EXPECT_EQ(Key("aaaaaaaaaaaa"), "repeated_char");
  EXPECT_EQ(Key("\xff\xfe\xfd\xfc"), "replacement_char");  // invalid UTF-8 reads as U+FFFD
}

TEST(Garbage, LeavesNormalTextAlone) {
  for (const char* ok : {
           " Paris.",
           " Paris. The capital of Germany is Berlin, and the capital of Italy is Rome.",
           "巴黎。法国的首都是巴黎，也是法国最大的城市。",
           "東京は日本の首都です。",
           "Столица Франции — Париж.",
           "def add(a, b):\n    return a + b\n",
           "x = [0, 0, 0, 0, 0, 0, 0, 0]",
           "1, 2, 3, 4, 5, 6, 7, 8",
           "==========\nResults\n==========\nall good",
           "Yes",
           "42",
           "ok ok",
           "Paris 🇫🇷",
       }) {
    EXPECT_FALSE(DetectGarbage(ok)) << ok << " -> " << *DetectGarbage(ok);
  }
}

TEST(Garbage, SignatureKeys) {
  EXPECT_EQ(GarbageSignature(*FindGarbage("!!!!")), "wrong_output:garbage:repeated_char");
  EXPECT_EQ(GarbageSignature(*FindGarbage("")), "wrong_output:garbage:empty");
}

TEST(NanLogprobs, CompletionsAndChat) {
  auto completions = nlohmann::json::parse(R"({"tokens": [" Paris"], "token_logprobs": [null, -0.1],
      "top_logprobs": [{" Paris": -0.1}]})");
  EXPECT_FALSE(HasNanLogprobs(completions));  // null first token_logprob is normal with echo
  completions["token_logprobs"][1] = std::nan("");
  EXPECT_TRUE(HasNanLogprobs(completions));
  auto as_string = nlohmann::json::parse(R"({"token_logprobs": [-0.5, "NaN"]})");
  EXPECT_TRUE(HasNanLogprobs(as_string));

  auto chat = nlohmann::json::parse(R"({"content": [{"token": "Paris", "logprob": -0.01,
      "top_logprobs": [{"token": "Paris", "logprob": -0.01}]}]})");
  EXPECT_FALSE(HasNanLogprobs(chat));
  chat["content"][0]["logprob"] = nullptr;
  EXPECT_TRUE(HasNanLogprobs(chat));
  chat["content"][0]["logprob"] = -0.01;
  chat["content"][0]["top_logprobs"][0]["logprob"] = "nan";
  EXPECT_TRUE(HasNanLogprobs(chat));
  EXPECT_FALSE(HasNanLogprobs(nlohmann::json()));
  // -inf is a legal logprob for a masked token.
  EXPECT_FALSE(HasNanLogprobs(nlohmann::json{{"token_logprobs", {-1e308, -0.2}}}));
}

TEST(NanLogprobs, BareNanInJsonText) {
  EXPECT_TRUE(JsonTextHasNan(R"({"logprobs": {"token_logprobs": [NaN]}})"));
  EXPECT_FALSE(JsonTextHasNan(R"({"text": "NaN is not a number", "x": 1})"));
  EXPECT_FALSE(JsonTextHasNan(R"({"text": "escaped \" NaN"})"));
}
