#include "core/basis.h"

#include "core/enum_names.h"

namespace gauntlet {
namespace {
constexpr std::string_view kBasisNames[] = {"runner",        "status", "exception",   "message", "suite_rule",
                                            "kernel_record", "worker", "exit_status", "label"};
constexpr std::string_view kBasisLabels[] = {
    "the test runner's report", "a status code", "an exception's kind",   "the tool's own words", "a suite rule",
    "the kernel record",        "the worker",    "the exit status alone", "a person's label (triage)"};
static_assert(std::size(kBasisNames) == kBasisCount && std::size(kBasisLabels) == kBasisCount);
}  // namespace

std::string_view Name(Basis b) { return NameIn(kBasisNames, b); }
std::optional<Basis> ParseBasis(std::string_view name) { return ParseIn<Basis>(kBasisNames, name); }
std::string_view Label(Basis b) { return NameIn(kBasisLabels, b); }

bool WeakBasis(Basis b) { return b == Basis::kExitStatus; }

bool UnclassifiedSignature(std::string_view signature) {
  if (signature.starts_with("crashed:exit_code:")) return true;
  if (!signature.starts_with("crashed:signal:")) return false;
  // A crash signal is a value of the signals' vocabulary that says what happened (classifier.cc).
  const std::string_view name = signature.substr(15);
  return name != "SIGSEGV" && name != "SIGILL" && name != "SIGBUS" && name != "SIGFPE";
}

bool Unclassified(Verdict v, Basis b) {
  // Only a judged failure can be a guess: passed needs no reason, and cancelled/skipped say nothing.
  const VerdictInfo& i = Info(v);
  return WeakBasis(b) && i.severity > 0;
}

}  // namespace gauntlet
