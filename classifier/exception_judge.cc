#include "classifier/exception_judge.h"

#include <algorithm>
#include <vector>

#include "classifier/normalize.h"
#include "classifier/status_vocabulary.h"

namespace gauntlet::classifier {

namespace {
constexpr size_t kMaxJudgedBytes = 4096;  // rules read the first 4 KiB, as for any candidate line
}  // namespace

std::string ExceptionSignature(Verdict verdict, const ExceptionLine& e, const std::string& frame) {
  std::string sig(Name(verdict));
  sig += ':';
  sig += e.type;
  std::string msg = NormalizeMessage(e.message);
  if (!msg.empty()) sig += ":" + msg;
  if (!frame.empty()) sig += "@" + SanitizeUtf8(frame);
  return sig;
}

Judgement JudgeException(const Engine& engine, const ExceptionLine& e, std::string_view text, const LogLine& parsed,
                         const std::string& frame, bool library_frame) {
  std::vector<uint32_t> ids;
  engine.ac->Scan(text, [&ids](uint32_t id) { ids.push_back(id); });
  std::string_view raw = text.substr(0, kMaxJudgedBytes);
  std::string lower = ToLowerAscii(raw);
  LineContext ctx{raw, lower, &parsed, &e};
  std::optional<RuleHit> h = ids.empty() ? std::nullopt : engine.builtin->Match(ids, ctx);
  Judgement j;
  if (h && h->keyed && !h->needs_sigkill) {
    j = {h->verdict, h->key, h->tier, true, h->strong, h->basis};
  } else if (h && !h->needs_sigkill && h->rule != "pytest_failed") {
    j.verdict = h->verdict;
    j.tier = h->tier == Tier::kSecondary ? Tier::kSecondary : std::max(h->tier, Tier::kGeneric);
    j.signature = ExceptionSignature(h->verdict, e, frame);
    j.basis = h->basis;
  } else {
    // A built-in exception's kind decides by Python's vocabulary (classifier/status/python.cc):
    // AssertionError a failed check, TimeoutError a deadline (a consequence), the rest crashes; an
    // assertion inside installed library code is that library's invariant, not a check of the result.
    if (const StatusValue* v = FindValue("python", e.type); v && v->verdict != Verdict::kPassed) j.verdict = v->verdict;
    if (j.verdict == Verdict::kWrongOutput && library_frame) j.verdict = Verdict::kCrashed;
    if (j.verdict == Verdict::kTimeout) j.tier = Tier::kSecondary;
    // Wrappers (exception groups, "raised:" before the cause) and interrupts are consequences.
    if (e.type == "KeyboardInterrupt" || e.type == "SystemExit" || IsWrapperException(e)) j.tier = Tier::kSecondary;
    j.signature = ExceptionSignature(j.verdict, e, frame);
  }
  return j;
}

std::optional<Judgement> JudgePytestFailedLine(const Engine& engine, const LogLine& parsed) {
  std::string_view msg = parsed.message;
  const size_t dash = msg.find(" - ");
  if (!msg.starts_with("FAILED ") || dash == std::string_view::npos) return std::nullopt;
  std::string_view node = msg.substr(7, dash - 7);
  std::optional<ExceptionLine> pe = ParseExceptionLine(TrimSpace(msg.substr(dash + 3)));
  if (!pe) return std::nullopt;
  *pe = UnwrapCause(std::move(*pe));
  const std::string file(PathBasename(node.substr(0, node.find("::"))));
  return JudgeException(engine, *pe, pe->type + ": " + pe->message, parsed, file);
}

}  // namespace gauntlet::classifier
