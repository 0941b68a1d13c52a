// go test's output, read by the shapes src/testing/testing.go prints: (*T).report's "--- %s: %s (%s)"
// with fmtDuration's "%.2fs", chattyPrinter's "=== RUN   ", "=== PAUSE ", "=== CONT  ", "=== NAME  ",
// (*common).log's "file.go:12: " prefix with every line indented four spaces (indenter adds four more
// per subtest level when flushed after the result), (*M).Run's bare "PASS" / "FAIL", tRunner's
// doPanic (the "--- FAIL" lines of the panicking test and its parents are flushed just before the
// panic), and (*M).startAlarm's "panic: test timed out after %v" with "running tests:" and
// "\tTestX (10m0s)" lines.
//
// --- FAIL is kFailed with assertion=true: t.Error/t.Fatal are how a Go test states a failed check.
// A panic in a test is kError with "panic: ..." as message; the timeout panic makes each test still
// running a kError whose message starts "Timeout: test timed out after ...". --- SKIP is kSkipped
// with its t.Skip message.
#include "classifier/go_test_report.h"

#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

size_t Indent(std::string_view line) {
  size_t n = line.find_first_not_of(" \t");
  return n == std::string_view::npos ? line.size() : n;
}

// "    x_test.go:12: got 1, want 2" -> "got 1, want 2"; other lines trimmed.
std::string_view LogMessage(std::string_view line) {
  std::string_view t = TrimSpace(line);
  size_t go = t.find(".go:");
  if (go == std::string_view::npos || t.find(' ') < go) return t;
  size_t colon = t.find(": ", go + 4);
  return colon == std::string_view::npos ? t : t.substr(colon + 2);
}

}  // namespace

std::vector<std::string> GoTestReader::Needles() {
  return {"=== run ", "=== pause ", "=== cont ", "=== name ", "--- pass: ", "--- fail: ", "--- skip: ",
          "panic: ", "ok  ", "fail"};
}

void GoTestReader::AddLog(TestCase* c, std::string_view line) {
  std::string_view t = TrimSpace(line);
  if (t.empty()) return;
  if (c->message.empty() && c->end != TestEnd::kPassed) c->message = CutUtf8(LogMessage(line), kMaxCaseMessage);
  AppendDetailLine(&c->detail, line);
}

TestCase* GoTestReader::Case(std::string_view name) {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &report_.cases[it->second];
}

bool GoTestReader::ResultLine(std::string_view line) {
  // "--- FAIL: TestX/sub (0.00s)", indented four spaces a subtest level when printed under its parent.
  const size_t indent = Indent(line);
  std::string_view t = line.substr(indent);
  TestEnd end;
  if (t.starts_with("--- PASS: ")) end = TestEnd::kPassed;
  else if (t.starts_with("--- FAIL: ")) end = TestEnd::kFailed;
  else if (t.starts_with("--- SKIP: ")) end = TestEnd::kSkipped;
  else return false;
  std::string_view rest = TrimSpace(t.substr(10));
  double seconds = -1;
  size_t open = rest.rfind(" (");
  if (open != std::string_view::npos && rest.ends_with("s)")) {
    std::string_view num = rest.substr(open + 2, rest.size() - open - 4);
    if (std::from_chars(num.data(), num.data() + num.size(), seconds).ec != std::errc()) seconds = -1;
    rest = rest.substr(0, open);
  }
  in_run_ = true;
  complete_ = false;
  TestCase c = NamedCase(rest);
  c.end = end;
  c.seconds = seconds;
  c.assertion = end == TestEnd::kFailed;
  after_.reset();
  if (Add(std::move(c))) after_ = After{report_.cases.size() - 1, indent};
  return true;
}

void GoTestReader::LogLine(std::string_view line) {
  if (panicked_) {  // the panic's goroutine dump, up to the package result
    TestCase& c = report_.cases[*panicked_];
    AppendDetailLine(&c.detail, line);
    return;
  }
  if (after_ && Indent(line) > after_->indent && !TrimSpace(line).empty()) {
    return AddLog(&report_.cases[after_->index], line);  // printed after the result (no -v)
  }
  after_.reset();
  if (current_.empty() || TrimSpace(line).empty()) return;
  if (pending_.size() >= 64 && !pending_.contains(current_)) return;  // bounded: parallel tests at most
  std::string& log = pending_[current_];
  AppendDetailLine(&log, line);
}

TestCase* GoTestReader::Add(TestCase c) {
  if (auto p = pending_.find(c.name); p != pending_.end()) {
    std::string log = std::move(p->second);  // what -v streamed while the test ran
    pending_.erase(p);
    for (size_t at = 0; at < log.size();) {
      size_t nl = log.find('\n', at);
      AddLog(&c, std::string_view(log).substr(at, nl - at));
      at = nl == std::string::npos ? log.size() : nl + 1;
    }
  }
  if (report_.cases.size() >= kMaxCases) {
    CountEnd(&dropped_counts_, c.end);  // AddCase only counts it; its end can no longer change
    AddCase(&report_, std::move(c));
    return nullptr;
  }
  index_[c.name] = report_.cases.size();
  AddCase(&report_, std::move(c));
  return &report_.cases.back();
}

