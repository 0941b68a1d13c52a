// CTest's console report, read by the shapes CMake prints: cmCTestRunTest.cxx (EndTest: the status
// words after the name's dots, WriteLogOutputTop: ` 1/3 Test  #1: name ....`; StartTest: the
// "Unable to find executable" lines before a "***Not Run"), cmCTestTestHandler.cxx (LogTestSummary,
// LogFailedTests, GetTestStatus) and cmProcess.cxx (GetExitExceptionString: "Subprocess aborted").
//
// How each status becomes a case: Passed -> kPassed; ***Skipped (SKIP_RETURN_CODE or
// SKIP_REGULAR_EXPRESSION; CTest prints no reason) -> kSkipped; ***Failed -> kFailed (a non-zero exit
// or a pass/fail regex; not an assertion: CTest knows nothing of the test's checks); ***Timeout ->
// kError with message "Timeout after <t> sec"; ***Exception -> kError with the crash as message
// ("Segmentation fault (SIGSEGV)"); ***Not Run -> kError (CTest counts it failed: the executable or
// a fixture was missing). "***Not Run (Disabled)" is left out: CTest itself leaves DISABLED tests out
// of "out of N", as GoogleTest's DISABLED_ tests are left out of the gtest reader.
#include "classifier/ctest_report.h"

#include <algorithm>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

// Reads the decimal number at the front of *s and drops it; -1 when there is none.
int TakeInt(std::string_view* s) {
  int v = -1;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc()) return -1;
  s->remove_prefix(static_cast<size_t>(p - s->data()));
  return v;
}

struct CtestResult {
  int id = 0;
  std::string name, extra, status, time;  // extra: a crash named before "***" ("Subprocess aborted")
  double seconds = -1;
};

// " 1/3 Test  #1: name ......   Passed    0.01 sec" (also "MemCheck #1:", and a blank progress
// field under --repeat) -> its parts; nullopt for any other line.
std::optional<CtestResult> ParseResult(std::string_view line) {
  size_t hash = line.find('#');
  if (hash == std::string_view::npos) return std::nullopt;
  std::string_view head = TrimSpace(line.substr(0, hash));
  size_t kind = head.ends_with("MemCheck") ? 8 : head.ends_with("Test") ? 4 : 0;
  if (kind == 0) return std::nullopt;
  std::string_view progress = TrimSpace(head.substr(0, head.size() - kind));
  if (!progress.empty() && (TakeInt(&progress) < 0 || !progress.starts_with('/'))) return std::nullopt;
  CtestResult r;
  std::string_view rest = line.substr(hash + 1);
  if ((r.id = TakeInt(&rest)) < 0 || !rest.starts_with(": ")) return std::nullopt;
  rest.remove_prefix(2);
  size_t mark = rest.find("***");  // every status but Passed starts with it
  if (mark == std::string_view::npos) mark = rest.find("   Passed");
  if (mark == std::string_view::npos) return std::nullopt;
  std::string_view left = rest.substr(0, mark), status = TrimSpace(rest.substr(mark + 3));
  size_t dots = left.rfind("...");
  if (dots != std::string_view::npos) {
    r.extra = std::string(TrimSpace(left.substr(dots + 3)));
    left = left.substr(0, dots);
    while (left.ends_with('.')) left.remove_suffix(1);
  }
  r.name = std::string(TrimSpace(left));
  if (status.ends_with(" sec")) {
    std::string_view t = TrimSpace(status.substr(0, status.size() - 4));
    size_t sp = t.rfind(' ');
    std::string_view num = sp == std::string_view::npos ? t : t.substr(sp + 1);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), r.seconds);
    if (ec != std::errc()) r.seconds = -1;
    r.time = std::string(num);
    status = TrimSpace(t.substr(0, t.size() - num.size()));
  }
  r.status = std::string(status);
  return r;
}

// What a crash CTest names is, worded as the log rules know it ("Segmentation fault" ->
// crashed:signal:SIGSEGV). cmProcess.cxx maps SIGSEGV/SIGILL/SIGINT/SIGFPE to the four kinds.
std::string CrashMessage(std::string_view kind, std::string_view extra) {
  if (kind == "SegFault") return "Segmentation fault (SIGSEGV)";
  if (kind == "Illegal") return "Illegal instruction (SIGILL)";
  if (kind == "Interrupt") return "Interrupt (SIGINT)";
  if (kind == "Numerical") return "Floating point exception (SIGFPE)";
  std::string what(extra.empty() ? kind : extra);
  if (what == "Subprocess aborted") return what + " (SIGABRT)";
  if (what == "Subprocess killed") return what + " (SIGKILL)";
  if (what == "Subprocess terminated") return what + " (SIGTERM)";
  return what.empty() ? "Exception" : what;
}

