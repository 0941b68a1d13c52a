// Failure clusters (GET /api/v1/signatures, store/analytics.h Signatures): what explains a cluster,
// one parameter value or, where only two together do, the pair; and reused trials are not counted.
#include <gtest/gtest.h>

#include <functional>

#include "store/analytics.h"
#include "store/store.h"

namespace gauntlet {
namespace {
using nlohmann::json;

const char* kHw = "NVIDIA B200 · sm_100 · x1";

// A suite of backend x dtype x size, and one sweep of every config of it, each finished by `verdict`
// (config -> verdict name); returns the trial ids by config key.
class Clusters : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::Store::Open(":memory:"));
    json def = {{"name", "c"}, {"version", 1},
                {"parameters", {{"backend", {"x", "y"}}, {"dtype", {"fp32", "fp16"}}, {"size", {"s", "m"}}}},
                {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
    suite_ = store_->PutSuite("c", def, "")->id;
  }
  // Stores one sweep of every config; `verdict` picks each one's verdict. Returns the first trial id.
  int64_t Sweep(const std::function<std::string(const json&)>& verdict, std::optional<int64_t> evidence = {}) {
    std::vector<store::NewTrial> trials;
    std::vector<json> configs;
    for (const char* b : {"x", "y"})
      for (const char* t : {"fp32", "fp16"})
        for (const char* s : {"s", "m"}) {
          json c = {{"backend", b}, {"dtype", t}, {"size", s}};
          configs.push_back(c);
          trials.push_back({c.dump(), std::string(b) + "," + t + "," + s, 0, 0});
        }
    int64_t first = 0;
    EXPECT_TRUE(store_->CreateSweep(suite_, "n", json::object(), 0, 3, trials, &first).ok());
    for (size_t i = 0; i < configs.size(); ++i) {
      store::ResultRow r;
      r.trial_id = first + static_cast<int64_t>(i);
      r.attempt = 1;
      r.verdict = ParseVerdict(verdict(configs[i])).value();
      r.signature = r.verdict == Verdict::kPassed ? "" : "crashed:bad_tile";
      r.hardware = kHw;
      r.finished_at = 1000 + static_cast<int64_t>(i);
      EXPECT_TRUE(store_->FinishTrial(r, evidence ? std::optional<int64_t>(*evidence + static_cast<int64_t>(i)) : std::nullopt).ok());
    }
    return first;
  }
  json Cluster() {
    auto s = store::Signatures(*store_, std::string("c"), std::nullopt);
    EXPECT_TRUE(s.ok()) << s.status().message();
    for (auto& i : (*s)["items"])
      if (i["signature"] == "crashed:bad_tile") return i;
    ADD_FAILURE() << "no cluster: " << s->dump();
    return json();
  }
  std::unique_ptr<store::Store> store_;
  int64_t suite_ = 0;
};

TEST_F(Clusters, TwoValuesThatOnlyTogetherFailAreNamedAsAPair) {
  // It fails only with backend=x and dtype=fp32 (either size): neither value alone explains it,
  // each is half right; the pair is all of it.
  Sweep([](const json& c) { return c["backend"] == "x" && c["dtype"] == "fp32" ? "crashed" : "passed"; });
  json c = Cluster();
  EXPECT_EQ(c["count"], 2);
  const json& e = c["explained_by"];
  ASSERT_TRUE(e.is_object()) << c.dump();
  EXPECT_EQ(e["params"], json({{"backend", "x"}, {"dtype", "fp32"}})) << e.dump();
  EXPECT_EQ(e["share"], 1.0);
  EXPECT_EQ(e["param"], "backend & dtype");
  EXPECT_EQ(e["value"], "x & fp32");
  EXPECT_EQ(e["hardware"], kHw);
}

TEST_F(Clusters, OneValueThatExplainsItAllIsNamedAloneNotPaired) {
  // Every backend=x config fails: the one value is the whole story, and the broadest.
  Sweep([](const json& c) { return c["backend"] == "x" ? "crashed" : "passed"; });
  json c = Cluster();
  EXPECT_EQ(c["count"], 4);
  const json& e = c["explained_by"];
  ASSERT_TRUE(e.is_object()) << c.dump();
  EXPECT_EQ(e["params"], json({{"backend", "x"}})) << e.dump();
  EXPECT_EQ(e["param"], "backend");
  EXPECT_EQ(e["value"], "x");
  EXPECT_EQ(e["share"], 1.0);
}

TEST_F(Clusters, ReusedTrialsAreNotCountedAgain) {
  const int64_t first = Sweep([](const json& c) { return c["backend"] == "x" && c["dtype"] == "fp32" ? "crashed" : "passed"; });
  // A second sweep of the same configs took every verdict by reuse (never started, each naming the
  // trial it copied): the findings are the first sweep's, counted once.
  Sweep([](const json& c) { return c["backend"] == "x" && c["dtype"] == "fp32" ? "crashed" : "passed"; }, first);
  json c = Cluster();
  EXPECT_EQ(c["count"], 2) << c.dump();
  for (auto& t : c["trials"]) EXPECT_LT(t.get<int64_t>(), first + 8) << "a reused trial is listed: " << c.dump();
  EXPECT_EQ(c["explained_by"]["share"], 1.0) << c.dump();
}

}  // namespace
}  // namespace gauntlet
