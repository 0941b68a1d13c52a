// The README's five-minute tour and the user guide's examples, run as written against a live daemon
// (port 0) and a real worker, with the built `gauntlet` first on PATH: each command of the tour's
// block runs in the source folder as the reader would type it (only the daemon's address differs),
// and what it prints is checked against what the docs say of it, by meaning: the verdicts, counts
// and exit statuses they state, not a copy of a table (cell texts may change; their words may not).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "tests/integration/cli_fixture.h"

namespace gauntlet::test {
namespace {

std::string Doc(const std::string& rel) { return ReadFile(SourceDir() + "/" + rel); }

// The fenced blocks of `md` (their info string and text), in order.
std::vector<std::pair<std::string, std::string>> Fences(const std::string& md) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(md);
  std::string l, info, text;
  bool open = false;
  size_t fence = 0;  // the opening fence's indent (a block in a list item), taken off each line
  while (std::getline(in, l)) {
    const size_t ind = std::min(l.find_first_not_of(' '), l.size());
    const std::string t = l.substr(ind);
    if (!open && t.rfind("```", 0) == 0) {
      open = true;
      fence = ind;
      info = t.substr(3);
      text.clear();
    } else if (open && t.rfind("```", 0) == 0) {
      out.emplace_back(info, text);
      open = false;
    } else if (open) {
      text += l.substr(std::min(ind, fence)) + "\n";
    }
  }
  return out;
}

// The first fenced block after `heading` whose text contains `has` ("" when none).
std::string BlockAfter(const std::string& md, const std::string& heading, const std::string& has) {
  const size_t at = md.find(heading);
  if (at == std::string::npos) return "";
  for (auto& [info, text] : Fences(md.substr(at)))
    if (text.find(has) != std::string::npos) return text;
  return "";
}

// A block's command lines, each without its trailing "# comment".
std::vector<std::string> Commands(const std::string& block) {
  static const std::regex kComment("\\s+#\\s.*$");
  std::vector<std::string> out;
  for (auto& l : Lines(block)) {
    std::string c = std::regex_replace(l, kComment, "");
    if (!c.empty() && c[0] != '#') out.push_back(c);
  }
  return out;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

class DocsTour : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = std::make_unique<Daemon>(dir_.path(), SourceDir() + "/suites");
    worker_ = StartWorker(dir_.path(), d_->url(), "laptop", json::object(), {"--max-trials", "4"});
  }
  // One command line as the reader types it, in the source folder, after the tour's `export` line
  // (when there is one); the docs' address of the daemon is this test's.
  Out Sh(const std::string& line, const std::string& prelude = "") {
    const std::string bin_dir = std::filesystem::path(GauntletBin()).parent_path().string();
    const std::string script = "cd '" + SourceDir() + "'\n" + prelude + "\nexport PATH='" + bin_dir + "':$PATH\n" +
                               Replace(line, "http://127.0.0.1:8080", d_->url()) + "\n";
    return RunProgram(dir_, {"/bin/bash", "-c", script}, {"GAUNTLET_SERVER=" + d_->url()}, "", std::chrono::seconds(300));
  }
  void GuideTourSteps();
  TempDir dir_;
  std::unique_ptr<Daemon> d_;
  std::unique_ptr<Child> worker_;
};

// The sweep's last progress line (`submit --wait` / `rerun --wait` off a terminal print JSON lines).
json LastProgress(const Out& o) {
  auto ls = Lines(o.out);
  if (ls.empty()) return json();
  return json::parse(ls.back(), nullptr, false);
}

int64_t Count(const json& by_verdict, const char* v) { return by_verdict.value(v, int64_t{0}); }

