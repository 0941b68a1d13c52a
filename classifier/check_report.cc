#include "classifier/check_report.h"

#include <array>
#include <cctype>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

bool CrHas(std::string_view s, std::string_view n) { return s.find(n) != std::string_view::npos; }

// The assertion messages test frameworks print only when a check failed:
//   GoogleTest (src/gtest.cc EqFailure, CmpHelperOpFailure, DoubleNearPredFormat; gtest-assertion-result):
//     "Expected equality of these values:", "Expected: (a) < (b), actual: 1 vs 2",
//     "The difference between a and b is 0.5, which exceeds tol", "Expected: true" after "Actual: false".
//   JUnit 4/5 and AssertJ (AssertionFailedError, ComparisonFailure): "expected: <1> but was: <2>",
//     "expected:<1> but was:<2>"; TestNG "expected [1] but found [2]".
//   Rust (core::panicking::assert_failed_inner): "assertion `left == right` failed", older
//     "assertion failed: `(left == right)`", and "assertion `left != right` failed".
//   doctest (ConsoleReporter): "ERROR: CHECK( a == b ) is NOT correct!".
//   Catch2 (ConsoleReporter): "REQUIRE( a == b )" is printed under "FAILED:" only; the reader decides.
constexpr std::array<std::string_view, 13> kAssertionMessages = {
    "expected equality of these values", "which exceeds", ", actual:", "but was: <", "but was:<", "] but found [",
    // GoogleTest's older EqFailure and its boolean checks: "Value of: ok" / "  Actual: false" /
    // "Expected: true", with "Which is: 2" under an expression's value.
    "value of: ", "which is: ",
    "assertion `left == right` failed", "assertion `left != right` failed", "assertion failed: `(left",
    ") is not correct!", "expected: <"};

// "expected X, got Y" / "expected X but got Y" / "expected: X, actual: Y": a value compared with the
// value it should have had, as result checks print it. "expected ... but found" is how argument
// checks phrase a type or device error (PyTorch's TORCH_CHECK), so only "got" and "actual" count.
bool ExpectedGot(std::string_view lower) {
  // "expected 3 but got 2", or "expect 43.99 but got 0.0" (ncnn's and other C++ tests' own print).
  size_t e = lower.find("expected");
  size_t word = 8;
  if (e == std::string_view::npos) {
    e = lower.find("expect ");
    word = 7;
  }
  if (e == std::string_view::npos) return false;
  std::string_view rest = lower.substr(e + word);
  size_t got = rest.find(" got ");
  if (got == std::string_view::npos) got = rest.find(", got");
  if (got == std::string_view::npos) got = rest.find("actual");
  if (got == std::string_view::npos || got > 120) return false;
  // A type, shape, device or argument count is an argument check, not a result; so is TORCH_CHECK's
  // own "Expected <cond> to be true, but got false".
  static constexpr std::array<std::string_view, 13> kArgumentWords = {
      "type", "dtype", "shape", "device", "argument", "dim", "size", "positional", "keyword", "tensor of", "layout", "rank",
      "to be true"};
  std::string_view span = rest.substr(0, got);
  for (auto w : kArgumentWords)
    if (CrHas(span, w)) return false;
  return true;
}

// A check's values written as assignments: "found=1.9381973, expected=1.9381316", "expected=4
// actual=3", "got=2 expected=1". The '=' makes each a value of the run, not prose: rustc's and
// TORCH_CHECK's "expected X, found Y" name types and are never written so.
bool ExpectedAssigned(std::string_view lower) {
  auto assigned = [&](std::string_view word) {
    for (size_t at = lower.find(word); at != std::string_view::npos; at = lower.find(word, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(lower[at - 1])) || lower[at - 1] == '_')) continue;
      size_t i = at + word.size();
      while (i < lower.size() && lower[i] == ' ') ++i;
      if (i < lower.size() && lower[i] == '=' && (i + 1 >= lower.size() || lower[i + 1] != '=')) return true;
    }
    return false;
  };
  return assigned("expected") && (assigned("found") || assigned("actual") || assigned("got") || assigned("computed"));
}

// Go's convention for a failed check ("got 1, want 2", the Go code review comments), as go test
// prints a t.Errorf: after the test file's location ("    gemm_test.go:31: got 3.5, want 4").
bool GotWant(std::string_view lower) {
  const size_t loc = lower.find(".go:");
  if (loc == std::string_view::npos) return false;
  size_t g = lower.find("got ", loc);
  if (g == std::string_view::npos || (lower[g - 1] != ' ' && lower[g - 1] != ':')) return false;
  // The comma form only: "you got it and want more" is prose.
  const size_t w = lower.find(", want ", g);
  return w != std::string_view::npos && w - g < 120;
}

