// Catch2's console reporter, read by the shapes it prints (src/catch2/reporters/
// catch_reporter_console.cpp: ConsoleAssertionPrinter, printTestCaseAndSectionHeader,
// lazyPrintRunInfo; catch_reporter_helpers.cpp: printTestRunTotals). A test case is one case, however
// many sections re-print its header; its first failing block decides how it ended: a failed check
// (REQUIRE/CHECK, FAIL, REQUIRE_THROWS that did not throw) is kFailed with assertion=true, an
// unexpected exception or a fatal signal is kError, SKIP (v3) is kSkipped. A [!shouldfail] test case
// prints its failures exactly like a real one, so it is named failed; the totals still count it as
// "failed as expected" (xfailed).
#include "classifier/catch2_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

bool Only(std::string_view s, char c) { return s.size() >= 20 && s.find_first_not_of(c) == std::string_view::npos; }

// "file.cpp:12" (GCC, Clang) or "file.cpp(12)" (MSVC): where a test case or assertion is.
bool IsLocation(std::string_view s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == ')') &&
         s.find_first_of(":(") != std::string_view::npos;
}

// "file.cpp:12: FAILED:" / "file.cpp(12): SKIPPED:" -> "FAILED" / "SKIPPED"; "" for any other line
// ("FAILED - but was ok:" is a CHECK_NOFAIL that did not fail the test).
std::string_view BlockKind(std::string_view line) {
  for (std::string_view kind : {"FAILED", "SKIPPED", "PASSED"}) {
    const size_t n = kind.size() + 3;  // ": " + kind + ":"
    if (line.size() <= n || !line.ends_with(':') || line.substr(line.size() - n, 2) != ": " ||
        line.substr(line.size() - n + 2, kind.size()) != kind)
      continue;
    if (IsLocation(line.substr(0, line.size() - n))) return kind;
  }
  return {};
}

// "12 passed" -> 12 and "passed"; the total column is a bare number or "- none -".
int Column(std::string_view col, std::string_view* word) {
  col = TrimSpace(col);
  int v = 0;
  auto [p, ec] = std::from_chars(col.data(), col.data() + col.size(), v);
  if (ec != std::errc()) return 0;
  *word = TrimSpace(col.substr(static_cast<size_t>(p - col.data())));
  return v;
}

void Join(std::string* out, std::string_view part) {
  if (part.empty() || out->size() >= kMaxCaseMessage) return;
  if (!out->empty()) out->push_back(' ');
  out->append(part);
}

}  // namespace

std::vector<std::string> Catch2Reader::Needles() {
  return {" host application.", "randomness seeded to:", "all tests passed", "test cases:", "assertions:",
          "no tests ran"};
}

void Catch2Reader::HeaderLine(std::string_view line) {
  switch (header_) {
    case Header::kName:
      if (!Only(line, '-')) {
        if (header_lines_.size() < 16) header_lines_.emplace_back(line);
        else header_ = Header::kNone;  // not a header after all
      } else if (!header_lines_.empty()) {
        header_ = Header::kSource;
      }
      return;
    case Header::kSource:  // "file.cpp:6", where the test case (or section) is defined
      header_ = IsLocation(TrimSpace(line)) ? Header::kDots : Header::kNone;
      return;
    case Header::kDots:
      header_ = Header::kNone;
      if (!Only(line, '.')) return;
      break;
    case Header::kNone:
      return;
  }
  // The name wraps onto lines not indented by exactly two spaces; those are section names.
  std::string name = header_lines_[0];
  for (size_t i = 1; i < header_lines_.size(); ++i) {
    std::string_view l = header_lines_[i];
    if (l.starts_with("  ") && l.size() > 2 && l[2] != ' ') break;
    Join(&name, TrimSpace(l));
  }
  if (open_ && open_->name == CutUtf8(name, kMaxCaseName)) return;  // the same test case, another section
  Flush();
  open_ = NamedCase(CutUtf8(name, kMaxCaseName));
  open_reported_ = false;
}

void Catch2Reader::BodyLine(std::string_view line) {
  if (!block_) {
    std::string_view kind = BlockKind(line);
    if (kind.empty() || !open_) return;
    block_ = Block();
    block_->kind = std::string(kind);
  } else if (TrimSpace(line).empty()) {
    return EndBlock();
  } else if (line.starts_with("  ")) {
    std::string_view t = TrimSpace(line);
    if (block_->label.empty() && block_->expression.empty()) block_->expression = std::string(t);
    else if (block_->label == "with expansion") Join(&block_->expansion, t);
    else Join(&block_->text, t);
  } else if (line.ends_with(':')) {
    block_->label = std::string(TrimSpace(line.substr(0, line.size() - 1)));
  }
  TestCase& c = *open_;
  AppendDetailLine(&c.detail, line);
}

