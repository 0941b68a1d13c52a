// Suite rules (parsing, precedence, benign lines, regex) and the decision between exit status,
// built-in evidence and ranks.
#include <gtest/gtest.h>

#include "classifier/classifier.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {


// "field: reason" of a refused rule set; empty when it is accepted.
std::string InvalidArgument(const char* json) {
  auto r = ParseSignatureRules(nlohmann::json::parse(json));
  return r.ok() ? "" : r.status().field() + ": " + r.status().message();
}

}  // namespace

TEST(SuiteRules, ParseAndValidate) {
  auto rules = *ParseSignatureRules(nlohmann::json::parse(
      R"([{"match": "trtllm-gen MoE kernels are SM100-only", "verdict": "unsupported"},
          {"match": "Error Internal at: \\d+", "regex": true, "verdict": "crashed", "signature": "crashed:cutlass_internal"}])"));
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_FALSE(rules[0].regex);
  EXPECT_TRUE(rules[1].regex);
  EXPECT_EQ(rules[1].signature, "crashed:cutlass_internal");
  EXPECT_TRUE(ParseSignatureRules(nlohmann::json())->empty());

  EXPECT_NE(InvalidArgument(R"({"match": "x"})").find("signatures: must be an array"), std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"verdict": "crashed"}])").find("signatures[0].match"), std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "", "verdict": "crashed"}])").find("signatures[0].match"), std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "verdict": "exploded"}])").find("signatures[0].verdict"),
            std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "verdict": "skipped"}])").find("signatures[0].verdict"),
            std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "verdict": "oom"}, {"match": "(", "regex": true, "verdict": "oom"}])")
                .find("signatures[1].match: invalid regex"),
            std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "regex": "yes", "verdict": "oom"}])").find("signatures[0].regex"),
            std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "verdit": "oom"}])").find("signatures[0].verdit"), std::string::npos);
  EXPECT_NE(InvalidArgument(R"([{"match": "x", "verdict": "oom", "signature": 3}])").find("signatures[0].signature"),
            std::string::npos);
}

TEST(SuiteRules, TakePrecedenceOverBuiltins) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/x/flashinfer/fused_moe/core.py\", line 10, in run\n"
      "RuntimeError: trtllm-gen MoE kernels are SM100-only; no kernel image is available for execution on the device\n";
  EXPECT_EQ(ClassifyText(log, ExitCode(1)).signature, "unsupported:no_kernel_image");
  std::vector<SignatureRule> rules = {{"trtllm-gen MoE kernels are SM100-only", false, Verdict::kUnsupported, ""}};
  auto c = ClassifyText(log, ExitCode(1), rules);
  EXPECT_EQ(c.verdict, Verdict::kUnsupported);
  EXPECT_EQ(c.signature, "unsupported:trtllm-gen MoE kernels are SM100-only");
  EXPECT_NE(c.evidence.find("SM100-only"), std::string::npos);
  // Even when the process claims success.
  EXPECT_EQ(ClassifyText("note: trtllm-gen MoE kernels are SM100-only\n", ExitCode(0), rules).verdict, Verdict::kUnsupported);
  // Case-sensitive substring: a differently-cased line does not match the suite rule.
  std::vector<SignatureRule> marker = {{"Backend Refused", false, Verdict::kUnsupported, ""}};
  EXPECT_EQ(ClassifyText("backend refused\n", ExitCode(0), marker).verdict, Verdict::kPassed);
  EXPECT_EQ(ClassifyText("Backend Refused\n", ExitCode(0), marker).verdict, Verdict::kUnsupported);
}

TEST(SuiteRules, FirstRuleInSuiteOrderWins) {
  std::vector<SignatureRule> rules = {{"second marker", false, Verdict::kOom, "oom:custom"},
                                      {"first marker", false, Verdict::kCrashed, "crashed:custom"}};
  auto c = ClassifyText("first marker\nsecond marker\n", ExitCode(1), rules);
  EXPECT_EQ(c.signature, "oom:custom");
}

TEST(SuiteRules, RegexWithAndWithoutLiteral) {
  std::vector<SignatureRule> with_literal = {{"Error Internal at: \\d+", true, Verdict::kCrashed, "crashed:cutlass_at"}};
  EXPECT_EQ(ClassifyText("x\nGot cutlass error: Error Internal at: 123\n", ExitCode(1), with_literal).signature,
            "crashed:cutlass_at");
  EXPECT_EQ(ClassifyText("Error Internal at: none\n", ExitCode(0), with_literal).verdict, Verdict::kPassed);
  // No literal can be proven: the regex runs on every line, still correct.
  std::vector<SignatureRule> alternation = {{"^(foo|bar) exploded$", true, Verdict::kCrashed, "crashed:fb"}};
  EXPECT_EQ(ClassifyText("a\nbar exploded\n", ExitCode(1), alternation).signature, "crashed:fb");
  // Anchors apply to the message after a rank prefix, too.
  EXPECT_EQ(ClassifyText("[rank2]: foo exploded\n", ExitCode(1), alternation).signature, "crashed:fb");
}

