// The classifier's corpora (docs/CLASSIFIER.md "Corpus and accuracy"):
//   dev/      logs written together with the rules: every one must keep its verdict and signature;
//   heldout/  logs taken from public reports, once held out (71 % before the rules that followed
//             them) and now a second development set: a floor of 95 % on verdict (+ family), misses printed;
//   frozen/   logs taken from public reports and labelled before any rule that judges them: a floor
//             on the verdict, scores per verdict printed; its misses are listed only when
//             GAUNTLET_FROZEN_MISSES=1 (to audit a label), never to write a rule from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "classifier/classifier.h"
#include "core/signal_names.h"

namespace fs = std::filesystem;
using gauntlet::classifier::Classification;
using gauntlet::classifier::ExitInfo;

namespace {

struct Case {
  std::string name;
  fs::path log;
  nlohmann::json expect;
};

std::vector<Case> LoadCorpus(const std::string& subdir) {
  std::vector<Case> out;
  for (const auto& entry : fs::directory_iterator(fs::path(GAUNTLET_CLASSIFIER_CORPUS) / subdir)) {
    if (entry.path().extension() != ".log") continue;
    fs::path expect = entry.path();
    expect.replace_extension(".expect.json");
    std::ifstream in(expect);
    Case c{entry.path().stem().string(), entry.path(), nlohmann::json()};
    if (in) c.expect = nlohmann::json::parse(in);
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  return out;
}

std::vector<Case> AllCases() {
  std::vector<Case> all = LoadCorpus("dev");
  for (auto& c : LoadCorpus("heldout")) all.push_back(std::move(c));
  return all;
}

ExitInfo ExitFor(const nlohmann::json& e) {
  ExitInfo x;
  if (e.contains("exit_code")) x.exit_code = e["exit_code"].get<int>();
  if (e.contains("signal")) {
    const auto& s = e["signal"];
    x.signal = s.is_number() ? std::optional<int>(s.get<int>()) : gauntlet::SignalNumber(s.get<std::string>());
  }
  x.timed_out = e.value("timed_out", false);
  x.cancelled = e.value("cancelled", false);
  return x;
}

std::string Describe(const Classification& got) { return gauntlet::classifier::ToJson(got).dump(); }

TEST(Corpus, EveryDevLogMatchesItsExpectation) {
  auto corpus = LoadCorpus("dev");
  ASSERT_GE(corpus.size(), 30u) << "the development corpus needs at least 30 logs";
  size_t verdict_ok = 0, signature_ok = 0;
  for (const auto& c : corpus) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.expect.is_object()) << "missing or invalid " << c.name << ".expect.json";
    ASSERT_TRUE(c.expect.contains("verdict") && c.expect.contains("signature"));
    ASSERT_FALSE(c.expect.value("source", std::string()).empty()) << "say which public report style it follows";
    Classification got = gauntlet::classifier::ClassifyFile(c.log.string(), ExitFor(c.expect));
    const bool v = gauntlet::Name(got.verdict) == c.expect["verdict"].get<std::string>();
    // "rank", when given, is the rank that failed first (docs/CLASSIFIER.md "Ranks").
    const bool s = got.signature == c.expect["signature"].get<std::string>() &&
                   (!c.expect.contains("rank") || got.rank == c.expect["rank"].get<std::string>());
    verdict_ok += v;
    signature_ok += v && s;
    EXPECT_TRUE(v && s) << "got " << Describe(got) << "\nwant verdict=" << c.expect["verdict"]
                        << " signature=" << c.expect["signature"] << " rank=" << c.expect.value("rank", std::string("(any)"));
    if (got.verdict != gauntlet::Verdict::kPassed) {
      EXPECT_FALSE(got.evidence.empty());
    }
    EXPECT_LE(got.evidence.size(), 300u);
  }
  const double n = static_cast<double>(corpus.size());
  std::printf("dev corpus: %zu logs, verdict %.1f%%, verdict+signature %.1f%%\n", corpus.size(),
              100.0 * verdict_ok / n, 100.0 * signature_ok / n);
}

