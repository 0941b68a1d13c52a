// The SSE reader (http/sse_reader.h) that the CLI's event follower and the load client share: the
// daemon's frames and an OpenAI stream as they are sent, every line ending, chunks cut anywhere,
// comments, the persisting id, the limits, a stop, and a reset between connections.
#include "http/sse_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gauntlet::http {
namespace {

struct Got {
  std::string event, data, id;
  bool operator==(const Got&) const = default;
};

std::vector<Got> ReadAll(SseReader& r, std::string_view text, size_t step = 0) {
  std::vector<Got> out;
  const SseReader::OnEvent on = [&](const SseEvent& e) {
    out.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
    return true;
  };
  if (step == 0) step = text.size() + 1;
  for (size_t i = 0; i < text.size(); i += step) EXPECT_TRUE(r.Feed(text.substr(i, step), on));
  return out;
}

std::vector<Got> ReadAll(std::string_view text, size_t step = 0) {
  SseReader r;
  return ReadAll(r, text, step);
}

TEST(SseReader, ReadsTheDaemonsFramesWithTheirTypeAndId) {
  const std::string text =
      "retry: 2000\n\nid: 4\nevent: trial.finished\ndata: {\"trial\":7}\n\n: keep-alive\n\nid: 5\nevent: overflow\n"
      "data: {}\n\n";
  SseReader r;
  const auto got = ReadAll(r, text);
  ASSERT_EQ(got.size(), 2u) << "the retry hint and the comment are no events";
  EXPECT_EQ(got[0], (Got{"trial.finished", "{\"trial\":7}", "4"}));
  EXPECT_EQ(got[1], (Got{"overflow", "{}", "5"}));
  EXPECT_EQ(r.retry_ms(), 2000);
}

TEST(SseReader, ReadsAnOpenAiStreamWhateverTheLineEndings) {
  const std::string lf = "data: {\"choices\":[{\"text\":\"Hel\"}]}\n\ndata: [DONE]\n\n";
  const std::string crlf = "data: {\"choices\":[{\"text\":\"Hel\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
  const std::string cr = "data: {\"choices\":[{\"text\":\"Hel\"}]}\r\rdata: [DONE]\r\r";
  const std::vector<Got> want = {{"", "{\"choices\":[{\"text\":\"Hel\"}]}", ""}, {"", "[DONE]", ""}};
  EXPECT_EQ(ReadAll(lf), want);
  EXPECT_EQ(ReadAll(crlf), want);
  EXPECT_EQ(ReadAll(cr), want);
}

TEST(SseReader, ChunksCutAnywhereReadAsTheWhole) {
  const std::string text =
      "id: 1\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\ndata:three\r\rdata: four\n\n: c\n\nevent: b\ndata: five\n\n";
  const auto whole = ReadAll(text);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[0], (Got{"a", "one\ntwo", "1"})) << "data lines join with LF";
  EXPECT_EQ(whole[1], (Got{"", "three", "1"})) << "the id persists; the type does not";
  EXPECT_EQ(whole[3], (Got{"b", "five", "1"}));
  for (size_t step = 1; step < 12; ++step) EXPECT_EQ(ReadAll(text, step), whole) << "chunks of " << step;
}

TEST(SseReader, FieldsFollowTheStandard) {
  // No space after the colon, a field with no colon, an unknown field, an event with no data, an id
  // with a NUL (ignored), and an empty data line (an event with empty data).
  using namespace std::string_literals;
  const std::string text = "data:x\n\nevent: lonely\n\nfoo: bar\ndata\n\nid: a\0b\ndata: y\n\n"s;
  const auto got = ReadAll(text);
  ASSERT_EQ(got.size(), 3u) << "an event with no data is not dispatched";
  EXPECT_EQ(got[0], (Got{"", "x", ""}));
  EXPECT_EQ(got[1], (Got{"", "", ""})) << "its type was forgotten with the empty event";
  EXPECT_EQ(got[2], (Got{"", "y", ""}));
}

TEST(SseReader, ALineOrEventOverTheLimitsIsDroppedAndTheStreamGoesOn) {
  SseReader r(SseLimits{16, 30});
  const std::string text = "data: " + std::string(40, 'x') + "\n\ndata: ok\n\n" + "data: " + std::string(10, 'y') +
                           "\ndata: " + std::string(10, 'y') + "\ndata: " + std::string(10, 'y') + "\n\ndata: after\n\n";
  const auto got = ReadAll(r, text, 7);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].data, "ok");
  EXPECT_EQ(got[1].data, "after");
  EXPECT_EQ(r.dropped(), 2u) << "the long line's event and the one whose data grew past 30 bytes";
}

TEST(SseReader, AStopEndsTheFeedAndResetForgetsAHalfReadEvent) {
  SseReader r;
  int calls = 0;
  EXPECT_FALSE(r.Feed("data: 1\n\ndata: 2\n\n", [&](const SseEvent&) { return ++calls, false; }));
  EXPECT_EQ(calls, 1);
  r.Reset();
  std::vector<Got> got = ReadAll(r, "id: 9\ndata: half");
  EXPECT_TRUE(got.empty());
  r.Reset();
  got = ReadAll(r, "data: whole\n\n");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (Got{"", "whole", ""})) << "no id or data survives a reset";
}

}  // namespace
}  // namespace gauntlet::http
