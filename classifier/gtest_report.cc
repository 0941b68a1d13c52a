// GoogleTest's console report, read by the shapes gtest itself prints (src/gtest.cc
// PrettyUnitTestResultPrinter): a tag of 12 characters in brackets, then the test's name.
#include "classifier/gtest_report.h"

#include <cctype>
#include <charconv>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

// "file.cc:12: Failure" / "unknown file: Failure" -> true (and the same for ": Skipped").
bool IsHeader(std::string_view line, std::string_view what) {
  return line.size() > what.size() + 2 && line.ends_with(what) && line[line.size() - what.size() - 1] == ' ' &&
         line[line.size() - what.size() - 2] == ':';
}

// "Suite.Test (12 ms)" / "Tiles/P.Tile/1, where GetParam() = 256 (0 ms)" -> name and seconds.
std::string_view NameAndTime(std::string_view rest, double* seconds) {
  *seconds = -1;
  if (rest.ends_with(" ms)")) {
    size_t open = rest.rfind(" (");
    if (open != std::string_view::npos) {
      long ms = 0;
      auto [p, ec] = std::from_chars(rest.data() + open + 2, rest.data() + rest.size() - 4, ms);
      if (ec == std::errc() && p == rest.data() + rest.size() - 4) *seconds = static_cast<double>(ms) / 1000.0;
      rest = rest.substr(0, open);
    }
  }
  return rest.substr(0, rest.find(", where "));
}

}  // namespace

void GtestReader::End(TestEnd end, std::string_view rest) {
  double seconds = -1;
  std::string_view name = NameAndTime(rest, &seconds);
  TestCase c = running_ && running_->name == name ? std::move(*running_) : NamedCase(name);
  running_.reset();
  in_skip_ = in_failure_ = false;
  c.end = end;
  c.seconds = seconds;
  // A test whose failure is an exception it threw is an error, not a failed assertion.
  if (end == TestEnd::kFailed && c.message.starts_with("C++ exception")) c.end = TestEnd::kError;
  c.assertion = c.end == TestEnd::kFailed;
  CountEnd(&report_.counts, c.end);
  AddCase(&report_, std::move(c));
}

void GtestReader::Observe(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() >= 13 && line[0] == '[' && line[11] == ']' && line[12] == ' ') {
    std::string_view tag = line.substr(0, 12), rest = TrimSpace(line.substr(13));
    if (tag == "[==========]") {
      // "[==========] 3 tests from 2 test suites ran. (0 ms total)"; what follows is the summary.
      if (rest.find(" ran.") != std::string_view::npos) {
        complete_ = true;
        report_.summary = std::string(rest.substr(0, rest.find(" ran.") + 5));
      }
      return;
    }
    if (complete_) return;  // the summary lists failed and skipped tests again
    if (tag == "[ RUN      ]") {
      if (running_) End(TestEnd::kError, running_->name);  // cannot happen in one process; stay bounded
      running_ = NamedCase(rest);
      in_skip_ = in_failure_ = false;
    } else if (tag == "[       OK ]") {
      End(TestEnd::kPassed, rest);
    } else if (tag == "[  FAILED  ]") {
      End(TestEnd::kFailed, rest);
    } else if (tag == "[  SKIPPED ]") {
      End(TestEnd::kSkipped, rest);
    }
    return;
  }
  if (!running_) return;
  TestCase& c = *running_;
  if (IsHeader(line, "Skipped")) {
    in_skip_ = true;
    in_failure_ = false;
    return;
  }
  if (IsHeader(line, "Failure")) {
    in_failure_ = true;
    in_skip_ = false;
    return;
  }
  std::string_view t = TrimSpace(line);
  if (t.empty()) return;
  // The reason of a skip, the first line of a failure's message; the rest is detail.
  if ((in_skip_ || in_failure_) && c.message.empty()) {
    c.message = CutUtf8(t, kMaxCaseMessage);
    return;
  }
  if (c.detail.size() < kMaxCaseDetail) c.detail.append(line.substr(0, kMaxCaseDetail - c.detail.size())).push_back('\n');
}

TestReport GtestReader::Report() const {
  TestReport r = report_;
  r.runner = "gtest";
  r.complete = complete_;
  if (running_) {
    TestCase c = *running_;
    c.end = TestEnd::kError;
    if (c.message.empty()) c.message = "the test did not finish (the output ended while it ran)";
    ++r.counts.errors;
    AddCase(&r, std::move(c));
  }
  return r;
}

}  // namespace gauntlet::classifier