// Checks one README tour command's output against what the README says of it (`verb`: its
// subcommand, or the program run); `sweep1` is the tour sweep's last progress, set by `submit`.
void CheckReadmeCommand(Daemon& d, const std::string& verb, const std::string& c, const Out& o, json& sweep1) {
  const std::string all = o.out + o.err;
  if (verb == "suites") {
    EXPECT_EQ(o.code, 0) << all;
    EXPECT_NE(o.out.find("demo-bringup"), std::string::npos) << all;
  } else if (verb == "submit") {
    // "a progress bar, then exit 0/1": some trials fail, so 1; pruning skips what a refusal settled.
    EXPECT_EQ(o.code, 1) << all;
    sweep1 = LastProgress(o);
    ASSERT_TRUE(sweep1.is_object() && sweep1.value("finished", false)) << all;
    EXPECT_EQ(sweep1["trials"], 36);
    const json& v = sweep1["by_verdict"];
    for (const char* k : {"passed", "unsupported", "crashed", "wrong_output", "skipped"})
      EXPECT_GT(Count(v, k), 0) << k << " in " << v.dump();
  } else if (verb == "matrix") {
    EXPECT_EQ(o.code, 0) << all;
    for (const char* w : {"flashinfer_cutedsl", "sm_120", "unsupported", "crashed", "skipped"})
      EXPECT_NE(o.out.find(w), std::string::npos) << w << "\n" << o.out;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(o.out, m, std::regex("wrong.output"))) << o.out;
  } else if (verb == "trials") {
    // "what failed, with signatures": the crashed trials, each with its signature.
    EXPECT_EQ(o.code, 0) << all;
    int rows = 0;
    for (auto& l : Lines(o.out))
      if (l.find(" crashed ") != std::string::npos) {
        ++rows;
        EXPECT_NE(l.find("crashed:"), std::string::npos) << l;
      }
    EXPECT_EQ(rows, Count(sweep1["by_verdict"], "crashed")) << o.out;
  } else if (verb == "logs") {
    // The numbered trial is one of the crashes the listing above shows, and its log says how.
    EXPECT_EQ(o.code, 0) << all;
    const std::string id = c.substr(c.rfind(' ') + 1);
    json t = d.GetJson("/api/v1/trials/" + id);
    EXPECT_EQ(t["verdict"], "crashed") << "the tour's `gauntlet logs " << id << "` is not a crash: " << t.dump();
    EXPECT_NE(o.out.find("RuntimeError: Error Internal"), std::string::npos) << all;
    EXPECT_NE(o.out.find("crashed"), std::string::npos) << all;
  } else if (verb == "rerun") {
    // "rerun sweep 1's failed trials as a new, linked sweep": the failures run again (and fail again).
    EXPECT_EQ(o.code, 1) << all;
    json fin = LastProgress(o);
    ASSERT_TRUE(fin.is_object() && fin.value("finished", false)) << all;
    EXPECT_EQ(fin["sweep"], 2);
    const json& v = sweep1["by_verdict"];
    EXPECT_EQ(fin["trials"], Count(v, "unsupported") + Count(v, "crashed") + Count(v, "wrong_output")) << fin.dump();
    EXPECT_EQ(fin["by_verdict"].value("passed", 0), 0) << fin.dump();
    EXPECT_EQ(d.GetJson("/api/v1/sweeps/2")["rerun_of"], 1);
  } else if (verb == "diff") {
    // "exit 1 if something broke": the simulation fails the same way twice, so nothing broke.
    EXPECT_EQ(o.code, 0) << all;
    EXPECT_EQ(o.out.find("broke"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(" same"), std::string::npos) << o.out;
  } else if (verb == "triage") {
    // "failures no tool explained": the tour's crashes all say why (the simulation prints their
    // errors), so there is nothing to label, and it says so.
    EXPECT_EQ(o.code, 0) << all;
    EXPECT_NE(o.out.find("nothing to triage"), std::string::npos) << all;
  } else if (verb == "curl") {
    // The matrix as CSV: a header, then one line per row x column cell (12 x 3).
    EXPECT_EQ(o.code, 0) << all;
    auto ls = Lines(o.out);
    ASSERT_FALSE(ls.empty()) << all;
    EXPECT_EQ(ls[0].rfind("moe_runner_backend,fp4_gemm_backend,arch,", 0), 0u) << ls[0];
    EXPECT_EQ(ls.size(), 1u + 12 * 3) << o.out;
  } else {
    ADD_FAILURE() << "the README tour has a command this test does not know: " << c;
  }
}

// The README's tour block, each command run as written, in order, each checked against what its
// comment and the README's prose say of it. Then the user guide's tour steps that the README does
// not have, on the same daemon (the README's rerun is its only extra sweep).
TEST_F(DocsTour, TheReadmeAndUserGuideToursDoWhatTheySay) {
  const std::string readme = Doc("README.md");
  const std::string block = BlockAfter(readme, "## A five-minute tour", "gauntlet submit");
  auto cmds = Commands(block);
  // The block's shape changing must not make this pass on nothing.
  ASSERT_GE(cmds.size(), 8u) << "README.md lost its tour block:\n" << block;
  std::string prelude;
  std::set<std::string> ran;
  json sweep1;
  for (const std::string& c : cmds) {
    SCOPED_TRACE("README tour: " + c);
    if (c.rfind("export ", 0) == 0) {
      prelude = c;
      continue;
    }
    Out o = Sh(c, prelude);
    const std::string verb = c.rfind("gauntlet ", 0) == 0 ? c.substr(9, c.find(' ', 9) - 9) : c.substr(0, c.find(' '));
    ran.insert(verb);
    CheckReadmeCommand(*d_, verb, c, o, sweep1);
  }
  for (const char* v : {"suites", "submit", "matrix", "trials", "logs", "rerun", "diff", "curl"})
    EXPECT_TRUE(ran.count(v)) << "the README tour no longer runs " << v;

  GuideTourSteps();
}

