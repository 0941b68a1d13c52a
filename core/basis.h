// What a verdict was judged from (docs/CLASSIFIER.md "Basis"): every verdict carries one, so a user
// can tell a finding from a guess. A failure judged from the exit status alone is *unclassified*:
// still a failure, but no tool said why. Strings exist only at the SQL/JSON edge (Name/ParseBasis).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/verdict.h"

namespace gauntlet {

enum class Basis : uint8_t {
  kRunner,        // a test runner's own report (pytest, GoogleTest, CTest, ...): its cases and counts
  kStatus,        // a named value of a status vocabulary (cudaError_t, ncclResult_t, errno, a signal, ...)
  kException,     // an exception's kind and message (Python's, a framework's)
  kMessage,       // a tool's documented words (an arch refusal, a mismatch report, an OOM notice)
  kSuiteRule,     // the suite's own signature rule
  kKernelRecord,  // the kernel recorder's record of what ran (dispatch checks)
  kWorker,        // what the worker itself observed: a time or memory limit, a lost lease, a smoke answer
  kExitStatus,    // the exit status alone: no line in the log said why
  kLabel,         // a person's label from the triage list (store/labels.h)
};
inline constexpr int kBasisCount = 9;

// "runner", "status", "exception", "message", "suite_rule", "kernel_record", "worker", "exit_status",
// "label".
// Static storage; thread-safe.
std::string_view Name(Basis b);
// The basis spelled `name`, or nullopt (including ""). Pure.
std::optional<Basis> ParseBasis(std::string_view name);
// How a person reads it ("the test runner's report"). Static storage.
std::string_view Label(Basis b);
// True for a failure no tool explained: a failing verdict judged from the exit status alone. The
// API, matrix, CLI and dashboard show it as "unclassified". Pure.
bool Unclassified(Verdict v, Basis b);
// True for a basis the triage list offers for labelling: the exit status alone. Pure.
bool WeakBasis(Basis b);
// True for the signatures only the exit status alone gives (docs/CLASSIFIER.md "Decision order",
// last steps): "crashed:exit_code:N", and "crashed:signal:NAME" for a signal that is no crash
// (SIGKILL, SIGTERM, ...). Views that hold a signature but no stored basis (the matrix's cells, rows
// stored before bases existed) read unclassified from it. Pure.
bool UnclassifiedSignature(std::string_view signature);

void to_json(nlohmann::json&, Basis) = delete;
void from_json(const nlohmann::json&, Basis&) = delete;

}  // namespace gauntlet
