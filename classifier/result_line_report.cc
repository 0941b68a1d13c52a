// The result lines, as their sources print them: NVIDIA/cuda-samples (deviceQuery's "Result = %s",
// "Test passed" / "Test failed!" and "PASSED" / "FAILED" in many samples' main, "&&&& %s %s" in the
// samples' QA helpers (shrQATest.h / helper_string.h: sStatus "FAILED", "PASSED", "WAIVED", with
// "[%s] test results...\n%s\n" when not run with -qatest), and EXIT_WAIVED in Common/helper_*.h);
// NVIDIA/cutlass examples ("  Disposition: " << (passed ? "Passed" : "Failed"), and "Passed" /
// "Failed" after the reference check) and tools/profiler (performance_report.cpp's
// "     Disposition: " with enumerated_types.cpp's pretty Disposition names).
//
// How each becomes a case: a pass is kPassed; a failed result is kFailed with assertion=true (the
// program's reference check failed); WAIVED (the test cannot run on this configuration) and the
// profiler's "Not supported" / "Invalid problem" are kSkipped; the profiler's "Failed" means the
// kernel itself reported an error (enumerated_types.h), so it is kError; "Incorrect" is its failed
// reference check, kFailed with assertion=true; "Not verified" / "Not run" are not failures: kPassed
// with the disposition as message.
#include "classifier/result_line_report.h"

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

std::string_view WithoutPunct(std::string_view s) {
  while (!s.empty() && (s.back() == '!' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

bool IsStatus(std::string_view w) { return w == "PASSED" || w == "FAILED" || w == "WAIVED" || w == "SKIPPED"; }

}  // namespace

std::vector<std::string> ResultLineReader::Needles() {
  // "fail" and "pass" for a marked result line ("**FAIL**"): words other rules look for already, so
  // they add no state to the prefilter's table (aho_corasick.h), where "*fail" and its kin did.
  return {"passed", "failed", "result = ", "&&&& ", "] test results", "waived", "disposition: ", "operation: ",
          "fail", "pass"};
}

void ResultLineReader::Add(TestEnd end, bool assertion, std::string_view message, std::string name) {
  if (name.empty()) name = program_.empty() ? "result" : program_;
  program_.clear();
  TestCase c = NamedCase(name);
  c.end = end;
  c.assertion = assertion;
  c.message = std::string(message);
  CountEnd(&report_.counts, end);
  report_.summary = std::string(message);
  AddCase(&report_, std::move(c));
}

bool ResultLineReader::QaLine(std::string_view t) {
  // "&&&& PASSED matrixMul -qatest" (the status first), or "&&&& fp16ScalarProduct PASSED" /
  // "&&&& EGLStream interop test PASSED" (the status last).
  if (!t.starts_with("&&&& ")) return false;
  std::string_view rest = TrimSpace(t.substr(5));
  std::string_view first = rest.substr(0, rest.find(' '));
  std::string_view status, name;
  if (IsStatus(first) || first == "RUNNING") {
    status = first;
    std::string_view after = TrimSpace(rest.substr(first.size()));
    name = after.substr(0, after.find(' '));
  } else {
    size_t sp = rest.rfind(' ');
    if (sp == std::string_view::npos || !IsStatus(rest.substr(sp + 1))) return false;
    status = rest.substr(sp + 1);
    name = TrimSpace(rest.substr(0, sp));
  }
  name = PathBasename(name);
  if (status == "RUNNING") {
    program_ = std::string(name);
  } else if (status == "PASSED") {
    Add(TestEnd::kPassed, false, t, std::string(name));
  } else if (status == "FAILED") {
    Add(TestEnd::kFailed, true, t, std::string(name));
  } else {
    Add(TestEnd::kSkipped, false, t, std::string(name));  // WAIVED: it cannot run on this configuration
  }
  return true;
}

bool ResultLineReader::DispositionLine(std::string_view t) {
  // "Disposition: Passed" (a CUTLASS example; "\t Relative error: ..." may follow) or the profiler's
  // "     Disposition: Incorrect" under "       Operation: cutlass_tensorop_..."
  if (!t.starts_with("Disposition: ")) return false;
  std::string_view d = TrimSpace(t.substr(13));
  std::string_view word = d.substr(0, d.find_first_of(" \t"));
  const bool profiler = !operation_.empty();
  std::string name = profiler ? operation_ : "";
  operation_.clear();
  auto is = [&](std::string_view a, std::string_view b) { return d.starts_with(a) || d.starts_with(b); };
  if (word == "Passed") Add(TestEnd::kPassed, false, t, name);
  else if (word == "Failed") Add(profiler ? TestEnd::kError : TestEnd::kFailed, !profiler, t, name);
  else if (word == "Incorrect") Add(TestEnd::kFailed, true, t, name);
  else if (is("Not supported", "NotSupported") || is("Invalid problem", "InvalidProblem"))
    Add(TestEnd::kSkipped, false, t, name);
  else if (is("Not verified", "NotVerified") || is("Not run", "NotRun") || d.starts_with("Skipped verification"))
    Add(TestEnd::kPassed, false, t, name);
  return true;
}

bool ResultLineReader::BareLine(std::string_view t) {
  // Whole lines only: "Result = PASS", "Test passed", "Test FAILED!", "PASSED", "Passed.", "WAIVED".
  // A bare "PASS" / "FAIL" is go test's verdict, and a bare lowercase word is prose: neither counts.
  std::string_view w = WithoutPunct(t);
  // A result set off by marks on both sides ("**FAIL**", "=== PASS ===", "*** FAILED ***") is a
  // program's own result line, as a prefix makes it: go test never decorates its bare verdict.
  const size_t lead = w.find_first_not_of("*=# ");
  const size_t trail = w.find_last_not_of("*=# ");
  const bool marked = lead != std::string_view::npos && lead > 0 && trail + 1 < w.size();
  bool prefixed = true;
  if (marked) w = WithoutPunct(w.substr(lead, trail + 1 - lead));
  else if (w.starts_with("Result = ")) w.remove_prefix(9);
  else if (w.starts_with("Test ") || w.starts_with("TEST ")) w.remove_prefix(5);
  else prefixed = false;
  if (w == "PASSED" || w == "Passed" || (prefixed && (w == "PASS" || w == "passed"))) {
    Add(TestEnd::kPassed, false, t);
  } else if (w == "FAILED" || w == "Failed" || (prefixed && (w == "FAIL" || w == "failed"))) {
    Add(TestEnd::kFailed, true, t);
  } else if (w == "WAIVED") {
    Add(TestEnd::kSkipped, false, t);
  } else {
    return false;
  }
  return true;
}

void ResultLineReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::string clean = line.find('\x1b') == std::string_view::npos ? std::string() : StripAnsi(line);
  std::string_view t = TrimSpace(clean.empty() ? line : std::string_view(clean));
  if (t.starts_with("Operation: ")) {
    operation_ = CutUtf8(TrimSpace(t.substr(11)), kMaxCaseName);
    return;
  }
  if (t.starts_with("[") && t.ends_with("] test results...")) {
    program_ = std::string(PathBasename(t.substr(1, t.size() - 18)));
    return;
  }
  if (QaLine(t) || DispositionLine(t)) return;
  BareLine(t);
}

TestReport ResultLineReader::Report() const {
  TestReport r = report_;
  r.runner = "result_line";
  r.complete = complete();
  return r;
}

}  // namespace gauntlet::classifier