// The user guide's tour (its steps 2 to 6), on the daemon the README's tour left (whose rerun is
// the one sweep the guide does not have).
void DocsTour::GuideTourSteps() {
  const std::string guide = Doc("docs/USER_GUIDE.md");
  const size_t tour = guide.find("## A five-minute tour");
  ASSERT_NE(tour, std::string::npos);
  const std::string steps = guide.substr(tour, guide.find("\n## ", tour + 1) - tour);
  for (auto& c : Commands(BlockAfter(steps, "**Look around.**", "gauntlet nodes"))) {
    Out o = Sh(c);
    EXPECT_EQ(o.code, 0) << c << ": " << o.err;
    if (c == "gauntlet suites") EXPECT_NE(o.out.find("arch, delay, fp4_gemm_backend, moe_runner_backend"), std::string::npos) << o.out;
    if (c == "gauntlet nodes") EXPECT_NE(o.out.find("online"), std::string::npos) << "the worker is a node in state online:\n" << o.out;
  }

  auto matrices = Commands(BlockAfter(steps, "**See the matrix.**", "gauntlet matrix"));
  ASSERT_EQ(matrices.size(), 2u) << "the guide's step 4 runs two matrices";
  Out whole = Sh(matrices[0]);
  EXPECT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(whole.out.find("mixed"), std::string::npos) << "every cell of the first is one config:\n" << whole.out;
  Out hidden = Sh(matrices[1]);
  EXPECT_EQ(hidden.code, 0) << hidden.err;
  // "each cell covers its three configs": the guide's own examples of a range of passes and of a
  // mixed cell, read from its text (less the glyph; each part of a mixed cell but the ones it says
  // depend on the order trials ran in), are in the output, a mixed cell's parts on one line.
  const size_t from = steps.find("```", steps.find("```", steps.find("**See the matrix.**")) + 3) + 3;  // past its block
  const std::string step4 = steps.substr(from, steps.find("**Dig into a failure.**") - from);
  std::string single, range, mixed_cell;
  static const std::regex kSpan("`([^`]+)`");
  for (std::sregex_iterator it(step4.begin(), step4.end(), kSpan), end; it != end; ++it) {
    std::string span = (*it)[1];
    span = span.substr(std::min(span.size(), span.find_first_of("0123456789abcdefghijklmnopqrstuvwxyz")));
    if (span.find("tok/s") != std::string::npos && span.find("–") == std::string::npos && single.empty()) single = span;
    if (span.find("tok/s") != std::string::npos && span.find("–") != std::string::npos && range.empty()) range = span;
    if (span.rfind("mixed", 0) == 0 && mixed_cell.empty()) mixed_cell = span;
  }
  ASSERT_FALSE(single.empty() || range.empty() || mixed_cell.empty()) << "the guide's step 4 lost an example:\n" << step4;
  EXPECT_NE(whole.out.find(single), std::string::npos) << single << "\n" << whole.out;
  EXPECT_NE(hidden.out.find(range), std::string::npos) << range << "\n" << hidden.out;
  std::vector<std::string> parts;
  for (size_t a = 0, b; a < mixed_cell.size(); a = b + std::string(" · ").size()) {
    b = std::min(mixed_cell.find(" · ", a), mixed_cell.size());
    const std::string part = mixed_cell.substr(a, b - a);
    if (part.rfind("skipped", 0) != 0 && part.rfind("unsupported", 0) != 0) parts.push_back(part);
  }
  ASSERT_GE(parts.size(), 2u) << "the guide's mixed example says too little to check: " << mixed_cell;
  bool mixed = false;
  for (auto& l : Lines(hidden.out)) {
    bool all = true;
    for (auto& p : parts) all = all && l.find(p) != std::string::npos;
    mixed = mixed || all;
  }
  EXPECT_TRUE(mixed) << "no cell reads as the guide's `" << mixed_cell << "`:\n" << hidden.out;
  EXPECT_NE(hidden.out.find("with fp4_gemm_backend=flashinfer_cudnn"), std::string::npos) << hidden.out;

  auto digs = Commands(BlockAfter(steps, "**Dig into a failure.**", "gauntlet logs"));
  ASSERT_EQ(digs.size(), 2u);
  Out listed = Sh(digs[0]);
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("27 "), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("31 "), std::string::npos) << listed.out;
  Out log = Sh(digs[1]);
  EXPECT_EQ(log.code, 0) << log.err;
  EXPECT_NE(log.out.find("RuntimeError: Error Internal"), std::string::npos) << log.out;
  json clusters = d_->GetJson("/api/v1/signatures?suite=demo-bringup");
  json crash;
  for (auto& c : clusters["items"])
    if (c["verdict"] == "crashed") crash = c;
  ASSERT_TRUE(crash.is_object()) << clusters.dump();
  EXPECT_EQ(crash["explained_by"]["params"], json({{"arch", "sm_120"}, {"moe_runner_backend", "flashinfer_cutedsl"}}))
      << crash.dump();

  // "Submit it again ... finishes at once and runs nothing": each trial reused or pruned again.
  Out again = Sh("gauntlet submit suites/demo/sweep.json --wait");
  ASSERT_NE(steps.find("`gauntlet submit suites/demo/sweep.json --wait` finishes at once"), std::string::npos);
  EXPECT_EQ(again.code, 1) << again.out << again.err;
  json fin = LastProgress(again);
  ASSERT_TRUE(fin.is_object() && fin.value("finished", false)) << again.out;
  EXPECT_GT(fin["reused"].get<int64_t>(), 0) << fin.dump();
  EXPECT_EQ(fin["reused"].get<int64_t>() + Count(fin["by_verdict"], "skipped"), 36) << fin.dump();
}


