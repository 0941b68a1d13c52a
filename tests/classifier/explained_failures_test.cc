// The rules docs/CLASSIFIER.md "Where the word lists come from" lists for a runner's bare failure and
// the shapes beside it, each written as its tool's source prints it: CTest's summary, the CUDA
// samples' QA line, unittest's printErrorList (Lib/unittest/runner.py), Check's check_run.c,
// glibc's assert, cudnn-frontend's check_support, TensorRT's builder messages.
#include <gtest/gtest.h>

#include "classifier/check_report.h"
#include "classifier/classifier.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {
Classification Explained(const std::string& log, int exit_code = 1) { return ClassifyText(log, ExitCode(exit_code)); }

const char* kCtestOneFailed =
    "Test project /src/build\n"
    "    Start 1: test_array\n"
    "1/2 Test #1: test_array .......................***Failed    8.14 sec\n"
    "    Start 2: test_util\n"
    "2/2 Test #2: test_util ........................   Passed    0.03 sec\n"
    "\n"
    "50% tests passed, 1 tests failed out of 2\n"
    "\n"
    "The following tests FAILED:\n"
    "\t  1 - test_array (Failed)\n"
    "Errors while running CTest\n";
}  // namespace

TEST(BareRunnerFailure, ACauseTheLogStatesElsewhereExplainsIt) {
  // Alone, CTest's bare ***Failed says only that the test failed.
  Classification bare = Explained(kCtestOneFailed, 8);
  EXPECT_EQ(bare.verdict, Verdict::kCrashed) << ToJson(bare).dump();
  EXPECT_EQ(bare.signature, "crashed:test_failed:test_array");
  // Check's fork mode killed the test at its time limit (check_run.c).
  Classification deadline = Explained(std::string(kCtestOneFailed) +
                                      "check_elemwise.c:43:E:contig:test_contig_simple:0: (after this point) Test timeout expired\n", 8);
  EXPECT_EQ(deadline.verdict, Verdict::kTimeout) << ToJson(deadline).dump();
  // The QA line says the program failed; TensorRT's builder said why.
  Classification refused = Explained(
      "[E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 120 is not supported by this TensorRT release.)\n"
      "[E] Engine could not be created from network\n"
      "&&&& FAILED TensorRT.trtexec [TensorRT v100700] # trtexec --onnx=m.onnx\n");
  EXPECT_EQ(refused.verdict, Verdict::kUnsupported) << ToJson(refused).dump();
  // A case whose own text names the cause keeps it: a mismatch printed under ***Failed.
  Classification own = Explained(std::string(kCtestOneFailed) + "mismatch at index 17: expected 3.0, got 2.5\n", 8);
  EXPECT_EQ(own.verdict, Verdict::kWrongOutput) << ToJson(own).dump();
  // A crash elsewhere does not explain a result line's FAIL: the reference check still failed.
  Classification fail = Explained("Segmentation fault in a helper thread was caught and retried\nResult = FAIL\n");
  EXPECT_EQ(fail.verdict, Verdict::kWrongOutput) << ToJson(fail).dump();
}

TEST(CutReports, AUnittestFailBlockWithoutItsUpperSeparatorIsRead) {
  const std::string log =
      "FAIL: test_einsum_8 (__main__.EinsumTest)\n"
      "----------------------------------------------------------------------\n"
      "Traceback (most recent call last):\n"
      "  File \"/x/einsum_test.py\", line 162, in test_einsum_8\n"
      "    torch.testing.assert_close(a, b)\n"
      "AssertionError: Tensor-likes are not close!\n"
      "\n"
      "----------------------------------------------------------------------\n"
      "Ran 16 tests in 34.551s\n"
      "\n"
      "FAILED (failures=2, errors=4)\n";
  Classification c = Explained(log);
  EXPECT_EQ(c.verdict, Verdict::kWrongOutput) << ToJson(c).dump();
  EXPECT_EQ(c.basis, Basis::kRunner);
  // A line that only looks like a header (no test id, no dashes after it) is not a block.
  Classification prose = Explained("FAIL: could not reach the mirror\nretrying\nRan 3 tests in 0.1s\n\nOK\n", 0);
  EXPECT_EQ(prose.verdict, Verdict::kPassed) << ToJson(prose).dump();
}