TestCase* GoTestReader::Errored(std::string_view name, std::string_view message) {
  TestCase* c = Case(name);
  if (!c) c = Add(NamedCase(name));
  if (!c) return nullptr;
  c->end = TestEnd::kError;
  c->assertion = false;
  c->message = CutUtf8(message, kMaxCaseMessage);
  panicked_ = static_cast<size_t>(c - report_.cases.data());  // the goroutine dump that follows is its
  after_.reset();
  return c;
}

void GoTestReader::Panic(std::string_view t) {
  // A test's panic follows the "--- FAIL" lines tRunner flushed for it: the innermost is the last.
  std::string_view message = t.substr(0, t.find(" [recovered"));
  if (after_ && report_.cases[after_->index].end == TestEnd::kFailed) {
    const std::string name = report_.cases[after_->index].name;  // Errored may grow the vector
    Errored(name, message);
  } else if (!current_.empty() && !index_.contains(current_)) {
    Errored(current_, message);  // -v named the test that was running
  } else {
    Errored("panic", message);   // outside any test the output named
  }
}

void GoTestReader::TimeoutLine(std::string_view line) {
  // Go 1.20+: "running tests:" then "\tTestX (10m0s)" per test still running; a blank line ends it.
  std::string_view t = TrimSpace(line);
  if (t == "running tests:") return;
  size_t open = t.rfind(" (");
  if (Indent(line) > 0 && t.ends_with(')') && open != std::string_view::npos) {
    std::optional<size_t> first = panicked_;
    Errored(t.substr(0, open), timeout_);
    if (first) panicked_ = first;  // the dump goes to the first test listed
    return;
  }
  if (!panicked_) {
    // Older Go lists nothing: the running test is the one -v named last, if any.
    Errored(!current_.empty() && !index_.contains(current_) ? std::string_view(current_) : "timeout", timeout_);
  }
  timeout_.clear();
}

void GoTestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view t = TrimSpace(line);
  if (!timeout_.empty()) return TimeoutLine(line);
  if (line.starts_with("=== ")) {
    // "=== RUN   TestX": the lines that follow (under -v) are TestX's until another === line.
    for (std::string_view verb : {"RUN", "PAUSE", "CONT", "NAME"}) {
      if (line.substr(4).starts_with(verb)) current_ = std::string(TrimSpace(line.substr(4 + verb.size())));
    }
    in_run_ = true;
    complete_ = false;
    after_.reset();
    return;
  }
  if (ResultLine(line)) return;
  if (line.starts_with("panic: test timed out after ")) {
    timeout_ = "Timeout: " + std::string(t.substr(7));
    panicked_.reset();
    in_run_ = true;
    return;
  }
  if (line.starts_with("panic: ") && in_run_ && !panicked_) return Panic(t);
  if (line == "PASS" || line == "FAIL") {
    complete_ = true;  // the test binary's verdict; the go command's package line may follow
    in_run_ = false;
    return;
  }
  if (line.starts_with("ok  \t") || line.starts_with("FAIL\t")) return PackageLine(t);
  if (in_run_) LogLine(line);
}

void GoTestReader::PackageLine(std::string_view t) {
  // "ok  \tpkg\t0.01s" / "FAIL\tpkg\t0.01s" / "FAIL\tpkg [build failed]": the go command's word on a
  // package. Without -v a passing package names no test; it then stands as one passed case (and one
  // that failed without naming a test, a build failure, as one error), so a run is never "no tests"
  // for want of -v. "[no tests to run]" says the -run pattern matched nothing: no case.
  const size_t named = report_.cases.size() + report_.dropped;
  if (named == package_start_ && t.find("[no tests to run]") == std::string_view::npos) {
    std::string_view rest = TrimSpace(t.substr(t.find('\t')));
    TestCase c = NamedCase(rest.substr(0, rest.find_first_of(" \t")));
    if (t.starts_with("FAIL")) {
      c.end = TestEnd::kError;
      c.message = std::string(t);
    }
    Add(std::move(c));
  }
  package_start_ = report_.cases.size() + report_.dropped;
  report_.summary = std::string(t);
  complete_ = true;
  in_run_ = false;
  current_.clear();
  pending_.clear();
  after_.reset();
  panicked_.reset();
}

TestReport GoTestReader::Report() const {
  TestReport r = report_;
  r.runner = "go";
  r.complete = complete_;
  r.counts = dropped_counts_;
  for (const TestCase& c : r.cases) CountEnd(&r.counts, c.end);
  return r;
}

}  // namespace gauntlet::classifier
