// unittest's TextTestRunner report, read by the shapes Lib/unittest/runner.py prints (TextTestResult:
// startTest's "desc ... ", _write_status, addSkip's "skipped {reason!r}", printErrorList's
// separator1 (70 '=') / "FLAVOUR: desc" / separator2 (70 '-'); TextTestRunner.run: "Ran %d test%s in
// %.3fs", "OK" / "FAILED" with "(failures=, errors=, skipped=, expected failures=, unexpected
// successes=)", and "NO TESTS RAN" since 3.12). A test is named by its id, "mod.Class.test_x" (with
// a subtest's " (i=1)"), from "test_x (mod.Class.test_x)" (3.11+) or "test_x (mod.Class)".
//
// FAIL (the test's failureException, AssertionError from a TestCase assert method) is kFailed with
// assertion=true; ERROR (any other exception, setUpClass's too) is kError; both take the traceback's
// final "Type: message" line as message. `unexpected success` is kFailed: result.py's wasSuccessful()
// is false when unexpectedSuccesses is not empty (since Python 3.4), so the run fails on it, and its
// count is among the failures. `expected failure` is kXfailed, `skipped` kSkipped with its reason.
#include "classifier/unittest_report.h"

#include <algorithm>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

bool Separator(std::string_view line, char c) {
  return line.size() == 70 && line.find_first_not_of(c) == std::string_view::npos;
}

// "test_x (mod.Class.test_x)" / "test_x (mod.Class)" / "test_s (mod.C.test_s) (i=1)" -> the test id,
// "mod.Class.test_x" / "mod.C.test_s (i=1)"; "" when the description has no id (a docstring line).
std::string TestId(std::string_view desc) {
  size_t open = desc.find(" (");
  size_t close = open == std::string_view::npos ? open : desc.find(')', open);
  if (close == std::string_view::npos || desc.substr(0, open).find(' ') != std::string_view::npos) return "";
  std::string_view method = desc.substr(0, open), where = desc.substr(open + 2, close - open - 2);
  std::string id(where);
  if (!where.ends_with(std::string(".") + std::string(method))) id.append(".").append(method);
  return id + std::string(desc.substr(close + 1));
}

// "failures=3" inside "FAILED (failures=3, errors=2, ...)" -> 3 (not "expected failures=1").
int Field(std::string_view t, std::string_view key) {
  for (size_t at = t.find(key); at != std::string_view::npos; at = t.find(key, at + 1)) {
    if (at == 0 || (t[at - 1] != '(' && (at < 2 || t.substr(at - 2, 2) != ", "))) continue;
    std::string_view num = t.substr(at + key.size());
    int v = 0;
    std::from_chars(num.data(), num.data() + num.size(), v);
    return v;
  }
  return 0;
}

}  // namespace

std::vector<std::string> UnittestReader::Needles() {
  // "fail": a FAIL block's header where the log was cut after its "=" separator (a word the
  // failed-check rules look for already, so no new state in the prefilter's table).
  return {" ... ok", " ... fail", " ... error", " ... skipped", " ... expected failure",
          " ... unexpected success", std::string(12, '='), " tests in ", " test in ", "fail"};
}

TestCase* UnittestReader::Add(TestCase c) {
  CountEnd(&run_, c.end);
  const bool kept = report_.cases.size() < kMaxCases;
  if (kept) index_[c.name] = report_.cases.size();
  AddCase(&report_, std::move(c));
  return kept ? &report_.cases.back() : nullptr;
}

bool UnittestReader::ResultLine(std::string_view line) {
  size_t sep = line.rfind(" ... ");
  if (sep == std::string_view::npos) return false;
  std::string_view desc = line.substr(0, sep);
  if (size_t prev = desc.rfind(" ... "); prev != std::string_view::npos) desc = desc.substr(prev + 5);  // a test
  std::string id = TestId(TrimSpace(desc));  // whose result never came (Python < 3.11 subtests) shares the line
  std::string_view status = TrimSpace(line.substr(sep + 5));
  if (id.empty()) return false;
  TestCase c = NamedCase(id);
  if (size_t open = status.rfind(" ("); open != std::string_view::npos && status.ends_with("s)")) {
    std::string_view num = status.substr(open + 2, status.size() - open - 4);  // "ok (0.012s)": some runners add it
    if (std::from_chars(num.data(), num.data() + num.size(), c.seconds).ec == std::errc())
      status = status.substr(0, open);
    else
      c.seconds = -1;
  }
  if (status == "ok") {
    c.end = TestEnd::kPassed;
  } else if (status == "FAIL") {
    c.end = TestEnd::kFailed;
    c.assertion = true;
  } else if (status == "ERROR") {
    c.end = TestEnd::kError;
  } else if (status.starts_with("skipped")) {
    c.end = TestEnd::kSkipped;
    std::string_view reason = TrimSpace(status.substr(7));  // the reason's repr: 'x' or "it's"
    if (reason.size() >= 2 && (reason.front() == '\'' || reason.front() == '"') && reason.back() == reason.front())
      reason = reason.substr(1, reason.size() - 2);
    c.message = std::string(reason);
  } else if (status == "expected failure") {
    c.end = TestEnd::kXfailed;
  } else if (status == "unexpected success") {
    c.end = TestEnd::kFailed;
    c.message = "unexpected success";
  } else {
    return false;
  }
  Add(std::move(c));
  return true;
}

