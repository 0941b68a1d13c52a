// The prefilter automaton: every occurrence of every needle, ASCII case-insensitive.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "classifier/aho_corasick.h"

using gauntlet::classifier::AhoCorasick;

namespace {
std::multiset<uint32_t> Hits(const AhoCorasick& ac, std::string_view text) {
  std::multiset<uint32_t> out;
  ac.Scan(text, [&](uint32_t id) { out.insert(id); });
  return out;
}
}  // namespace

TEST(AhoCorasick, OverlapsSuffixesAndCase) {
  AhoCorasick ac({"he", "she", "his", "hers", "", "Out Of Memory"});
  EXPECT_EQ(Hits(ac, "ushers"), (std::multiset<uint32_t>{0, 1, 3}));
  EXPECT_EQ(Hits(ac, "CUDA OUT OF MEMORY"), (std::multiset<uint32_t>{5}));
  EXPECT_EQ(Hits(ac, "hehe"), (std::multiset<uint32_t>{0, 0}));
  EXPECT_TRUE(Hits(ac, "nothing to see").empty());
  EXPECT_FALSE(ac.Scan("", [](uint32_t) {}));
}

TEST(AhoCorasick, AgreesWithNaiveSearch) {
  std::vector<std::string> needles = {"ab", "abc", "bca", "caab", "a", "zzz", "\xe9\x94\x99"};
  AhoCorasick ac(needles);
  std::mt19937 rng(1);
  const std::string alphabet = "abcABCz \xe9\x94\x99";
  for (int t = 0; t < 500; ++t) {
    std::string text;
    for (int i = 0; i < 40; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
    std::string lower = text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::multiset<uint32_t> want;
    for (uint32_t id = 0; id < needles.size(); ++id)
      for (size_t p = lower.find(needles[id]); p != std::string::npos; p = lower.find(needles[id], p + 1))
        want.insert(id);
    ASSERT_EQ(Hits(ac, text), want) << text;
  }
}