// A line of a failed test's output that names what went wrong: a candidate for the case's message.
bool NamesError(std::string_view line) {
  static constexpr std::string_view kWords[] = {"error", "exception", "assert", "fail", "abort", "fatal",
                                                "panic", "terminate called", "mismatch", "segmentation fault",
                                                "core dumped", "not supported", "unsupported", "illegal"};
  for (std::string_view w : kWords)
    if (ContainsCI(line, w)) return true;
  return false;
}

// "      Start  2: name", printed as each test starts.
bool IsStartLine(std::string_view line) {
  std::string_view t = TrimSpace(line);
  if (!t.starts_with("Start ")) return false;
  t = TrimSpace(t.substr(6));
  return TakeInt(&t) >= 0 && t.starts_with(':');
}

// "test 2": under -V, CTest names each test on a line of its own before its "Start" line.
bool IsVerboseTestLine(std::string_view t) {
  return t.size() > 5 && t.starts_with("test ") && t.find_first_not_of("0123456789", 5) == std::string_view::npos;
}

}  // namespace

std::vector<std::string> CtestReader::Needles() {
  return {"***", "   passed  ", "tests passed", "no tests were found", "the following tests failed",
          "unable to find executable", "unable to find required file", "failed test dependencies",
          "test not available", "test project "};
}

void CtestReader::Add(TestCase c) {
  CountEnd(&run_, c.end);
  AddCase(&report_, std::move(c));
}

bool CtestReader::ResultLine(std::string_view line) {
  std::optional<CtestResult> r = ParseResult(line);
  if (!r) return false;
  CloseOutput();
  std::string pending = std::move(pending_);
  pending_.clear();
  if (r->status.starts_with("Not Run (Disabled)")) return true;
  TestCase c = NamedCase(r->name);
  c.seconds = r->seconds;
  const std::string& s = r->status;
  bool output = true;  // CTest prints the output of these under --output-on-failure
  bool has_message = true;
  if (s.starts_with("Passed")) {
    output = false;
  } else if (s.starts_with("Skipped")) {
    c.end = TestEnd::kSkipped;
    output = false;
  } else if (s.starts_with("Failed")) {
    c.end = TestEnd::kFailed;
    c.message = std::string(TrimSpace(std::string_view(s).substr(6)));  // a regex reason, if any
    has_message = !c.message.empty();
    reason_continues_ = has_message && r->time.empty();  // "Regex=[a\nb\n]  0.02 sec" spans lines
  } else if (s.starts_with("Timeout")) {
    c.end = TestEnd::kError;
    c.message = s + (r->time.empty() ? "" : " after " + r->time + " sec");
  } else if (s.starts_with("Exception")) {
    c.end = TestEnd::kError;
    c.message = CrashMessage(TrimSpace(std::string_view(s).substr(std::min<size_t>(10, s.size()))), r->extra);
  } else {  // "Not Run": the test never started; the reason came on the lines before
    c.end = TestEnd::kError;
    c.message = pending.empty() ? s + ": CTest could not start the test" : pending;
    output = false;
  }
  if (!output) {
    Add(std::move(c));
    return true;
  }
  output_ = Output();
  output_->c = std::move(c);
  output_->has_message = has_message;
  return true;
}

void CtestReader::OutputLine(std::string_view line) {
  Output& o = *output_;
  if (reason_continues_) {
    // The rest of a reason CTest printed with its own line breaks, up to "]  0.02 sec".
    std::string_view t = TrimSpace(line);
    o.c.message.append(" ").append(t.substr(0, kMaxCaseMessage));
    if (o.c.message.size() > kMaxCaseMessage) reason_continues_ = false;  // not a reason after all
    if (t.ends_with(" sec")) {
      reason_continues_ = false;
      size_t sp = o.c.message.find_last_of(']');
      if (sp != std::string::npos) o.c.message.resize(sp + 1);
      std::string_view num = TrimSpace(t.substr(t.find(']') + 1));
      num = num.substr(0, num.find(' '));
      if (std::from_chars(num.data(), num.data() + num.size(), o.c.seconds).ec != std::errc()) o.c.seconds = -1;
    }
    return;
  }
  AppendDetailLine(&o.c.detail, line);
  std::string_view t = TrimSpace(line);
  if (t.empty()) return;
  const bool indented = line.front() == ' ' || line.front() == '\t';
  if (o.first_line.empty()) o.first_line = std::string(t);
  if (t.starts_with("Traceback (most recent call last)")) {
    o.in_traceback = true;
  } else if (o.in_traceback && !indented) {
    o.exception = std::string(t);  // a chained traceback's last one wins
    o.in_traceback = false;
  } else if (o.after_gtest_failure) {
    o.error_line = std::string(t);  // the line after GoogleTest's "file:line: Failure" says what failed
    o.after_gtest_failure = false;
  } else if (t.starts_with("what():")) {
    o.error_line = std::string(t);  // std::terminate's what() says more than "terminate called ..."
  } else if (o.error_line.empty() && !indented && t.front() != '[' && NamesError(t)) {
    if (t.ends_with(": Failure")) o.after_gtest_failure = true;
    else o.error_line = std::string(t);
  }
}