// tests/fuzz/corpus/classifier/regress-64k-line-under-regex-rule: a line of 64 KiB (the cap) that a
// suite's regex matched along its length overflowed the worker's stack in std::regex. RE2 searches
// the whole line in linear time (core/user_regex.h): a match that starts anywhere in it is found.
TEST(SuiteRules, ARegexRuleOnAHugeLineNeitherCrashesNorMisses) {
  std::vector<SignatureRule> rules = {{"max abs diff [0-9]+", true, Verdict::kWrongOutput, "wrong_output:diff"}};
  const std::string line = "over tolerance: max abs diff " + std::string(65000, '1') + "\n";
  EXPECT_EQ(ClassifyText(line, ExitCode(1), rules).signature, "wrong_output:diff");
  const std::string late = std::string(60000, '.') + " max abs diff 7\n";  // past the old 4 KiB cut
  EXPECT_EQ(ClassifyText(late, ExitCode(1), rules).signature, "wrong_output:diff");
  Classifier c(rules);
  for (size_t at = 0; at < line.size(); at += 1000) c.Feed(std::string_view(line).substr(at, 1000));
  EXPECT_EQ(c.Finish(ExitCode(1)).signature, "wrong_output:diff");
}

TEST(SuiteRules, PassedMarksBenignLines) {
  const std::string log = "ERROR: FusedMoE is not supported on this GPU architecture sm_120\nall done\n";
  EXPECT_EQ(ClassifyText(log, ExitCode(1)).verdict, Verdict::kUnsupported);
  std::vector<SignatureRule> benign = {{"FusedMoE is not supported", false, Verdict::kPassed, ""}};
  auto c = ClassifyText(log, ExitCode(1), benign);
  EXPECT_EQ(c.verdict, Verdict::kCrashed);
  EXPECT_EQ(c.signature, "crashed:exit_code:1");
}

TEST(Decision, ExitZeroWithoutEvidencePasses) {
  EXPECT_EQ(ClassifyText("loading\nready\n", ExitCode(0)).verdict, Verdict::kPassed);
  EXPECT_EQ(ClassifyText("", ExitCode(0)).signature, "");
  EXPECT_EQ(ClassifyText("hello\n", ExitInfo{}).verdict, Verdict::kPassed);
  // A handled traceback in a successful run is not a failure...
  EXPECT_EQ(ClassifyText("Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: retry\nok\n", ExitCode(0))
                .verdict,
            Verdict::kPassed);
  // ...but a refusal that the program swallowed is.
  auto c = ClassifyText("This example requires a GPU with compute capability 100a or later.\n", ExitCode(0));
  EXPECT_EQ(c.verdict, Verdict::kUnsupported);
  EXPECT_EQ(c.signature, "unsupported:arch_gate:This example requires a GPU with compute capability <n>a or later.");
}

TEST(Decision, ExitStatusFallbacks) {
  EXPECT_EQ(ClassifyText("bye\n", ExitCode(3)).signature, "crashed:exit_code:3");
  EXPECT_EQ(ClassifyText("bye\n", ExitCode(3)).evidence, "bye");
  EXPECT_EQ(ClassifyText("bye\n", ExitSignal(11)).signature, "crashed:signal:SIGSEGV");
  EXPECT_EQ(ClassifyText("bye\n", ExitCode(139)).signature, "crashed:signal:SIGSEGV");
  EXPECT_EQ(ClassifyText("bye\n", ExitSignal(9)).signature, "crashed:signal:SIGKILL");
  EXPECT_EQ(ClassifyText("loading\nKilled\n", ExitSignal(9)).signature, "oom:host");
  EXPECT_EQ(ClassifyText("bash: line 1:  4242 Killed    python3 x.py\n", ExitCode(137)).signature, "oom:host");
  // "Killed" without SIGKILL is just a word.
  EXPECT_EQ(ClassifyText("Killed\n", ExitCode(1)).signature, "crashed:exit_code:1");
  ExitInfo t;
  t.timed_out = true;
  t.signal = 9;
  EXPECT_EQ(ClassifyText("waiting\n", t).signature, "timeout:stage_limit");
  ExitInfo x;
  x.cancelled = true;
  x.exit_code = 1;
  EXPECT_EQ(ClassifyText("RuntimeError: x\n", x).verdict, Verdict::kCancelled);
}

