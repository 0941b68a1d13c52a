// The client benchmark's stream-event reader: the fast scanner and the JSON fallback must agree on
// every event shape servers send, and the scanner must decline what it does not know.
#include "openai/stream_event.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using gauntlet::openai::JsonEscape;
using gauntlet::openai::ParseStreamEvent;
using gauntlet::openai::ScanStreamEvent;
using gauntlet::openai::StreamEvent;

namespace {
// Scans `data` with both paths and checks they read the same piece and usage.
StreamEvent Both(const std::string& data) {
  StreamEvent fast, slow;
  EXPECT_TRUE(ScanStreamEvent(data, &fast)) << data;
  EXPECT_TRUE(ParseStreamEvent(data, &slow)) << data;
  EXPECT_EQ(fast.piece, slow.piece) << data;
  EXPECT_EQ(fast.usage_tokens, slow.usage_tokens) << data;
  return fast;
}
}  // namespace

TEST(StreamEvent, CompletionAndChatShapesAgreeWithTheFullParse) {
  EXPECT_EQ(Both(R"({"id":"x","choices":[{"index":0,"text":" fox","finish_reason":null}]})").piece, " fox");
  EXPECT_EQ(Both(R"({"choices":[{"delta":{"role":"assistant","content":"h\u00e9llo \"q\"\n"}}]})").piece,
            "h\xc3\xa9llo \"q\"\n");
  const StreamEvent u = Both(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":17,"total_tokens":22}})");
  EXPECT_EQ(u.piece, "");
  EXPECT_EQ(u.usage_tokens, 17);
  EXPECT_EQ(Both(R"( { "choices" : [ { "text" : "a" } , { "text" : "b" } ] , "usage" : null } )").piece, "a");
}

TEST(StreamEvent, UnknownShapesFallBackAndGarbageIsRefused) {
  StreamEvent ev;
  EXPECT_FALSE(ScanStreamEvent("not json", &ev));
  EXPECT_FALSE(ParseStreamEvent("not json", &ev));
  EXPECT_FALSE(ParseStreamEvent("[1,2]", &ev));
  StreamEvent slow;
  EXPECT_TRUE(ParseStreamEvent(R"({"choices":[{"delta":{}}]})", &slow));
  EXPECT_EQ(slow.piece, "");
}

TEST(StreamEvent, JsonEscapeRoundTripsThroughAParser) {
  const std::string raw = "quote\" back\\slash \x01\x1f tab\t newline\n é";
  std::string lit = "\"";
  JsonEscape(raw, &lit);
  lit += "\"";
  EXPECT_EQ(nlohmann::json::parse(lit).get<std::string>(), raw);
}