TEST(FailedChecks, ValuesWrittenAsAssignmentsAreAComparison) {
  EXPECT_EQ(FailedCheck("found=1.9381973, expected=1.9381316"), CheckReport::kExpectedActual);
  EXPECT_EQ(FailedCheck("got=3 expected=4"), CheckReport::kExpectedActual);
  EXPECT_EQ(FailedCheck("expected = 4, actual = 3"), CheckReport::kExpectedActual);
  // Prose and comparisons in code are not.
  EXPECT_EQ(FailedCheck("error[e0308]: mismatched types: expected `u32`, found `i32`"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("if (expected == found) return;"), CheckReport::kNone);
  EXPECT_EQ(FailedCheck("unexpected=1 found=2"), CheckReport::kNone);
}

TEST(ResultLines, AMarkedResultIsTheProgramsOwnAndABareFailIsGoTests) {
  Classification marked = Explained("Number of tests: 2560\n0.178 ms / gate\n**FAIL**\n", 0);
  EXPECT_EQ(marked.verdict, Verdict::kWrongOutput) << ToJson(marked).dump();
  EXPECT_EQ(Explained("=== PASS ===\n", 0).verdict, Verdict::kPassed);
  Classification go = Explained("some output\nFAIL\n", 0);
  EXPECT_NE(go.signature, "wrong_output:result_line") << ToJson(go).dump();
}

TEST(SupportQueries, AnAssertionThatTheLibrarySupportsItIsARefusal) {
  Classification c = Explained(
      "train_gpt2cu: train_gpt2.cu:582: auto lookup_cache_or_build_graph_fwd(Args ...): Assertion "
      "`graph->check_support(cudnn_handle).is_good()' failed.\n",
      134);
  EXPECT_EQ(c.verdict, Verdict::kUnsupported) << ToJson(c).dump();
  EXPECT_EQ(c.signature.rfind("unsupported:support_check:", 0), 0u) << c.signature;
  // Any other condition stays the crash it ends in.
  Classification other = Explained("prog: a.cc:9: int main(): Assertion `n > 0' failed.\nAborted (core dumped)\n", 134);
  EXPECT_EQ(other.verdict, Verdict::kCrashed) << ToJson(other).dump();
  // An architecture named by its kind: TensorRT's NVRTC check.
  Classification arch = Explained("[E] [TRT] helpers.h (523) - Assertion Error in fixSMVerForNVRTC: 0 "
                                  "((smVersion < SM_VERSION_A100) && \"SM version not supported in this NVRTC version\")\n");
  EXPECT_EQ(arch.verdict, Verdict::kUnsupported) << ToJson(arch).dump();
}

TEST(Watchdog, ItsTimeoutIsADeadlineAndAnErrorItCarriesIsJudgedByItsOwnWords) {
  const std::string head = "[rank1]:[E ProcessGroupNCCL.cpp:1515] [PG 0 Rank 1] ";
  Classification timeout = Explained(head + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) "
                                            "ran for 600000 milliseconds before timing out.\n", 134);
  EXPECT_EQ(timeout.verdict, Verdict::kTimeout) << ToJson(timeout).dump();
  Classification ima = Explained(head + "Process group watchdog thread terminated with exception: CUDA error: an illegal "
                                        "memory access was encountered\n", 134);
  EXPECT_EQ(ima.verdict, Verdict::kCrashed) << ToJson(ima).dump();
  Classification ecc = Explained(head + "Process group watchdog thread terminated with exception: CUDA error: uncorrectable "
                                        "ECC error encountered\n", 134);
  EXPECT_EQ(ecc.verdict, Verdict::kInfraError) << ToJson(ecc).dump();
}

TEST(Refusals, ArchConstraintsAndHardwareRequirements) {
  Classification arch = Explained(
      "cutlass.cute.nvgpu.common.OpError: OpError: expects arch to be one of ['sm_100a', 'sm_100f'], but got sm_121a\n");
  EXPECT_EQ(arch.verdict, Verdict::kUnsupported) << ToJson(arch).dump();
  Classification fp8 = Explained(
      "[TRT] [E] 9: [standardEngineBuilder.cpp::buildEngine::2266] Error Code 9: Internal Error (Networks with FP8 "
      "precision require hardware with FP8 support.)\n");
  EXPECT_EQ(fp8.verdict, Verdict::kUnsupported) << ToJson(fp8).dump();
  // A constraint on something else is no arch refusal.
  Classification dtype = Explained("ValueError: expects mode to be one of ['a', 'b'], but got c\n");
  EXPECT_NE(dtype.signature.rfind("unsupported:arch_gate", 0), 0u) << ToJson(dtype).dump();
}

TEST(FailedChecks, ExpectButGotAndALowercaseFailedWord) {
  EXPECT_EQ(FailedCheck("value not match  at c:0 h:3 w:4    expect 43.996048 but got 0.000000"), CheckReport::kExpectedActual);
  // "failed" on its own line is prose (a script's echo), not a program's result line.
  EXPECT_EQ(FailedCheck("failed"), CheckReport::kNone);
  Classification c = Explained("ImportError: /x/fused_layer_norm_cuda.so: undefined symbol: THPVariableClass\n"
                               "execute status:1\nfailed\n");
  EXPECT_EQ(c.verdict, Verdict::kCrashed) << ToJson(c).dump();
}
