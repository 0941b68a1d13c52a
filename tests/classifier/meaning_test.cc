// Issue 29 "By meaning, not by example": exceptions judged by what they are wherever they appear,
// the frameworks' refusal grammar, mismatch/tolerance reports, and the grammar helpers that
// replaced literals fitted to single logs (classifier/report_grammar.h).
#include <gtest/gtest.h>

#include "classifier/classifier.h"
#include "classifier/report_grammar.h"
#include "exits.h"

using namespace gauntlet;
using namespace gauntlet::classifier;
using namespace gauntlet::classifier::test_exits;

namespace {

Classification Judge(const std::string& log, int exit_code = 1) { return ClassifyText(log, ExitCode(exit_code)); }

}  // namespace

TEST(ByMeaning, ATailWithoutTracebackHeaderKeepsItsRefusal) {
  Classification c = Judge("    return flash_attn_func(q, k, v)\nNotImplementedError: The head dim must be <= 256\n");
  EXPECT_EQ(c.verdict, Verdict::kUnsupported);
  EXPECT_EQ(c.signature, "unsupported:head_dim");
  EXPECT_EQ(c.evidence, "NotImplementedError: The head dim must be <= 256");
}

TEST(ByMeaning, PytestELinesAndFailedSummaryAreReadAsExceptions) {
  const std::string log =
      "    def test_fp8_addmm():\n"
      ">       torch.addmm(bias, a, b)\n"
      "E       NotImplementedError: \"addmm_cuda\" not implemented for 'Float8_e5m2'\n"
      "\n"
      "tests/test_fp8.py:12: NotImplementedError\n"
      "=========================== short test summary info ============================\n"
      "FAILED tests/test_fp8.py::test_fp8_addmm - NotImplementedError: \"addmm_cuda\" not implemented for "
      "'Float8_e5m2'\n"
      "============================== 1 failed in 0.52s ===============================\n";
  Classification c = Judge(log);
  EXPECT_EQ(c.verdict, Verdict::kUnsupported) << ToJson(c).dump();
  EXPECT_EQ(c.signature, "unsupported:dtype");
}

TEST(ByMeaning, AFailedSummaryRefusalNeverHidesAnotherTestsCrash) {
  const std::string refusal = "FAILED tests/t.py::test_a - NotImplementedError: no fp4 path\n";
  const std::string crash = "FAILED tests/t.py::test_b - AttributeError: 'NoneType' object has no attribute 'x'\n";
  for (const std::string& log : {refusal + crash, crash + refusal}) {
    Classification c = Judge(log);
    EXPECT_EQ(c.verdict, Verdict::kCrashed) << log;
    EXPECT_EQ(c.signature, "crashed:AttributeError:'NoneType' object has no attribute 'x'@t.py") << log;
  }
  EXPECT_EQ(Judge(refusal).verdict, Verdict::kUnsupported);
}

TEST(ByMeaning, FrameworkRefusalForms) {
  EXPECT_EQ(Judge("RuntimeError: GET was unable to find an engine to execute this computation\n").signature,
            "unsupported:cudnn_no_engine");
  EXPECT_EQ(Judge("jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: no cuDNN fusion for this pattern\n").verdict,
            Verdict::kUnsupported);
  EXPECT_EQ(Judge("ValueError: No dot product attention backend is available for the provided inputs.\n").verdict,
            Verdict::kUnsupported);
  EXPECT_EQ(Judge("ptxas /tmp/k.ptx, line 9; error   : Feature '.bf16' requires .target sm_80 or higher\n").signature,
            "unsupported:ptxas_feature:Feature '.bf16' requires .target sm_80 or higher");
  EXPECT_EQ(Judge("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304\n").signature,
            "unsupported:shared_memory_limit");
  // A crash in words close to a refusal stays a crash.
  EXPECT_EQ(Judge("RuntimeError: Expected all tensors to be on the same device\n").verdict, Verdict::kCrashed);
  EXPECT_EQ(Judge("TypeError: unsupported operand type(s) for +: 'int' and 'str'\n").verdict, Verdict::kCrashed);
}

TEST(ByMeaning, MismatchAndToleranceReportsAreWrongOutputEvenWithExit1) {
  EXPECT_EQ(Judge("RESULT: MISMATCH 3670016/3670016 elements differ\n").verdict, Verdict::kWrongOutput);
  EXPECT_EQ(Judge("gemm fp8 128x128: rel_err=1.0 (tolerance 2e-2)\n").verdict, Verdict::kWrongOutput);
  EXPECT_EQ(Judge("Mismatched elements: 12 / 1024 (1.2%)\n").verdict, Verdict::kWrongOutput);
  // An error under its tolerance is a passing report, not a mismatch.
  Classification ok = Judge("gemm fp8 128x128: rel_err=0.001 (tolerance 2e-2)\n");
  EXPECT_EQ(ok.signature, "crashed:exit_code:1");
  EXPECT_EQ(Judge("gemm fp8 128x128: rel_err=0.001 (tolerance 2e-2)\n", 0).verdict, Verdict::kPassed);
}

TEST(ByMeaning, ExceptionsLoggedAsWarningsDecideNothing) {
  Classification c = Judge("WARNING 06-01 10:00:00 [x.py:1] RuntimeError: only supports fp16, retrying in fp16\n");
  EXPECT_EQ(c.signature, "crashed:exit_code:1");
}

TEST(ReportGrammar, ArchWordsNeedTheirGrammar) {
  EXPECT_TRUE(MentionsArch("not supported on this gpu"));
  EXPECT_TRUE(MentionsArch("not supported on your gpus"));
  EXPECT_TRUE(MentionsArch("requires sm_100a"));
  EXPECT_TRUE(MentionsArch("only supports ampere gpus or newer"));
  EXPECT_FALSE(MentionsArch("device-side assertions are not supported"));
  EXPECT_FALSE(MentionsArch("compile with the cuda device-side assertions"));
  EXPECT_FALSE(MentionsArch("gpu 0 does not support this dtype"));
  EXPECT_TRUE(ArchOnly("trtllm-gen moe kernels are sm100-only"));
  EXPECT_TRUE(ArchOnly("this path is hopper-only"));
  EXPECT_FALSE(ArchOnly("custom allreduce is disabled on pcie-only gpus"));
  EXPECT_FALSE(ArchOnly("weight-only fp8 compression will be used"));
}

TEST(ReportGrammar, ToleranceNeedsTheErrorToExceedIt) {
  EXPECT_TRUE(IsMismatchReport("max_abs_diff=5.0e-01 tol=1.0e-03 -> fail"));
  EXPECT_FALSE(IsMismatchReport("max_abs_diff=5.0e-04 tol=1.0e-03 -> pass"));
  EXPECT_FALSE(IsMismatchReport("using logprob tolerance 0.1"));
  EXPECT_TRUE(IsMismatchReport("error 0.5 exceeds tolerance rtol=1e-5"));
  EXPECT_TRUE(IsMismatchReport("arrays are not equal to tolerance")) << "numpy's wording";
}
