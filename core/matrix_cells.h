// How the cells of GET /api/v1/matrix read as text, for `gauntlet matrix` and the daemon's Markdown
// (`?format=markdown`) alike: one line per cell that never hides disagreement (its `state`: passed,
// failed, mixed, flaky, pending, skipped), and the lines under the grid that say which hidden
// parameter values go with each verdict of a mixed or flaky cell. Every function here is pure.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gauntlet {

// A matrix cell as text, no colour:
//   passed   "✅ 1,050–1,210 tok/s" (the key metric's range over the cell's configs; "✅ passed" without one)
//   failed   "❌ crashed: Error Internal", "⚠ unsupported: no kernel image", "⏳ timeout in stage check"
//            (the cell's `reason` as the daemon sent it, else CellReason)
//   mixed    "◐ mixed: 1/3 passed · unsupported 1 · wrong output 1" (configs per verdict)
//   flaky    "↯ flaky: passed 2 · crashed 1" (trials per verdict: one config was judged both ways)
//   pending  "… 2 queued, 1 running";  skipped "· skipped: unsupported: ..."
// with " (+N reused)" where N of its results were filed by reuse (copies, counted as no run).
std::string CellText(const nlohmann::json& cell);

// What a matrix layer (`?layer=`) adds after a cell's text, "" when it adds nothing:
//   dispatch  " [cudnn_sdpa (cuDNN)]" (the kernel family that carried the latest run)
//   drift     " [supported_but_failing (framework): wrong_output:x]", " [unsupported_but_passing (table):
//             812 TFLOP/s]", " [undeclared]" (agreement says nothing)
//   evidence  " [evidence: dispatch_verified]"
std::string LayerText(const nlohmann::json& cell);

// The verdict whose colour the cell takes: a cell's `verdict` (for mixed and flaky cells the most
// severe present); "" for a pending cell.
std::string CellVerdict(const nlohmann::json& cell);

// The words of a failed or skipped cell (ReasonText of its verdict and signature; `stages`: its
// suite's stage names, when known); "" for a cell in any other state. The daemon sends it as the
// cell's `reason`.
std::string CellReason(const nlohmann::json& cell, const std::vector<std::string>* stages = nullptr);

// "2,140 tok/s", "45.2 ms", "0.873 TFLOP/s": a metric object ({"value", "unit"}) with as many digits
// as a person reads and thousands grouped; "" for null.
std::string MetricText(const nlohmann::json& metric);

// For every mixed or flaky cell of matrix answer `m`, in grid order, one line saying what differs:
//   "flashinfer_cutlass · sm_120: passed with fp4_gemm_backend=flashinfer_cutlass; unsupported with ..."
//   "flip · cpu: flaky: size=s, size=m judged more than one way (latest trials 17, 19); trials: passed 2, crashed 2"
// Row keys are wrapped in `quote` on both sides ("`" for Markdown). Empty when no cell disagrees.
std::vector<std::string> Disagreements(const nlohmann::json& m, const std::string& quote = "");

}  // namespace gauntlet