// The guide's "Writing a suite" example and the sweep that narrows it, as written: the suite is
// pushed (with a stand-in for its script), the sweep submitted; its trials are the sweep's two
// backends x two targets, and the omitted `shape` took its default, as the sweep's comment says.
TEST_F(DocsTour, TheGuidesSuiteAndSweepExamplesDoWhatTheySay) {
  const std::string guide = Doc("docs/USER_GUIDE.md");
  const std::string suite = BlockAfter(guide, "## Writing a suite", "\"name\": \"my-gemm\"");
  const std::string sweep = BlockAfter(guide, "A sweep names the suite and narrows it", "suite: my-gemm");
  ASSERT_FALSE(suite.empty() || sweep.empty()) << "the guide lost its my-gemm suite or sweep example";
  std::filesystem::create_directories(dir_.path() + "/my-gemm");
  const std::string suite_file = dir_.Write("my-gemm/my-gemm.json", suite);
  dir_.Write("my-gemm/check_gemm.py", "import sys\nsys.exit(0)\n");
  const std::string sweep_file = dir_.Write("blackwell.yaml", sweep);
  Out push = Sh("gauntlet suites push '" + suite_file + "'");
  ASSERT_EQ(push.code, 0) << push.out << push.err;
  Out sub = Sh("gauntlet submit '" + sweep_file + "'");
  ASSERT_EQ(sub.code, 0) << sub.out << sub.err;
  json created = json::parse(Lines(sub.out).at(0), nullptr, false);
  ASSERT_TRUE(created.is_object()) << sub.out;
  // "each config x each target is one trial": backend [cutlass, cudnn] x two targets.
  EXPECT_EQ(created["trials"], 4) << created.dump();
  json trials = d_->GetJson("/api/v1/trials?sweep=" + created["id"].dump());
  std::set<std::string> backends;
  for (auto& t : trials["items"]) {
    backends.insert(t["config"]["backend"].get<std::string>());
    EXPECT_EQ(t["config"]["shape"], "16x8192x8192") << "the omitted shape takes its default: " << t.dump();
  }
  EXPECT_EQ(backends, (std::set<std::string>{"cutlass", "cudnn"}));
  EXPECT_NE(sweep.find("omitted parameter takes its default"), std::string::npos)
      << "the sweep's comment no longer says what an omitted parameter takes:\n" << sweep;
  Out cancel = Sh("gauntlet cancel " + created["id"].dump());
  EXPECT_EQ(cancel.code, 0) << cancel.out << cancel.err;
}

}  // namespace
}  // namespace gauntlet::test
