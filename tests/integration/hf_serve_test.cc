// suites/hf-serve's server (PyTorch + transformers) on the CPU with its tiny model, through a real
// daemon and worker: the reference config runs first, a config that serves the same function
// passes the differential check, and one whose layer is perturbed (--fault layer) is wrong_output
// with the first differing position and both continuations in its evidence. Skips, saying so,
// where PyTorch or transformers is not installed (CI's machine); runs where they are.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/harness.h"

namespace gauntlet::test {
namespace {
using nlohmann::json;

bool HaveTorchAndTransformers() {
  return std::system("python3 -c 'import torch, transformers' >/dev/null 2>&1") == 0;
}

TEST(HfServe, ReferenceFirstThenDifferentialVerdicts) {
  if (!HaveTorchAndTransformers())
    GTEST_SKIP() << "PyTorch and transformers are not installed for python3: the hf-serve server cannot run here";
  TempDir dir;
  Daemon d(dir.path(), SourceDir() + "/tests/fixtures/hf-serve-cpu");
  auto worker = StartWorker(dir.path(), d.url(), "cpu", json::object(), {"--kill-grace-ms", "3000"});
  // One trial at a time: the order they ran in is part of what is checked.
  json sweep = d.PostJson("/api/v1/sweeps",
                          {{"suite", "hf-serve-cpu"},
                           {"prune", false},
                           {"reuse", false},
                           {"parameters", {{"attn", {"sdpa"}}, {"dtype", {"fp32"}}, {"fault", {"none", "layer"}}}},
                           {"include", {{{"attn", "eager"}, {"dtype", "fp32"}, {"fault", "none"}}}}},
                          201);
  ASSERT_EQ(sweep["trials"], 3) << sweep.dump();
  json done = d.WaitSweep(sweep["id"], std::chrono::seconds(600));
  ASSERT_TRUE(done["finished"].get<bool>()) << done.dump();
  std::map<std::string, json> by;
  const json items = d.GetJson("/api/v1/trials?limit=10&sweep=" + sweep["id"].dump())["items"];
  for (auto& it : items) {
    json t = d.GetJson("/api/v1/trials/" + it["id"].dump());
    by[t["config"]["attn"].get<std::string>() + "/" + t["config"]["fault"].get<std::string>()] = t;
  }
  ASSERT_EQ(by.size(), 3u) << items.dump();
  const json& ref = by["eager/none"];
  const json& same = by["sdpa/none"];
  const json& fault = by["sdpa/layer"];
  auto log = [&](const json& t) { return d.Get("/api/v1/trials/" + t["id"].dump() + "/log").body; };
  ASSERT_EQ(ref["verdict"], "passed") << ref.dump() << log(ref);
  EXPECT_EQ(same["verdict"], "passed") << same.dump() << log(same);
  EXPECT_EQ(fault["verdict"], "wrong_output") << fault.dump() << log(fault);
  EXPECT_EQ(fault["signature"].get<std::string>().rfind("wrong_output:differential:", 0), 0u) << fault.dump();
  const std::string ev = fault["result"]["evidence"];
  EXPECT_NE(ev.find("disagrees with the reference (trial " + ref["id"].dump()), std::string::npos) << ev;
  EXPECT_NE(ev.find("reference continues \""), std::string::npos) << ev;
  EXPECT_NE(ev.find("this config \""), std::string::npos) << ev;
  // The reference ran first and the others were judged against its answers.
  EXPECT_LE(ref["finished_at"].get<int64_t>(), same["started_at"].get<int64_t>()) << ref.dump() << same.dump();
  const std::string same_log = log(same);
  EXPECT_NE(same_log.find("differential check: against reference trial " + ref["id"].dump()), std::string::npos)
      << same_log;
  for (auto& st : same["result"]["stages"])
    if (st["name"] == "serve") {
      EXPECT_EQ(st["differential"]["role"], "checked") << st.dump();
      EXPECT_EQ(st["differential"]["checked"], 2) << st.dump();
    }
  for (auto& st : ref["result"]["stages"])
    if (st["name"] == "serve") {
      EXPECT_EQ(st["differential"]["role"], "reference") << st.dump();
      ASSERT_EQ(st["smoke_answers"].size(), 2u) << st.dump();
      EXPECT_EQ(st["smoke_answers"][0]["tokens"].size(), 16u) << st.dump();
      EXPECT_EQ(st["smoke_answers"][0]["top"][0].size(), 5u) << st.dump();
    }
  // The benchmark ran against the real server: tokens at each concurrency level.
  const json& m = same["result"]["metrics"];
  EXPECT_GT(m["output_tok_s@c4"]["value"].get<double>(), 0) << m.dump();
  EXPECT_TRUE(m.contains("first_smoke_s")) << m.dump();
}

}  // namespace
}  // namespace gauntlet::test
