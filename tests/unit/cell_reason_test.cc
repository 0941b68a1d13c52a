// A failed cell's words (core/cell_reason.h, core/matrix_cells.h): the verdict's label, then the
// signature's reason as a person reads it, the one mapping the CLI, the Markdown and the dashboard
// (through the API's `reason`) show.
#include "core/cell_reason.h"

#include <gtest/gtest.h>

#include "core/matrix_cells.h"
#include "core/text_width.h"

namespace gauntlet {
namespace {

TEST(CellReason, SaysTheVerdictThenTheReasonInWords) {
  EXPECT_EQ(ReasonText("unsupported", "unsupported:dtype"), "unsupported: dtype");
  // The exit status alone explains nothing: unclassified, still a failure (core/basis.h).
  EXPECT_EQ(ReasonText("crashed", "crashed:exit_code:1"), "unclassified: exit code 1");
  EXPECT_EQ(ReasonText("crashed", "crashed:signal:SIGTERM"), "unclassified: signal SIGTERM");
  EXPECT_EQ(ReasonText("crashed", "crashed:signal:SIGSEGV"), "crashed: signal SIGSEGV");
  EXPECT_EQ(ReasonText("unsupported", "unsupported:no_kernel_image"), "unsupported: no kernel image");
  EXPECT_EQ(ReasonText("crashed", "crashed:RuntimeError:Error Internal@modelopt_quant.py"), "crashed: Error Internal");
  EXPECT_EQ(ReasonText("crashed", "crashed:RuntimeError@x.py"), "crashed: RuntimeError");
  EXPECT_EQ(ReasonText("oom", "oom:cuda"), "out of memory: cuda");
  EXPECT_EQ(ReasonText("wrong_output", "wrong_output:garbage:repeated_char"), "wrong output: garbage: repeated char");
  // Names with digits are names, kept as written.
  EXPECT_EQ(ReasonText("unsupported", "unsupported:ptxas_arch:sm_120a"), "unsupported: ptxas arch: sm_120a");
  EXPECT_EQ(ReasonText("unsupported", "unsupported:trtllm_moe_sm100_only"), "unsupported: trtllm_moe_sm100_only");
  EXPECT_EQ(ReasonText("infra_error", "infra_error"), "infra error");
  EXPECT_EQ(ReasonText("timeout", ""), "timeout");
  EXPECT_EQ(ReasonText("", "x"), "");
}

TEST(CellReason, NamesTheStageATimeoutOrAStageSignatureCameFrom) {
  EXPECT_EQ(ReasonText("timeout", "timeout:check"), "timeout in stage check");
  // The worker's own timeout keys are not stages.
  EXPECT_EQ(ReasonText("timeout", "timeout:nccl_watchdog"), "timeout: nccl watchdog");
  const std::vector<std::string> stages = {"kernel", "bench"};
  EXPECT_EQ(ReasonText("wrong_output", "wrong_output:bench", &stages), "wrong output in stage bench");
  EXPECT_EQ(ReasonText("timeout", "timeout:injected_hang", &stages), "timeout: injected hang");
  EXPECT_EQ(ReasonText("wrong_output", "wrong_output:bench"), "wrong output: bench") << "without the stages, only a timeout's";
}

TEST(CellReason, SaysWhatSettledASkipAndStaysShort) {
  EXPECT_EQ(ReasonText("skipped", "skipped:unsupported:needs_sm100"), "skipped: unsupported: needs_sm100");
  const std::string long_reason = ReasonText("crashed", "crashed:RuntimeError:" + std::string(200, 'x') + "@k.py");
  EXPECT_EQ(DisplayWidth(long_reason), kReasonColumns);
  EXPECT_EQ(long_reason.substr(long_reason.size() - 3), "…");
}

TEST(CellReason, TheCellTextTakesTheDaemonsReasonAndCountsReuseApart) {
  nlohmann::json cell = {{"state", "failed"}, {"verdict", "timeout"}, {"signature", "timeout:check"}, {"reused", 2}};
  EXPECT_EQ(CellReason(cell), "timeout in stage check");
  EXPECT_EQ(CellText(cell), "⏳ timeout in stage check (+2 reused)");
  cell["reason"] = "timeout in stage check";
  cell["signature"] = "timeout:whatever";
  EXPECT_EQ(CellText(cell), "⏳ timeout in stage check (+2 reused)") << "the daemon's words win";
  const nlohmann::json mixed = {{"state", "mixed"}, {"verdict", "wrong_output"}, {"passed", 1}, {"configs", 3},
                                {"breakdown", {{{"verdict", "passed"}, {"configs", 1}}, {{"verdict", "wrong_output"}, {"configs", 2}}}}};
  EXPECT_EQ(CellText(mixed), "◐ mixed: 1/3 passed · wrong output 2");
  EXPECT_EQ(CellReason(mixed), "") << "a mixed cell's words are its breakdown's";
}

}  // namespace
}  // namespace gauntlet
