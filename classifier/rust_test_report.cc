// libtest's pretty formatter, read by the shapes it prints (library/test/src/formatters/pretty.rs:
// write_test_start / write_result / write_results / write_run_finish) and the panic messages of
// library/core/src/panicking.rs (assert_failed_inner: "assertion `left == right` failed" with
// "  left: 1" / " right: 2"; before Rust 1.73 "assertion failed: `(left == right)`" inside
// `panicked at '...', file:line:col`).
//
// A failed test is kFailed. Its panic decides `assertion`: assert!/assert_eq!/assert_ne! (and their
// debug_ forms) say "assertion failed: ..." / "assertion `left == right` failed": a failed check,
// assertion=true. Any other panic (unwrap on Err, an explicit panic!, an index out of bounds), a
// should_panic test that did not panic, or an Err returned from the test is kFailed with
// assertion=false rather than kError: libtest itself counts them all "failed" (there is no error
// column to match), and a panic in the test body is what pytest's raise in a test body is, which the
// pytest reader also reports as failed. `ignored` is kSkipped. A test still running when the output
// ended (only `--test-threads=1` names it first) is kError.
#include "classifier/rust_test_report.h"

#include <cctype>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

// "N <word>" inside libtest's summary: "2 passed; 10 failed; 2 ignored; 0 measured; ...".
int RustCount(std::string_view t, std::string_view word) {
  size_t at = t.find(word);
  if (at == std::string_view::npos) return 0;
  size_t start = t.find_last_of(' ', at - 1);
  std::string_view num = t.substr(start + 1, at - start - 1);
  int v = 0;
  std::from_chars(num.data(), num.data() + num.size(), v);
  return v;
}

// "msg', src/lib.rs:6:29" -> "msg": the end of a pre-1.73 `panicked at '...'` message; npos if the
// line does not end one.
size_t OldPanicEnd(std::string_view line) {
  size_t q = line.rfind("', ");
  if (q == std::string_view::npos) return q;
  std::string_view where = line.substr(q + 3);
  return !where.empty() && std::isdigit(static_cast<unsigned char>(where.back())) &&
                 where.find(':') != std::string_view::npos
             ? q
             : std::string_view::npos;
}

// The panic's first line, with assert_eq!'s operands after it: "assertion `left == right` failed
// (left: 1, right: 2)".
std::string PanicMessage(const std::vector<std::string>& lines) {
  std::string m = lines[0], operands;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view t = TrimSpace(lines[i]);
    while (t.ends_with(',')) t.remove_suffix(1);
    if (!t.starts_with("left:") && !t.starts_with("right:")) continue;
    if (!operands.empty()) operands.append(", ");
    operands.append(t);
  }
  return operands.empty() ? m : m + " (" + operands + ")";
}

}  // namespace

std::vector<std::string> RustTestReader::Needles() {
  return {"running ", " ...", "test result: ", " stdout ----", "failures:", "successes:",
          "process didn't exit successfully"};
}

void RustTestReader::Add(TestCase c) {
  CountEnd(&run_, c.end);
  if (report_.cases.size() < kMaxCases) index_[c.name] = report_.cases.size();
  AddCase(&report_, std::move(c));
}

bool RustTestReader::ResultLine(std::string_view line) {
  std::string_view t = TrimSpace(line), name, result;
  if (running_ && (t == "ok" || t == "FAILED" || t.starts_with("ignored") || t.starts_with("bench:"))) {
    name = *running_;  // the result of a test whose output came between its name and its result
    result = t;
  } else if (line.starts_with("test ")) {
    std::string_view rest = line.substr(5);
    size_t sep = rest.find(" ... ");
    if (sep == std::string_view::npos && !rest.ends_with(" ...")) return false;
    name = rest.substr(0, sep == std::string_view::npos ? rest.size() - 4 : sep);
    result = sep == std::string_view::npos ? std::string_view() : TrimSpace(rest.substr(sep + 5));
    if (name.ends_with(" - should panic")) name.remove_suffix(15);
  } else {
    return false;
  }
  TestCase c = NamedCase(name);
  if (result.starts_with("ok") || result.starts_with("bench")) {
    c.end = TestEnd::kPassed;
  } else if (result.starts_with("FAILED")) {
    c.end = TestEnd::kFailed;
  } else if (result.starts_with("ignored")) {
    c.end = TestEnd::kSkipped;
    if (result.starts_with("ignored, ")) c.message = std::string(result.substr(9));
  } else {
    running_ = std::string(name);  // printed before the test ran (one test thread)
    return true;
  }
  if (size_t lt = result.find(" <"); lt != std::string_view::npos && result.ends_with("s>")) {
    std::string_view num = result.substr(lt + 2, result.size() - lt - 4);  // --report-time's "<0.003s>"
    if (std::from_chars(num.data(), num.data() + num.size(), c.seconds).ec != std::errc()) c.seconds = -1;
  }
  running_.reset();
  Add(std::move(c));
  return true;
}

