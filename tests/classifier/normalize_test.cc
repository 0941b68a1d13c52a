// Signature normalisation, evidence trimming, regex literal extraction and signal names.
#include <gtest/gtest.h>

#include "classifier/normalize.h"
#include "classifier/regex_literal.h"
#include "core/signal_names.h"

using namespace gauntlet;
using namespace gauntlet::classifier;

TEST(Normalize, StripsNumbersAddressesPathsAndIds) {
  EXPECT_EQ(NormalizeMessage("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25GiB"),
            "CUDA out of memory. Tried to allocate <n> GiB. GPU <n> has a total capacity of <n>GiB");
  EXPECT_EQ(NormalizeMessage("bad pointer 0x7f3a2c001000 at rank 3"), "bad pointer <hex> at rank <n>");
  EXPECT_EQ(NormalizeMessage("No such file: '/root/.cache/huggingface/hub/models--x/snapshots/ab12/config.json'"),
            "No such file: 'config.json'");
  EXPECT_EQ(NormalizeMessage("NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, NCCL version 2.21.5"),
            "NCCL error in: ProcessGroupNCCL.cpp:<n>, NCCL version <n>");
  EXPECT_EQ(NormalizeMessage("request 3f2b9c1e-8d4a-4b7e-9a0c-1d2e3f4a5b6c failed"), "request <uuid> failed");
  EXPECT_EQ(NormalizeMessage("commit 9f8e7d6c5b4a3 broke it"), "commit <hex> broke it");
  EXPECT_EQ(NormalizeMessage("pid=4242 tid=17"), "pid=<n> tid=<n>");
}

TEST(Normalize, KeepsIdentifiersThatCarryMeaning) {
  EXPECT_EQ(NormalizeMessage("trtllm-gen MoE is only supported on SM100"), "trtllm-gen MoE is only supported on SM100");
  EXPECT_EQ(NormalizeMessage("Value 'sm_120a' is not defined"), "Value 'sm_120a' is not defined");
  EXPECT_EQ(NormalizeMessage("fp8 bf16 TP0 nvfp4"), "fp8 bf16 TP0 nvfp4");
  EXPECT_EQ(NormalizeMessage("a/b and N/A"), "a/b and N/A");
}

TEST(Normalize, CollapsesWhitespaceDropsAnsiAndCaps) {
  EXPECT_EQ(NormalizeMessage("  \x1b[31mError\x1b[0m   here\t\tnow  "), "Error here now");
  std::string long_msg(1000, 'x');
  EXPECT_EQ(NormalizeMessage(long_msg).size(), 160u);
  // Never splits a UTF-8 sequence.
  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "错";
  std::string n = NormalizeMessage(cjk, 10);
  EXPECT_EQ(n.size(), 9u);
}

TEST(Normalize, SameErrorFromDifferentRanksGivesOneKey) {
  EXPECT_EQ(NormalizeMessage("[Rank 3] NCCL watchdog on cuda:3 after 600012 ms"),
            NormalizeMessage("[Rank 5] NCCL watchdog on cuda:5 after 600480 ms"));
}

TEST(Evidence, TrimsAndSanitizes) {
  EXPECT_EQ(TrimEvidence("   RuntimeError: boom \r"), "RuntimeError: boom");
  std::string longline(1000, 'a');
  std::string e = TrimEvidence(longline);
  EXPECT_EQ(e.size(), 300u);
  EXPECT_TRUE(e.ends_with("..."));
  EXPECT_EQ(TrimEvidence(std::string("bad \xff byte")), "bad ? byte");
}

TEST(Basename, Paths) {
  EXPECT_EQ(PathBasename("/usr/lib/python3/dist-packages/torch/nn/modules/module.py"), "module.py");
  EXPECT_EQ(PathBasename("module.py"), "module.py");
  EXPECT_EQ(PathBasename("/a/b/"), "b");
}

TEST(RegexLiteral, FindsARequiredLiteralOrGivesUp) {
  EXPECT_EQ(RequiredLiteral("trtllm-gen .* SM100-only"), "trtllm-gen ");
  EXPECT_EQ(RequiredLiteral("Error Internal at: \\d+"), "Error Internal at: ");
  EXPECT_EQ(RequiredLiteral("CUTLASS_ERROR_([A-Z]+)"), "CUTLASS_ERROR_");
  EXPECT_EQ(RequiredLiteral("foo|barbaz"), "");
  EXPECT_EQ(RequiredLiteral("colou?r mismatch"), "r mismatch");
  EXPECT_EQ(RequiredLiteral("a(bcdef)?g"), "a");
  EXPECT_EQ(RequiredLiteral("[a-z]+\\.py"), ".py");
  EXPECT_EQ(RequiredLiteral("x{2,3}yz"), "yz");
}

TEST(Signals, NamesAndNumbers) {
  EXPECT_EQ(SignalName(11), "SIGSEGV");
  EXPECT_EQ(SignalName(9), "SIGKILL");
  EXPECT_EQ(SignalName(40), "SIG40");
  EXPECT_EQ(SignalNumber("SIGSEGV"), 11);
  EXPECT_EQ(SignalNumber("segv"), 11);
  EXPECT_EQ(SignalNumber("9"), 9);
  EXPECT_FALSE(SignalNumber("SIGNOPE"));
  EXPECT_FALSE(SignalNumber(""));
}
