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