void CtestReader::CloseOutput() {
  reason_continues_ = false;
  if (!output_) return;
  Output& o = *output_;
  while (o.c.detail.ends_with("\n\n")) o.c.detail.pop_back();
  if (o.c.detail == "\n") o.c.detail.clear();
  if (!o.has_message) {
    // CTest said only "Failed": the test's own output names the failure, best line first.
    o.c.message = !o.exception.empty() ? o.exception : !o.error_line.empty() ? o.error_line : o.first_line;
  }
  Add(std::move(o.c));
  output_.reset();
}

bool CtestReader::SummaryLine(std::string_view t) {
  if (t.starts_with("No tests were found")) {
    CloseOutput();
    complete_ = true;
    report_.summary = std::string(t);
    return true;
  }
  size_t at = t.find("% tests passed");
  if (at == std::string_view::npos) return false;
  std::string_view rest = t.substr(at + 14);
  int failed = 0;
  if (rest.starts_with(", ")) {
    rest.remove_prefix(2);
    if ((failed = TakeInt(&rest)) < 0 || !rest.starts_with(" tests failed")) return false;
  }
  size_t out_of = rest.find("out of ");
  if (out_of == std::string_view::npos) return false;
  rest.remove_prefix(out_of + 7);
  int total = TakeInt(&rest);
  if (total < failed) return false;
  CloseOutput();
  // CTest counts a skipped test as passed and every other end as failed; lines it never printed
  // (or that were lost) become unnamed counts, so the counts always say what CTest said.
  run_.passed = std::max(0, total - failed - run_.skipped);
  if (run_.failed + run_.errors != failed) run_.failed = std::max(0, failed - run_.errors);
  AddCounts(&report_.counts, run_);
  run_ = {};
  complete_ = true;
  report_.summary = std::string(t);
  return true;
}

void CtestReader::FailedListLine(std::string_view line) {
  // "\t  2 - name (Failed)", with the test's labels after it when it has some.
  std::string_view t = TrimSpace(line);
  const bool numbered = TakeInt(&t) >= 0 && t.starts_with(" - ");
  const size_t open = t.rfind(" (");
  if (!numbered || open == std::string_view::npos || open < 3) {
    in_failed_list_ = false;
    return;
  }
  std::string_view name = t.substr(3, open - 3), status = t.substr(open + 2, t.find(')', open) - open - 2);
  for (const TestCase& c : report_.cases)
    if (c.name == name) return;
  // A test the summary counted but whose result line never reached the log: name it.
  TestCase c = NamedCase(name);
  c.end = status == "Failed" ? TestEnd::kFailed : TestEnd::kError;
  c.message = std::string(status);
  if (c.end == TestEnd::kError && report_.counts.failed > 0) {
    --report_.counts.failed;  // the summary put it among the unnamed failures
    ++report_.counts.errors;
  }
  AddCase(&report_, std::move(c));
}

void CtestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (in_failed_list_) return FailedListLine(line);
  if (ResultLine(line) || SummaryLine(t)) return;
  if (t.starts_with("The following tests FAILED")) {
    CloseOutput();
    in_failed_list_ = true;
    return;
  }
  if (output_) {
    // The output ends where CTest speaks again: the next test starting, the summary, a new run.
    const bool ctest = IsStartLine(line) || IsVerboseTestLine(t) || t.starts_with("Total Test time") ||
                       t.starts_with("The following tests") || t.starts_with("Errors while running CTest") ||
                       t.starts_with("Test project ");
    if (!ctest) return OutputLine(line);
    CloseOutput();
  }
  if (t.starts_with("Unable to find executable:") || t.starts_with("Unable to find required file:") ||
             t.starts_with("Failed test dependencies:") || t.starts_with("Test not available")) {
    pending_ = CutUtf8(t, kMaxCaseMessage);
  }
}

TestReport CtestReader::Report() const {
  CtestReader copy = *this;
  copy.CloseOutput();  // a failed test whose output was still being printed
  TestReport r = std::move(copy.report_);
  r.runner = "ctest";
  r.complete = complete_;
  AddCounts(&r.counts, copy.run_);
  return r;
}

}  // namespace gauntlet::classifier