// Right = the verdict, and where the expectation names a family, a signature that starts with it.
TEST(Corpus, HeldOutScoresAtLeastTheFloor) {
  auto corpus = LoadCorpus("heldout");
  ASSERT_GE(corpus.size(), 40u) << "the held-out corpus needs at least 40 logs";
  size_t verdict_ok = 0, right = 0;
  std::string misses;
  for (const auto& c : corpus) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.expect.is_object()) << "missing or invalid " << c.name << ".expect.json";
    ASSERT_TRUE(c.expect.contains("verdict"));
    ASSERT_TRUE(c.expect.value("source", std::string()).starts_with("https://")) << "name the public report";
    Classification got = gauntlet::classifier::ClassifyFile(c.log.string(), ExitFor(c.expect));
    const bool v = gauntlet::Name(got.verdict) == c.expect["verdict"].get<std::string>();
    const std::string family = c.expect.value("family", std::string());
    const bool f = family.empty() || got.signature.starts_with(family);
    verdict_ok += v;
    right += v && f;
    if (!(v && f))
      misses += "  " + c.name + ": got " + Describe(got) + " want " + c.expect["verdict"].get<std::string>() +
                (family.empty() ? "" : " (" + family + ")") + "\n";
    EXPECT_LE(got.evidence.size(), 300u);
  }
  const size_t n = corpus.size();
  std::printf("held-out corpus: %zu logs, verdict %zu/%zu (%.1f%%), verdict+family %zu/%zu (%.1f%%)\n%s", n,
              verdict_ok, n, 100.0 * verdict_ok / n, right, n, 100.0 * right / n,
              misses.empty() ? "" : ("misses:\n" + misses).c_str());
  // docs/CLASSIFIER.md states the score; the floor is the 95 %.
  const auto floor = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  EXPECT_GE(right, floor) << "held-out below the 95% floor; misses:\n" << misses;
}

// The frozen set's floor: the share of verdicts right that docs/CLASSIFIER.md states, rounded down.
// First score (main's rules of aa00e80, before any rule written after the set was frozen): see
// docs/CLASSIFIER.md; raise the floor when the rules improve, never lower it.
constexpr double kFrozenFloor = 0.89;

TEST(Corpus, FrozenScoresAtLeastTheFloor) {
  auto corpus = LoadCorpus("frozen");
  ASSERT_GE(corpus.size(), 60u) << "the frozen corpus needs at least 60 logs";
  std::map<std::string, std::pair<int, int>> by_verdict;  // verdict -> (right, total)
  size_t right = 0;
  std::string misses;
  for (const auto& c : corpus) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.expect.is_object()) << "missing or invalid " << c.name << ".expect.json";
    ASSERT_TRUE(c.expect.contains("verdict"));
    ASSERT_TRUE(c.expect.value("source", std::string()).starts_with("https://")) << "name the public report";
    const std::string want = c.expect["verdict"].get<std::string>();
    Classification got = gauntlet::classifier::ClassifyFile(c.log.string(), ExitFor(c.expect));
    const bool ok = gauntlet::Name(got.verdict) == want;
    right += ok;
    auto& v = by_verdict[want];
    v.first += ok;
    ++v.second;
    if (!ok) misses += "  " + c.name + ": got " + Describe(got) + " want " + want + "\n";
    EXPECT_LE(got.evidence.size(), 300u);
  }
  const size_t n = corpus.size();
  std::string per;
  for (const auto& [verdict, rt] : by_verdict)
    per += " " + verdict + " " + std::to_string(rt.first) + "/" + std::to_string(rt.second);
  std::printf("frozen corpus: %zu logs, verdict %zu/%zu (%.1f%%);%s\n", n, right, n, 100.0 * right / n, per.c_str());
  const char* show = std::getenv("GAUNTLET_FROZEN_MISSES");
  if (show && std::string(show) == "1") std::printf("misses (for auditing labels only):\n%s", misses.c_str());
  EXPECT_GE(static_cast<double>(right) / static_cast<double>(n), kFrozenFloor)
      << "frozen set below its floor; GAUNTLET_FROZEN_MISSES=1 lists the misses to audit their labels";
}

TEST(Corpus, CoversEveryFailureVerdict) {
  std::set<std::string> seen;
  for (const auto& c : LoadCorpus("dev"))
    if (c.expect.is_object()) seen.insert(c.expect["verdict"].get<std::string>());
  for (const char* v : {"passed", "unsupported", "crashed", "wrong_output", "timeout", "oom", "infra_error"})
    EXPECT_TRUE(seen.count(v)) << v;
}

TEST(Corpus, ChunkingDoesNotChangeAnyResult) {
  for (const auto& c : AllCases()) {
    SCOPED_TRACE(c.name);
    std::ifstream in(c.log, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const ExitInfo exit = ExitFor(c.expect);
    const Classification whole = gauntlet::classifier::ClassifyText(text, exit);
    for (size_t chunk : {1u, 3u, 17u, 64u, 4096u}) {
      gauntlet::classifier::Classifier cl;
      for (size_t i = 0; i < text.size(); i += chunk) cl.Feed(std::string_view(text).substr(i, chunk));
      Classification got = cl.Finish(exit);
      EXPECT_EQ(got.verdict, whole.verdict) << "chunk " << chunk;
      EXPECT_EQ(got.signature, whole.signature) << "chunk " << chunk;
      EXPECT_EQ(got.evidence, whole.evidence) << "chunk " << chunk;
    }
  }
}

}  // namespace