// "mismatch at index 17", "mismatch at position (3, 4)", "mismatch at element 5", "Mismatch at [2][3]".
bool MismatchAt(std::string_view lower) {
  size_t m = lower.find("mismatch at ");
  if (m == std::string_view::npos) m = lower.find("mismatch found at ");
  if (m == std::string_view::npos) return false;
  std::string_view rest = lower.substr(lower.find(" at ", m) + 4);
  return rest.starts_with("index") || rest.starts_with("position") || rest.starts_with("element") ||
         rest.starts_with("offset") || rest.starts_with("[") || rest.starts_with("(") ||
         (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0])));
}

// "max difference 0.5 exceeds 0.001", "max abs error 3.2 exceeds threshold": a measured difference
// over its bound, when the bound is not called a tolerance (report_grammar.h reads those).
bool DifferenceExceeds(std::string_view lower) {
  size_t x = lower.find("exceed");
  if (x == std::string_view::npos) return false;
  std::string_view before = lower.substr(0, x);
  // The measure is a number: "diff 0.5 exceeds", not "##[error]The job ... exceeded the time".
  for (std::string_view w : {"diff", "error", " err", "delta"}) {
    const size_t at = before.rfind(w);
    if (at == std::string_view::npos) continue;
    size_t i = at + w.size();
    while (i < before.size() && (std::isalpha(static_cast<unsigned char>(before[i])) || before[i] == '_')) ++i;  // "difference"
    while (i < before.size() && (before[i] == ' ' || before[i] == '=' || before[i] == ':' || before[i] == '(')) ++i;
    if (i < before.size() && (std::isdigit(static_cast<unsigned char>(before[i])) || before[i] == '.')) return true;
  }
  return false;
}

// The result lines kernel projects print after comparing with a reference, as whole lines:
// CUDA samples ("Result = FAIL", "Test failed!", "&&&& FAILED name" from helper_*.h's QA
// convention), CUTLASS examples and profiler ("Disposition: Failed", "Disposition: Incorrect"),
// and "Verification failed" / "Result verification failed" at a line's start.
bool ResultLineFailed(std::string_view t) {
  // nccl-tests' check of the collective's result (src/common.cu: "# Out of bounds values : 3 FAILED").
  if (CrHas(t, "out of bounds values") && CrHas(t, "failed")) return true;
  if (t.starts_with("result = fail") || t.starts_with("&&&& failed") || t.starts_with("disposition: failed") ||
      t.starts_with("disposition: incorrect") || t.starts_with("verification failed") ||
      t.starts_with("result verification failed") || t.starts_with("verification: failed") ||
      t.starts_with("reference check failed"))
    return true;
  // A bare "FAILED" / "Failed" line is the result-line reader's (result_line_report.cc), which
  // tells it from prose by its case; this line is already lowercase, so only prefixed forms count.
  return t == "test failed" || t == "test failed!" || t == "test failed." || t == "test fail";
}

}  // namespace

CheckReport FailedCheck(std::string_view lower) {
  std::string_view t = TrimSpace(lower);
  if (ResultLineFailed(t)) return CheckReport::kResultLine;
  for (auto m : kAssertionMessages)
    if (CrHas(t, m)) return CheckReport::kExpectedActual;
  if (MismatchAt(t) || DifferenceExceeds(t) || ExpectedGot(t) || GotWant(t) || ExpectedAssigned(t))
    return CheckReport::kExpectedActual;
  // A result said to be wrong in plain words, as test programs print after their reference check;
  // not a warning of what might happen ("TF32 may produce incorrect results", "UserWarning: ...").
  static constexpr std::array<std::string_view, 10> kMaybe = {"may ",   "might ", "could ", "can ",  "would ",
                                                              "lead to", "leads to", "produce", "warn", "cause"};
  for (std::string_view w : {"incorrect result", "wrong result", "does not match the reference", "do not match the reference",
                             "doesn't match the reference", "differs from the reference"})
    if (CrHas(t, w)) {
      for (std::string_view m : kMaybe)
        if (CrHas(t, m)) return CheckReport::kNone;
      return CheckReport::kExpectedActual;
    }
  return CheckReport::kNone;
}

std::vector<std::string> CheckReportNeedles() {
  // Letters only: every shape above holds one of these words, and a needle's rare punctuation
  // ('<', '&', '`') would widen the prefilter's table for every line (aho_corasick.h byte classes).
  // "fail" finds the bare FAILED/FAIL result lines; FailedCheck reads the whole line.
  return {"fail", "disposition", "verification", "mismatch", "exceed", "expected", "actual", "but was",
          "but found", "assertion", "is not correct", "value of", "which is", "want", "out of bounds values",
          "incorrect result", "wrong result", "the reference", "but got"};
}

}  // namespace gauntlet::classifier
