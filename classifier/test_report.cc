#include "classifier/test_report.h"

namespace gauntlet::classifier {

std::string CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  // Back off over continuation bytes so a multi-byte character is never split.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

TestCase NamedCase(std::string_view name) {
  TestCase c;
  c.name = std::string(name);
  return c;
}

void AddCase(TestReport* r, TestCase c) {
  if (r->cases.size() >= kMaxCases) {
    ++r->dropped;
    return;
  }
  c.name = CutUtf8(c.name, kMaxCaseName);
  c.message = CutUtf8(c.message, kMaxCaseMessage);
  c.detail = CutUtf8(c.detail, kMaxCaseDetail);
  r->cases.push_back(std::move(c));
}

void AppendDetailLine(std::string* detail, std::string_view line) {
  if (detail->size() < kMaxCaseDetail) detail->append(line.substr(0, kMaxCaseDetail - detail->size())).push_back('\n');
}

void CountEnd(TestCounts* n, TestEnd e) {
  switch (e) {
    case TestEnd::kPassed: ++n->passed; break;
    case TestEnd::kSkipped: ++n->skipped; break;
    case TestEnd::kXfailed: ++n->xfailed; break;
    case TestEnd::kXpassed: ++n->xpassed; break;
    case TestEnd::kFailed: ++n->failed; break;
    case TestEnd::kError: ++n->errors; break;
  }
}

void AddCounts(TestCounts* to, const TestCounts& n) {
  to->passed += n.passed;
  to->failed += n.failed;
  to->errors += n.errors;
  to->skipped += n.skipped;
  to->xfailed += n.xfailed;
  to->xpassed += n.xpassed;
}

std::string_view EndName(TestEnd e) {
  switch (e) {
    case TestEnd::kPassed: return "passed";
    case TestEnd::kSkipped: return "skipped";
    case TestEnd::kXfailed: return "xfailed";
    case TestEnd::kXpassed: return "xpassed";
    case TestEnd::kFailed: return "failed";
    case TestEnd::kError: return "error";
  }
  return "passed";
}

}  // namespace gauntlet::classifier