void Catch2Reader::EndBlock() {
  if (!block_ || !open_) return;
  Block b = std::move(*block_);
  block_.reset();
  TestCase& c = *open_;
  open_reported_ = true;
  if (c.detail.size() < kMaxCaseDetail) c.detail.push_back('\n');
  if (c.end == TestEnd::kFailed || c.end == TestEnd::kError) return;  // the first failure decides
  if (b.kind == "SKIPPED") {
    c.end = TestEnd::kSkipped;
    c.message = b.text;
    return;
  }
  if (b.kind != "FAILED") return;
  const bool error = b.label.starts_with("due to unexpected exception") || b.label.starts_with("due to a fatal");
  c.end = error ? TestEnd::kError : TestEnd::kFailed;
  c.assertion = !error;
  // The check and what its operands were; INFO/CAPTURE context stays in the detail.
  std::string m = b.expression;
  if (!b.expansion.empty()) Join(&m, "with expansion: " + b.expansion);
  if (error) Join(&m, b.label + ": " + b.text);
  else if (m.empty()) m = b.text;  // FAIL("...") / an explicit failure has only its message
  c.message = CutUtf8(m, kMaxCaseMessage);
}

void Catch2Reader::Flush() {
  EndBlock();
  if (open_ && open_reported_) {
    CountEnd(&run_, open_->end);
    AddCase(&report_, std::move(*open_));
  }
  open_.reset();
  open_reported_ = false;
}

bool Catch2Reader::Totals(std::string_view t) {
  TestCounts n;
  if (t.starts_with("All tests passed (")) {
    // "All tests passed (4 assertions in 2 test cases)"
    size_t in = t.find(" in ");
    std::string_view word;
    if (in == std::string_view::npos) return false;
    n.passed = Column(t.substr(in + 4), &word);
    if (!word.starts_with("test case")) return false;
  } else if (t.starts_with("test cases: ")) {
    // "test cases: 10 | 1 passed | 6 failed | 2 skipped | 1 failed as expected"; zeros are left out.
    std::string_view rest = t.substr(12);
    for (size_t bar; (bar = rest.find(" | ")) != std::string_view::npos || !rest.empty();) {
      std::string_view col = rest.substr(0, bar), word;
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 3);
      int v = Column(col, &word);
      if (word == "passed") n.passed = v;
      else if (word == "failed") n.failed = v;
      else if (word == "skipped") n.skipped = v;
      else if (word == "failed as expected") n.xfailed = v;
    }
  } else if (t != "No tests ran") {
    return false;
  }
  Flush();
  // Catch2 counts a test case that threw among its failures; the named ones say which.
  n.errors = std::min(run_.errors, n.failed);
  n.failed -= n.errors;
  AddCounts(&report_.counts, n);
  run_ = {};
  report_.summary = std::string(t);
  complete_ = true;
  in_run_ = false;
  header_ = Header::kNone;
  return true;
}

void Catch2Reader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (t.starts_with("assertions: ") && complete_ && report_.summary.starts_with("test cases: ") &&
      report_.summary.find("; assertions: ") == std::string::npos) {
    report_.summary.append("; ").append(t);  // the line under "test cases:"
    return;
  }
  if (Totals(t)) return;
  if (t.ends_with(" host application.") && t.find(" is a Catch") != std::string_view::npos) {
    in_run_ = true;  // a new run's report; the previous run's totals stay counted
    complete_ = false;
    return;
  }
  if (t.starts_with("Randomness seeded to:")) {
    in_run_ = true;
    complete_ = false;
    return;
  }
  if (!in_run_) return;
  if (header_ != Header::kNone) return HeaderLine(line);
  if (!block_ && Only(t, '-')) {
    EndBlock();
    header_ = Header::kName;
    header_lines_.clear();
    return;
  }
  BodyLine(line);
}

TestReport Catch2Reader::Report() const {
  Catch2Reader copy = *this;
  copy.Flush();  // a test case still being reported when the output ended
  TestReport r = std::move(copy.report_);
  r.runner = "catch2";
  r.complete = complete_;
  AddCounts(&r.counts, copy.run_);
  return r;
}

}  // namespace gauntlet::classifier
