// The event bus in bytes (issue 31): 4,096 retained events of 1 MB each, and 500 followers that
// never read, each queueing every event, grew the daemon past a gigabyte. What it retains is
// bounded in bytes as well as in count, and a follower whose unsent events pass its byte budget is
// cut off with a last event that says why.
#include <gtest/gtest.h>

#include "core/utf8.h"
#include "daemon/events.h"

namespace gauntlet {
namespace {
using nlohmann::json;

TEST(EventBounds, TheRetainedHistoryIsBoundedInBytes) {
  daemon::EventBus bus(/*retain_bytes=*/1 << 20, /*follower_bytes=*/1 << 20);
  const std::string big(100 * 1024, 'r');
  for (int i = 0; i < 100; ++i) bus.Publish("node", {{"reason", big}});
  EXPECT_LE(bus.retained_bytes(), size_t{1} << 20);
  EXPECT_GT(bus.retained_bytes(), size_t{800} << 10) << "the newest events are kept up to the bound";
  // What is retained is the newest: a resume from 0 after the last id - 3 gets exactly three.
  auto sub = bus.Subscribe(bus.last_id() - 3, 0);
  std::vector<daemon::Event> got;
  sub->Next([&](std::optional<std::vector<daemon::Event>> b) { got = b.value_or(std::vector<daemon::Event>{}); });
  size_t n = got.size();
  while (n < 3) {
    std::vector<daemon::Event> more;
    sub->Next([&](std::optional<std::vector<daemon::Event>> b) { more = b.value_or(std::vector<daemon::Event>{}); });
    if (more.empty()) break;
    n += more.size();
  }
  EXPECT_EQ(n, 3u);
  sub->Close();
}

TEST(EventBounds, AFollowerThatFallsBehindIsCutOffWithTheReason) {
  daemon::EventBus bus(16 << 20, /*follower_bytes=*/256 << 10);
  auto slow = bus.Subscribe(0, 0);  // never asks for its events while they are published
  auto quick = bus.Subscribe(0, 0);
  size_t quick_seen = 0;
  const std::string data(10 * 1024, 'e');
  for (int i = 0; i < 100; ++i) {
    bus.Publish("trial", {{"evidence", data}});
    quick->Next([&](std::optional<std::vector<daemon::Event>> b) { quick_seen += b ? b->size() : 0; });
  }
  EXPECT_EQ(quick_seen, 100u) << "a follower that keeps up loses nothing";
  std::vector<daemon::Event> all;
  bool ended = false;
  while (!ended) {
    slow->Next([&](std::optional<std::vector<daemon::Event>> b) {
      if (!b) ended = true;
      else all.insert(all.end(), b->begin(), b->end());
    });
  }
  ASSERT_FALSE(all.empty());
  size_t bytes = 0;
  for (auto& e : all) bytes += e.data.size();
  EXPECT_LE(bytes, size_t{256} << 10) << "the follower's queue stayed within its budget";
  EXPECT_LT(all.size(), 100u);
  const daemon::Event& last = all.back();
  EXPECT_EQ(last.type, "overflow");
  const json why = json::parse(last.data);
  EXPECT_TRUE(why.value("reconnect", false));
  EXPECT_NE(why.value("reason", "").find("fell behind"), std::string::npos) << last.data;
  EXPECT_NE(why.value("reason", "").find(std::to_string(256 << 10) + " bytes"), std::string::npos) << last.data;
  slow->Close();
  quick->Close();
}

// trial.changed is written as text without a JSON object (two per lease cycle): it must say what
// EventData says, byte for byte, for every combination of its optional fields and for strings that
// need escaping or are not UTF-8.
TEST(EventText, TrialChangedTextIsWhatItsJsonDumps) {
  const std::vector<std::optional<std::string>> strings = {
      std::nullopt, "", "crashed:signal:SIGSEGV", "quote \" and \\ back", "tab\tnew\nline\x01\x7f",
      "caf\xc3\xa9 \xe2\x9c\x93", "bad \xff\xfe utf-8 \xc3", std::string("nul\0inside", 10)};
  const std::vector<std::optional<TrialState>> states = {std::nullopt, TrialState::kQueued, TrialState::kDone};
  const std::vector<std::optional<Verdict>> verdicts = {std::nullopt, Verdict::kPassed, Verdict::kOom};
  int checked = 0;
  for (int mask = 0; mask < 8; ++mask)
    for (const auto& state : states)
      for (const auto& verdict : verdicts)
        for (const auto& text : strings) {
          daemon::TrialChanged e;
          e.trial = 42 + mask;
          if (mask & 1) e.sweep = 7;
          if (mask & 2) e.node = -3;
          e.says_verdict = mask & 4;
          e.state = state;
          e.verdict = verdict;
          e.signature = text;
          if (text) e.reason = *text + "!";
          json want = daemon::EventData(e);
          want["type"] = "trial.changed";
          want["id"] = 123456789012;
          EXPECT_EQ("{\"id\":123456789012" + daemon::TrialChangedTextAfterId(e), SafeDump(want));
          ++checked;
        }
  EXPECT_EQ(checked, 8 * 3 * 3 * 8);
  // And through the bus: the text it retains is the event's, numbered, and a sweep's follower gets it.
  daemon::EventBus bus;
  auto follower = bus.Subscribe(0, 7);
  daemon::TrialChanged e;
  e.trial = 5;
  e.sweep = 7;
  e.state = TrialState::kRunning;
  bus.Publish(daemon::DaemonEvent(e));
  std::vector<daemon::Event> got;
  follower->Next([&](std::optional<std::vector<daemon::Event>> b) { got = b.value_or(std::vector<daemon::Event>{}); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type, "trial.changed");
  EXPECT_EQ(got[0].id, bus.last_id());
  EXPECT_EQ(json::parse(got[0].data), json({{"id", got[0].id}, {"state", "running"}, {"sweep", 7}, {"trial", 5},
                                            {"type", "trial.changed"}}));
  follower->Close();
}

}  // namespace
}  // namespace gauntlet
