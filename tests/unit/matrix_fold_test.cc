// The matrix's interned fold (store/matrix_fold.h) against the rule it replaced
// (tests/unit/matrix_reference.cc, store/matrix.cc as of c885d96): the same answer for a mixed store
// of several verdicts per config (Supersedes order, skips, cancels, pending trials, reused results,
// confirming attempts, flaky flags, fingerprints), several hardware classes and every rows/cols
// split, over a sweep's trials, a fingerprint's and the results index's cells.
#include <gtest/gtest.h>

#include <random>

#include "core/sweep.h"
#include "store/analytics.h"
#include "store/config_values.h"
#include "tests/support/bulk_store.h"
#include "tests/support/harness.h"
#include "tests/unit/matrix_reference.h"

namespace gauntlet {
namespace {
using nlohmann::json;

// Declared orders that are not the texts' order, so rows and breakdowns must follow the suite.
json MixedSuite(int version) {
  json params = {{"a", {"z", "y", "x10", "x9"}}, {"b", {"2", "10", "1"}}, {"c", {"p", "q", "r", "s", "t"}},
                 {"d", {"d0", "d1", "d2", "d3", "d4", "d5"}}};
  return {{"name", "mixed"}, {"version", version}, {"parameters", params}, {"key_metric", "tok_s"},
          {"stages", {{{"name", "run"}, {"kind", "command"}, {"argv", {"true"}}}}}};
}

// The order of a cell's `flaky` list followed the old fold's hash map (the new one lists configs in
// the order read): compare it sorted by trial, and past the 20 listed, which 20 it lists not at all.
json Normalized(json m) {
  for (auto& c : m["cells"]) {
    if (!c.contains("flaky")) continue;
    if (c["flaky_count"].get<size_t>() > c["flaky"].size()) c["flaky"] = c["flaky"].size();
    else std::sort(c["flaky"].begin(), c["flaky"].end(), [](const json& a, const json& b) { return a["trial"] < b["trial"]; });
  }
  return m;
}

struct MixedStore {
  test::TempDir dir;
  std::unique_ptr<store::Store> store;
  int64_t sweep = 0;
};

// A sweep of several trials per (config, hardware) with verdicts drawn around one per config, and
// a results index of cells under two suite versions, all from a fixed seed.
void FillMixed(MixedStore* m) {
  m->store = std::move(*store::Store::Open(m->dir.path() + "/g.db"));
  auto v1 = m->store->PutSuite("mixed", MixedSuite(1), "");
  auto v2 = m->store->PutSuite("mixed", MixedSuite(2), "");
  ASSERT_TRUE(v1.ok() && v2.ok());
  ASSERT_NE(v1->id, v2->id);
  const std::vector<std::string> verdicts = VerdictNames();
  const char* hardware[] = {"NVIDIA H200 · sm_90 · x1", "NVIDIA B200 · sm_100 · x1", nullptr, "unassigned"};
  const char* fingerprints[] = {"", "{\"v\":1}", "{\"v\":2}"};
  const char* attempts[] = {nullptr, "{\"passed\":1,\"crashed\":2}", "{\"timeout\": 1.5, \"oom\": 1}", "nope", "{}"};
  std::mt19937 rng(7);
  const json p = MixedSuite(2)["parameters"];
  m->store->Write([&](store::sql::Db& db) {
    // trial_count 0: the fold reads the sweep through its index (MatrixFold.ASweepReadAsARange...
    // sets it). Another sweep's trials lie among this one's ids.
    for (const char* name : {"mixed", "other"})
      db.Exec("INSERT INTO sweeps(suite_id, name, request, trial_count, created_at) VALUES(" + std::to_string(v2->id) +
              ", '" + name + "', '{}', 0, 1)");
    m->sweep = db.LastInsertId() - 1;
    auto t = db.Prepare(
        "INSERT INTO trials(sweep_id, suite_id, config, config_key, target_index, state, verdict, signature, created_at,"
        " finished_at, started_at, evidence_trial, hardware, attempt, metric_name, metric_value, metric_unit,"
        " fingerprint, flaky, attempt_counts) VALUES(?,?,?,?,0,?,?,?,1,?,?,?,?,1,?,?,?,?,?,?)");
    auto cell = db.Prepare(
        "INSERT OR REPLACE INTO cells(suite, suite_version, config_key, hardware, config, verdict, signature, trial_id,"
        " last_seen, counts, metric_name, metric_value, metric_unit, flaky, reused, fingerprint)"
        " VALUES('mixed',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    int64_t n = 0;
    for (size_t a = 0; a < 5; ++a)  // a's fifth value is undeclared: it sorts last
      for (size_t b = 0; b < 3; ++b)
        for (size_t c = 0; c < 5; ++c)
          for (size_t d = 0; d < 6; d += 1 + rng() % 2) {
            const std::string av = a < 4 ? p["a"][a].get<std::string>() : "w";
            const std::string bv = p["b"][b], cv = p["c"][c], dv = p["d"][d];
            // Some configs are stored as JSON the flat reader leaves to the full parser.
            const std::string config = rng() % 7 == 0
                ? "{\"a\": \"" + av + "\", \"b\": " + bv + ", \"c\": \"" + cv + "\", \"d\": \"" + dv + "\"}"
                : ConfigJson({{"a", av}, {"b", bv}, {"c", cv}, {"d", dv}}).dump();
            const std::string key = "a=" + av + "&b=" + bv + "&c=" + cv + "&d=" + dv;
            const std::string base = verdicts[rng() % verdicts.size()];
            for (const char* hw : hardware) {
              if (rng() % 4 == 0) continue;
              const int trials = 1 + static_cast<int>(rng() % 4);
              for (int k = 0; k < trials; ++k) {
                ++n;
                const int state = static_cast<int>(rng() % 12);  // mostly done
                const std::string v = rng() % 16 == 0 ? verdicts[rng() % verdicts.size()] : base;
                const bool done = state > 1;
                const bool reused = done && rng() % 9 == 0;
                const int64_t at = (n * 7919) % 100003;  // distinct, not in id order
                t.Bind(1, n % 23 == 0 ? m->sweep + 1 : m->sweep).Bind(2, v2->id).Bind(3, config).Bind(4, key);
                t.Bind(5, done ? "done" : state == 0 ? "queued" : "running");
                if (done) t.Bind(6, v).Bind(7, v == "passed" ? "" : v + ":sig" + std::to_string(rng() % 3));
                else t.BindNull(6).BindNull(7);
                if (done) t.Bind(8, at);
                else t.BindNull(8);
                if (reused) t.BindNull(9).Bind(10, 1);
                else t.Bind(9, at).BindNull(10);
                if (hw) t.Bind(11, hw);
                else t.BindNull(11);
                if (done && v == "passed") t.Bind(12, "tok_s").Bind(13, 1000.0 + rng() % 40).Bind(14, "tok/s");
                else t.BindNull(12).BindNull(13).BindNull(14);
                t.Bind(15, fingerprints[rng() % 3]).Bind(16, rng() % 40 == 0 ? 1 : 0);
                if (const char* ac = attempts[rng() % 5]) t.Bind(17, ac);
                else t.BindNull(17);
                t.Run();
              }
              // The results index: the same config under both versions, with its own counts.
              for (int version : {1, 2}) {
                if (rng() % 3 == 0) continue;
                const std::string cv2 = verdicts[rng() % verdicts.size()];
                cell.Bind(1, version).Bind(2, key).Bind(3, hw ? hw : "").Bind(4, config).Bind(5, cv2);
                cell.Bind(6, cv2 == "passed" ? "" : cv2 + ":c" + std::to_string(rng() % 2)).Bind(7, n + version);
                cell.Bind(8, n * 3 + version);  // distinct: the latest of a cell is one config
                cell.Bind(9, rng() % 5 == 0 ? "{\"" + cv2 + "\": 2, \"passed\": 1.0}" : "{\"" + cv2 + "\":" + std::to_string(1 + rng() % 3) + "}");
                if (cv2 == "passed") cell.Bind(10, "tok_s").Bind(11, 900.0 + rng() % 40).Bind(12, "tok/s");
                else cell.BindNull(10).BindNull(11).BindNull(12);
                cell.Bind(13, rng() % 10 == 0 ? 1 : 0).Bind(14, static_cast<int64_t>(rng() % 3)).Bind(15, fingerprints[rng() % 3]);
                cell.Run();
              }
            }
          }
  });
}

// Every split of rows and columns over the sweep's trials, one fingerprint's trials and the index.
TEST(MatrixFold, AMixedStoreGetsTheCellsTheOldRuleGave) {
  MixedStore m;
  FillMixed(&m);
  ASSERT_TRUE(m.store);
  struct Split {
    std::vector<std::string> rows;
    std::string cols;
  };
  const std::vector<Split> splits = {{{"a"}, "hardware"}, {{"a", "b"}, "hardware"}, {{"b", "a"}, "hardware"},
                                     {{"a"}, "b"},        {{"c", "d"}, "a"},        {{"d"}, "c"},
                                     {{}, "hardware"},    {{"b"}, "d"}};
  int compared = 0, mixed = 0, flaky = 0, flaky_whole = 0;
  for (const Split& sp : splits)
    for (int source = 0; source < 5; ++source) {
      store::MatrixQuery q;
      q.rows = sp.rows;
      q.cols = sp.cols;
      if (source == 0) q.sweep = m.sweep;
      else q.suite = "mixed";
      if (source == 1) q.fingerprint = "{\"v\":1}";
      if (source == 3) q.suite_version = 1;
      if (source == 4) q.suite_version = 0;  // all versions: a config's cells of both fold into one
      auto now = store::Matrix(*m.store, q);
      auto old = store::reference::ReferenceMatrix(*m.store, q);
      ASSERT_TRUE(now.ok() && old.ok()) << now.status().message() << old.status().message();
      ASSERT_FALSE((*old)["cells"].empty());
      EXPECT_EQ(Normalized(*now).dump(1), Normalized(*old).dump(1)) << "source " << source << " cols " << sp.cols;
      ++compared;
      for (auto& c : (*old)["cells"]) {
        mixed += c["state"] == "mixed";
        flaky += c["state"] == "flaky";
        flaky_whole += c["state"] == "flaky" && c["flaky_count"].get<size_t>() == c["flaky"].size();
      }
    }
  EXPECT_EQ(compared, 40);
  EXPECT_GT(mixed, 0) << "no mixed cell: the breakdowns went untested";
  EXPECT_GT(flaky_whole, 0) << "no flaky cell listed all its configs: the flaky lists went untested";
  std::cout << compared << " answers, " << mixed << " mixed cells, " << flaky << " flaky (" << flaky_whole
            << " listing every flaky config)\n";
}

// A sweep whose row gives its size is read as one range of trial ids, the other sweep's trials
// within it left out: the same answers as through the sweep's index.
TEST(MatrixFold, ASweepReadAsARangeOfIdsGetsTheSameCells) {
  MixedStore m;
  FillMixed(&m);
  ASSERT_TRUE(m.store);
  m.store->Write([&](store::sql::Db& db) {
    db.Exec("UPDATE sweeps SET trial_count = (SELECT COUNT(*) FROM trials WHERE sweep_id = sweeps.id)");
  });
  const int64_t others = m.store->Read([&](store::sql::Db& db) {
    auto s = db.Prepare("SELECT COUNT(*) FROM trials WHERE sweep_id = ?");
    s.Bind(1, m.sweep + 1);
    s.Step();
    return s.Int(0);
  });
  ASSERT_GT(others, 50) << "no other sweep's trials among this one's ids";
  for (const std::string cols : {"hardware", "c"}) {
    store::MatrixQuery q;
    q.sweep = m.sweep;
    q.rows = {"a", "b"};
    q.cols = cols;
    auto now = store::Matrix(*m.store, q), old = store::reference::ReferenceMatrix(*m.store, q);
    ASSERT_TRUE(now.ok() && old.ok());
    EXPECT_EQ(Normalized(*now).dump(1), Normalized(*old).dump(1));
  }
}

// The bench's shape (each trial its own config, verdicts drawn over two classes): byte for byte,
// as the daemon answers it (no config is flaky, so no list's order is the old hash map's).
TEST(MatrixFold, ABulkSweepAnswersByteForByteAsBefore) {
  test::TempDir dir;
  const std::string db = dir.path() + "/g.db";
  const int64_t sweep = test::FillSweep(db, test::GridSuite("bulk", {4, 5, 6, 7}), 840);
  auto s = std::move(*store::Store::Open(db));
  for (auto [rows, cols] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"p0", "p1"}, "hardware"}, {{"p0"}, "p1"}, {{"p3"}, "p2"}}) {
    store::MatrixQuery q;
    q.sweep = sweep;
    q.rows = rows;
    q.cols = cols;
    auto now = store::Matrix(*s, q), old = store::reference::ReferenceMatrix(*s, q);
    ASSERT_TRUE(now.ok() && old.ok());
    EXPECT_EQ(now->dump(), old->dump());
  }
}

TEST(MatrixFold, AFlatCountsObjectIsReadAsTheParserReadsItAndAnythingElseIsLeftToIt) {
  std::vector<std::pair<std::string_view, int64_t>> e;
  ASSERT_TRUE(store::FlatIntObject(R"( {"passed": 3, "crashed":-2 ,"x":0} )", &e));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].first, "passed");
  EXPECT_EQ(e[0].second, 3);
  EXPECT_EQ(e[1].second, -2);
  ASSERT_TRUE(store::FlatIntObject("{}", &e));
  EXPECT_TRUE(e.empty());
  for (const char* other : {R"({"a": 1.5})", R"({"a": 1e3})", R"({"a": "1"})", R"({"a": 1, "a": 2})", R"({"a": 01})",
                            R"({"a": 1234567890123456789})", R"({"a\n": 1})", R"({"a": 1)", "nope", "", "[1]"})
    EXPECT_FALSE(store::FlatIntObject(other, &e)) << other;
}

}  // namespace
}  // namespace gauntlet