void RustTestReader::BlockLine(std::string_view line) {
  Block& b = *block_;
  AppendDetailLine(&b.detail, line);
  std::string_view t = TrimSpace(line);
  if (b.in_panic) {
    if (b.old_form) {
      size_t end = OldPanicEnd(line);
      b.panic.emplace_back(end == std::string_view::npos ? line : line.substr(0, end));
      b.in_panic = end == std::string_view::npos && b.panic.size() < 8;
    } else if (t.empty() || t.starts_with("note: ") || t.starts_with("stack backtrace:") || b.panic.size() >= 8) {
      b.in_panic = false;
    } else {
      b.panic.emplace_back(line);
    }
    if (b.in_panic) return;
  }
  size_t at = t.find(" panicked at ");
  if (b.panic.empty() && t.starts_with("thread '") && at != std::string_view::npos) {
    std::string_view rest = t.substr(at + 13);
    b.old_form = rest.starts_with('\'');
    if (!b.old_form) {
      b.in_panic = true;  // the message is on the lines after "panicked at src/lib.rs:10:5:"
      return;
    }
    rest.remove_prefix(1);
    size_t end = OldPanicEnd(rest);
    b.panic.emplace_back(end == std::string_view::npos ? rest : rest.substr(0, end));
    b.in_panic = end == std::string_view::npos;
    return;
  }
  if (t.starts_with("note: test did not panic as expected") && b.note.empty()) b.note = std::string(t.substr(6));
  if (b.first_line.empty() && !t.empty() && !t.starts_with("note: ")) b.first_line = std::string(t);
}

void RustTestReader::EndBlock() {
  if (!block_) return;
  Block b = std::move(*block_);
  block_.reset();
  while (b.detail.starts_with("\n")) b.detail.erase(0, 1);
  auto it = index_.find(b.name);
  if (it == index_.end()) {
    if (!b.failure) return;
    TestCase c = NamedCase(b.name);  // --format terse names a failure only here
    c.end = TestEnd::kFailed;
    Add(std::move(c));
    it = index_.find(b.name);
    if (it == index_.end()) return;  // over the cap
  }
  TestCase& c = report_.cases[it->second];
  c.detail = CutUtf8(b.detail, kMaxCaseDetail);
  if (c.end != TestEnd::kFailed) return;  // a passing test's --show-output
  if (!b.panic.empty()) {
    c.message = CutUtf8(PanicMessage(b.panic), kMaxCaseMessage);
    c.assertion = c.message.starts_with("assertion failed") || c.message.starts_with("assertion `");
  } else {
    c.message = CutUtf8(b.note.empty() ? b.first_line : b.note, kMaxCaseMessage);
  }
}

bool RustTestReader::Summary(std::string_view t) {
  if (!t.starts_with("test result: ")) return false;
  EndBlock();
  // "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
  report_.counts.passed += RustCount(t, " passed;") + RustCount(t, " measured;");
  report_.counts.failed += RustCount(t, " failed;");
  report_.counts.skipped += RustCount(t, " ignored;");
  run_ = {};
  report_.summary = std::string(t);
  complete_ = true;
  return true;
}

void RustTestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (Summary(t)) return;
  if (t.starts_with("---- ") && t.ends_with(" stdout ----")) {
    EndBlock();
    block_ = Block();
    block_->name = std::string(t.substr(5, t.size() - 17));
    block_->failure = !successes_;
    return;
  }
  if (line == "failures:" || line == "successes:") {
    EndBlock();
    successes_ = line == "successes:";
    return;
  }
  if (block_) return BlockLine(line);
  if (t.starts_with("running ") && (t.ends_with(" tests") || t.ends_with(" test"))) {
    // A new test binary: what the previous one named stays counted if it never printed its summary.
    AddCounts(&report_.counts, run_);
    run_ = {};
    index_.clear();
    running_.reset();
    successes_ = complete_ = false;
    return;
  }
  if (running_ && t.find("process didn't exit successfully") != std::string_view::npos) {
    TestCase c = NamedCase(*running_);  // the test binary died while this test ran
    c.end = TestEnd::kError;
    c.message = std::string(t);
    running_.reset();
    return Add(std::move(c));
  }
  ResultLine(line);
}

TestReport RustTestReader::Report() const {
  RustTestReader copy = *this;
  copy.EndBlock();
  if (copy.running_) {
    TestCase c = NamedCase(*copy.running_);
    c.end = TestEnd::kError;
    c.message = "the test did not finish (the output ended while it ran)";
    copy.Add(std::move(c));
  }
  TestReport r = std::move(copy.report_);
  r.runner = "rust";
  r.complete = complete_;
  AddCounts(&r.counts, copy.run_);
  return r;
}

}  // namespace gauntlet::classifier