void UnittestReader::BlockLine(std::string_view line) {
  Block& b = *block_;
  AppendDetailLine(&b.detail, line);
  std::string_view t = TrimSpace(line);
  if (t.starts_with("Traceback (most recent call last)")) {
    b.in_frames = true;
    b.exception_open = false;
  } else if (b.exception_open && !t.empty()) {
    b.exception.append(t);  // "AssertionError: " with its text on the next line (numpy's assert_allclose)
    b.exception_open = false;
  } else if (b.in_frames && !t.empty() && line.front() != ' ') {
    b.exception = std::string(t);  // the first unindented line after the frames; a chained one wins
    b.in_frames = false;
    b.exception_open = line.ends_with(": ") || line.ends_with(':');
    if (b.exception_open && !b.exception.ends_with(' ')) b.exception.push_back(' ');
  }
}

void UnittestReader::EndBlock() {
  if (!block_) return;
  Block b = std::move(*block_);
  block_.reset();
  while (b.detail.ends_with("\n\n")) b.detail.pop_back();
  auto it = index_.find(b.name);
  TestCase* c = it == index_.end() ? nullptr : &report_.cases[it->second];
  if (!c) {
    TestCase n = NamedCase(b.name);  // without -v, the block is where a failure is named
    n.end = b.flavour == "ERROR" ? TestEnd::kError : TestEnd::kFailed;
    n.assertion = b.flavour == "FAIL";
    if (!(c = Add(std::move(n)))) return;
  }
  if (b.flavour == "UNEXPECTED SUCCESS") c->message = "unexpected success";
  else if (!b.exception.empty()) c->message = CutUtf8(TrimSpace(b.exception), kMaxCaseMessage);
  c->detail = CutUtf8(b.detail, kMaxCaseDetail);
}

bool UnittestReader::Header(std::string_view t) {
  // "FAIL: test_x (mod.Class.test_x)"; PyTorch's runner adds the time: "FAIL [2.987s]: ...". Python
  // 3.11+ lists unexpected successes under one separator, a line each, with no traceback.
  size_t colon = t.find(": ");
  if (colon == std::string_view::npos) return false;
  std::string_view flavour = t.substr(0, std::min(colon, t.find(" [")));
  if (flavour != "FAIL" && flavour != "ERROR" && flavour != "UNEXPECTED SUCCESS") return false;
  std::string id = TestId(t.substr(colon + 2));
  Block b;
  b.flavour = std::string(flavour);
  b.name = id.empty() ? std::string(t.substr(colon + 2)) : id;
  block_ = std::move(b);
  if (flavour != "UNEXPECTED SUCCESS") {
    state_ = State::kDescription;
    return true;
  }
  EndBlock();
  state_ = State::kUnexpected;
  return true;
}

void UnittestReader::StatusLine(std::string_view t) {
  // "OK", "OK (skipped=1, expected failures=1)", "FAILED (failures=1, errors=1)", "NO TESTS RAN".
  if (!t.starts_with("OK") && !t.starts_with("FAILED") && !t.starts_with("NO TESTS RAN")) return;
  TestCounts n;
  n.failed = Field(t, "failures=") + Field(t, "unexpected successes=");
  n.errors = Field(t, "errors=");
  n.skipped = Field(t, "skipped=");
  n.xfailed = Field(t, "expected failures=");
  // unittest states no passed count; a subtest's failures and setUpClass's errors are not in "Ran".
  n.passed = std::max({0, run_.passed, ran_ - n.failed - n.errors - n.skipped - n.xfailed});
  AddCounts(&report_.counts, n);
  run_ = {};
  report_.summary.append(", ").append(t);
}

void UnittestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (Separator(line, '=')) {
    EndBlock();
    state_ = State::kHeader;
    return;
  }
  switch (state_) {
    case State::kHeader:
    case State::kUnexpected:
      if (Separator(line, '-')) state_ = State::kNone;  // the dashes before "Ran N tests"
      else if (!Header(t) && state_ == State::kHeader) state_ = State::kNone;
      return;
    case State::kDescription:  // a docstring's first line may come before the dashes
      if (Separator(line, '-')) {
        state_ = State::kTraceback;
      } else if (cut_header_) {  // not a block after all: only its dashes come next in a cut one
        block_.reset();
        state_ = State::kNone;
      }
      cut_header_ = false;
      return;
    case State::kTraceback:
      if (!Separator(line, '-')) return BlockLine(line);
      EndBlock();  // the dashes before "Ran N tests"
      state_ = State::kNone;
      return;
    case State::kStatus:
      if (t.empty()) return;
      state_ = State::kNone;
      StatusLine(t);
      return;
    case State::kNone:
      break;
  }
  const bool ran = t.find(" tests in ") != std::string_view::npos || t.find(" test in ") != std::string_view::npos;
  if (t.starts_with("Ran ") && ran) {
    std::string_view num = t.substr(4);
    std::from_chars(num.data(), num.data() + num.size(), ran_);
    report_.summary = std::string(t);
    complete_ = true;
    state_ = State::kStatus;
    return;
  }
  // A log cut between printErrorList's "=" separator and its "FAIL: test_x (mod.Class)" line: the
  // header alone, of a test named as unittest names one, with the "-" separator on the next line.
  if ((t.starts_with("FAIL: ") || t.starts_with("FAIL [")) && !TestId(t.substr(t.find(": ") + 2)).empty() &&
      Header(t)) {
    cut_header_ = true;
    return;
  }
  ResultLine(line);
}

TestReport UnittestReader::Report() const {
  UnittestReader copy = *this;
  copy.EndBlock();  // a block still being printed when the output ended
  TestReport r = std::move(copy.report_);
  r.runner = "unittest";
  r.complete = complete_;
  AddCounts(&r.counts, copy.run_);
  return r;
}

}  // namespace gauntlet::classifier