TEST(Decision, RootCauseBeatsTimeoutAndWatchdog) {
  const std::string log =
      "[rank1]: Traceback (most recent call last):\n"
      "[rank1]:   File \"/w/model_runner.py\", line 5, in forward\n"
      "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "[rank0]:[E0601 13:10:01.0 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600012 milliseconds before timing out.\n";
  ExitInfo t;
  t.timed_out = true;
  EXPECT_EQ(ClassifyText(log, t).signature, "crashed:illegal_memory_access");
  EXPECT_EQ(ClassifyText(log, ExitSignal(6)).signature, "crashed:illegal_memory_access");
  // Only the watchdog: a hang.
  const std::string hang = log.substr(log.find("[rank0]:[E"));
  EXPECT_EQ(ClassifyText(hang, ExitSignal(6)).signature, "timeout:nccl_watchdog");
  EXPECT_EQ(ClassifyText(hang, t).signature, "timeout:nccl_watchdog");
}

TEST(Decision, FirstFailingRankWinsEvenIfLaterRanksFailHarder) {
  const std::string log =
      "[rank2]: Traceback (most recent call last):\n"
      "[rank0]: Traceback (most recent call last):\n"
      "[rank2]:   File \"/w/layer.py\", line 5, in forward\n"
      "[rank0]:   File \"/w/comm.py\", line 9, in all_reduce\n"
      "[rank2]: ValueError: shape mismatch in expert 12 of 256\n"
      "[rank0]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank 0.\n";
  auto c = ClassifyText(log, ExitCode(1));
  EXPECT_EQ(c.signature, "crashed:ValueError:shape mismatch in expert <n> of <n>@layer.py");
  EXPECT_NE(c.evidence.find("[rank2]"), std::string::npos);
}

TEST(Decision, ChainedExceptionsUseTheLastExceptionLine) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/a/loader.py\", line 3, in load\n"
      "KeyError: 'model.layers.3.mlp.gate'\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/a/main.py\", line 1, in <module>\n"
      "  File \"/a/weights.py\", line 77, in load_weights\n"
      "RuntimeError: Failed to load weight model.layers.3.mlp.gate from shard 2\n";
  EXPECT_EQ(ClassifyText(log, ExitCode(1)).signature,
            "crashed:RuntimeError:Failed to load weight model.layers.<n>.mlp.gate from shard <n>@weights.py");
}

TEST(Decision, AdvisoryRefusalsDoNotDecide) {
  const std::string log =
      "WARNING 06-01 10:00:00 [cuda.py:12] FlashInfer sampler is not supported on this GPU, falling back to PyTorch\n"
      "[2025-06-01 10:00:00 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.\n"
      "done\n";
  EXPECT_EQ(ClassifyText(log, ExitCode(0)).verdict, Verdict::kPassed);
  EXPECT_EQ(ClassifyText(log, ExitCode(2)).signature, "crashed:exit_code:2");
}

TEST(Decision, NcclWarnAloneNeedsAKnownFailure) {
  const std::string log = "node1:17:17 [0] NCCL WARN Failed to open libibverbs.so[.1]\nserving\n";
  EXPECT_EQ(ClassifyText(log, ExitInfo{}).verdict, Verdict::kPassed);
  EXPECT_EQ(ClassifyText(log, ExitCode(0)).verdict, Verdict::kPassed);
  auto c = ClassifyText(log, ExitCode(1));
  EXPECT_EQ(c.verdict, Verdict::kCrashed);
  EXPECT_EQ(c.signature, "crashed:nccl:Failed to open libibverbs.so[.<n>]");
}

// Engines are shared between classifiers with the same rules (built once per worker, not per
// stage); classifiers with different rules, or rules differing only in verdict, must not share one.
TEST(SuiteRules, SharedEnginesKeepEachRuleSetApart) {
  const std::string log = "fatal: widget exploded\n";
  std::vector<SignatureRule> a = {{"widget exploded", false, Verdict::kUnsupported, ""}};
  std::vector<SignatureRule> b = {{"widget exploded", false, Verdict::kOom, ""}};
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(ClassifyText(log, ExitCode(1), a).verdict, Verdict::kUnsupported);
    EXPECT_EQ(ClassifyText(log, ExitCode(1), b).verdict, Verdict::kOom);
    EXPECT_EQ(ClassifyText(log, ExitCode(1)).signature.rfind("unsupported", 0), std::string::npos);
  }
  // Two live classifiers on one shared engine keep their own streaming state.
  Classifier x(a), y(a);
  x.Feed("fatal: widget ");
  y.Feed("all fine\n");
  x.Feed("exploded\n");
  EXPECT_EQ(x.Finish(ExitCode(1)).verdict, Verdict::kUnsupported);
  EXPECT_EQ(y.Finish(ExitCode(0)).verdict, Verdict::kPassed);
}

// classify's JSON edge spells the verdict by its name (the enum's number would be a silent break).
TEST(Classifier, ToJsonSpellsTheVerdict) {
  nlohmann::json j = ToJson(ClassifyText("RuntimeError: CUDA error: an illegal memory access was encountered\n", ExitCode(1)));
  EXPECT_EQ(j["verdict"], "crashed") << j.dump();
  EXPECT_EQ(ToJson(ClassifyText("ok\n", ExitCode(0)))["verdict"], "passed");
}
