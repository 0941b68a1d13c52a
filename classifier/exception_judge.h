// What one exception means, wherever it appeared (a traceback's last line, a line standing alone,
// pytest's "E" and "FAILED ... - Type: msg" lines): the built-in rules read its "Type: message",
// and its type decides when no rule does. docs/CLASSIFIER.md ("Signatures", "Refusals").
// Pure, thread-safe (the engine is immutable).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/verdict.h"
#include "classifier/builtin_rules.h"
#include "classifier/engine.h"
#include "classifier/log_line.h"
#include "classifier/traceback.h"

namespace gauntlet::classifier {

struct Judgement {
  Verdict verdict = Verdict::kCrashed;
  std::string signature;
  Tier tier = Tier::kGeneric;
  bool keyed = false;   // a fixed-key fact (no kernel image, OOM...), not the exception's own words
  bool strong = false;  // evidence even when the process exited 0
  Basis basis = Basis::kException;  // the rule's basis when a fixed fact decided
};

// "<verdict>:<Type>:<normalized message>@<frame>" (frame omitted when empty).
std::string ExceptionSignature(Verdict verdict, const ExceptionLine& e, const std::string& frame);

// The first built-in rule that reads `text` (the exception as written: its line, or "Type:
// message") decides: a fixed fact keeps its key, a rule in words gives the exception form with the
// rule's verdict. Otherwise the type's default: AssertionError -> wrong_output, TimeoutError ->
// timeout (a consequence), wrappers and interrupts a consequence, anything else crashed; an
// AssertionError raised inside a library or compiler (`library_frame`) is that code's own invariant
// failing, so crashed, not a wrong result. `frame` is the innermost frame's file ("" when none was printed).
Judgement JudgeException(const Engine& engine, const ExceptionLine& e, std::string_view text, const LogLine& parsed,
                         const std::string& frame, bool library_frame = false);

// pytest's short summary line "FAILED tests/test_gemm.py::test_fp4[128] - RuntimeError: msg": the
// exception after " - " judged as any exception is, its frame the test's file; nullopt when what
// follows is no exception. `parsed.message` starts with "FAILED " and holds " - ".
std::optional<Judgement> JudgePytestFailedLine(const Engine& engine, const LogLine& parsed);

}  // namespace gauntlet::classifier
