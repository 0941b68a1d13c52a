// doctest's console reporter, read by the shapes it prints (doctest/parts/private/reporters/
// console.cpp: logTestStart, log_assert, log_message, test_case_exception, test_case_end,
// test_run_end; common.cpp: fulltext_log_assert_to_stream). A test case is one case however many
// subcases re-print its header; its first failure decides how it ended: a check that is NOT correct
// (or a FAIL/FAIL_CHECK message, a throws-check that did not throw) is kFailed with assertion=true;
// an exception or a crash is kError; `Test case exceeded time limit` is kError "Timeout: ...";
// should_fail / may_fail / expected_failures that failed as allowed are kXfailed.
//
// doctest's own "N skipped" counts the test cases that did not pass the filters (-tc, -ts,
// doctest::skip()), not ones that could not run here, so it is left out of the counts as pytest's
// "deselected" is: the counts add up to doctest's "test cases: N".
#include "classifier/doctest_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

// "file.cpp:7" (the default, gnu_file_line) or "file.cpp(7)" (MSVC): where an assertion is.
bool DoctestLocation(std::string_view s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == ')') &&
         s.find_first_of(":(") != std::string_view::npos;
}

// "P passed" -> P from one " | "-separated column of the totals (numbers are right-aligned).
int DoctestCount(std::string_view line, std::string_view word) {
  size_t at = line.find(word);
  if (at == std::string_view::npos) return 0;
  std::string_view before = TrimSpace(line.substr(0, at));
  size_t sp = before.find_last_of(" |");
  before = sp == std::string_view::npos ? before : before.substr(sp + 1);
  int v = 0;
  std::from_chars(before.data(), before.data() + before.size(), v);
  return v;
}

}  // namespace

std::vector<std::string> DoctestReader::Needles() { return {"[doctest] ", "test case:  ", "  scenario: "}; }

void DoctestReader::Header(std::string name) {
  in_run_ = true;
  complete_ = false;
  values_pending_ = exception_pending_ = between_ = false;
  name = CutUtf8(name, kMaxCaseName);
  if (open_ && open_->name == name) return;  // the same test case, another subcase
  Flush();
  open_ = NamedCase(name);
}

void DoctestReader::Fail(TestEnd end, std::string_view message) {
  open_failed_ = true;
  if (open_->end == TestEnd::kFailed || open_->end == TestEnd::kError) return;  // the first one decides
  open_->end = end;
  open_->assertion = end == TestEnd::kFailed;
  open_->message = CutUtf8(message, kMaxCaseMessage);
  values_pending_ = message.ends_with("is NOT correct!");
  exception_pending_ = message.ends_with("exception: ");
}

bool DoctestReader::AssertionLine(std::string_view line) {
  // "t.cpp:7: ERROR: CHECK( f(1) == 2 ) is NOT correct!"; WARNING and MESSAGE lines are output only.
  for (std::string_view severity : {": FATAL ERROR: ", ": ERROR: "}) {
    size_t at = line.find(severity);
    if (at == std::string_view::npos || !DoctestLocation(line.substr(0, at))) continue;
    std::string_view text = line.substr(at + severity.size());
    const bool error = text.starts_with("test case THREW exception: ") || text.starts_with("test case CRASHED: ") ||
                       text.find(" THREW exception: ") != std::string_view::npos;
    Fail(error ? TestEnd::kError : TestEnd::kFailed, text);
    return true;
  }
  return false;
}

bool DoctestReader::VerdictLine(std::string_view t) {
  if (t.starts_with("Test case exceeded time limit of")) {
    std::string m = "Timeout: " + std::string(t);
    if (m.ends_with('!')) m.pop_back();
    Fail(TestEnd::kError, m);
  } else if (t.starts_with("Should have failed but didn't!") || t.starts_with("Didn't fail exactly")) {
    Fail(TestEnd::kFailed, t);
    open_->assertion = false;
  } else if (t.starts_with("Failed as expected so marking it as not failed") ||
             t.starts_with("Allowed to fail so marking it as not failed") ||
             (t.starts_with("Failed exactly") && t.ends_with("as expected so marking it as not failed!"))) {
    open_failed_ = true;
    open_->end = TestEnd::kXfailed;  // the suite declares these failures expected
    open_->assertion = false;
  } else {
    return false;
  }
  return true;
}

void DoctestReader::Flush() {
  if (open_ && open_failed_) {
    CountEnd(&run_, open_->end);
    AddCase(&report_, std::move(*open_));
  }
  open_.reset();
  open_failed_ = values_pending_ = exception_pending_ = false;
}

void DoctestReader::Totals(std::string_view t) {
  // "test cases: 6 | 1 passed | 5 failed | 1 skipped" (numbers padded with setw)
  Flush();
  const int passed = DoctestCount(t, " passed"), failed = DoctestCount(t, " failed");
  TestCounts n;
  n.errors = std::min(run_.errors, failed);
  n.failed = failed - n.errors;
  n.xfailed = std::min(run_.xfailed, passed);  // doctest counts them passed
  n.passed = passed - n.xfailed;
  AddCounts(&report_.counts, n);
  run_ = {};
  report_.summary = std::string(t);
  complete_ = true;
}

void DoctestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (t.starts_with("[doctest] ")) {
    t = TrimSpace(t.substr(10));
    if (t.starts_with("test cases:")) Totals(t);
    else if (t.starts_with("Status:")) in_run_ = false;
    return;
  }
  if (line.starts_with("TEST CASE:  ")) return Header(std::string(TrimSpace(line.substr(12))));
  if (line.starts_with("  Scenario: ")) return Header(std::string(t));  // SCENARIO's name is printed bare
  if (!in_run_ || !open_ || between_) return;
  if (!t.empty() && t.find_first_not_of('=') == std::string_view::npos) {
    between_ = true;  // the separator before the next header (or the totals)
    return;
  }
  TestCase& c = *open_;
  if (t.empty()) {
    values_pending_ = exception_pending_ = false;
    return;
  }
  AppendDetailLine(&c.detail, line);
  if (AssertionLine(line) || VerdictLine(t)) return;
  if (values_pending_ && t.starts_with("values: ")) {
    c.message = CutUtf8(c.message + " " + std::string(t), kMaxCaseMessage);
  } else if (exception_pending_) {
    c.message = CutUtf8(c.message + std::string(t), kMaxCaseMessage);  // what() of a check that threw
  }
  values_pending_ = exception_pending_ = false;
}

TestReport DoctestReader::Report() const {
  DoctestReader copy = *this;
  copy.Flush();  // a test case still being reported when the output ended
  TestReport r = std::move(copy.report_);
  r.runner = "doctest";
  r.complete = complete_;
  AddCounts(&r.counts, copy.run_);
  return r;
}

}  // namespace gauntlet::classifier
