// pytest's console report, read by the shapes pytest itself prints (src/_pytest/terminal.py): a
// section is a line of '=' around its title, a test inside FAILURES/ERRORS a line of '_' around its
// name, its exception the `E   ` lines and the `path:line: Type` line that ends it.
#include "classifier/pytest_report.h"

#include <cctype>
#include <charconv>

#include "classifier/normalize.h"
#include "classifier/traceback.h"

namespace gauntlet::classifier {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "==== title ====" -> "title"; "" when the line is not a border line.
std::string_view BorderTitle(std::string_view line, char border) {
  if (line.size() < 5 || line.front() != border || line.back() != border) return {};
  size_t a = line.find_first_not_of(border), b = line.find_last_not_of(border);
  if (a == std::string_view::npos || line[a] != ' ' || line[b] != ' ') return {};
  return TrimSpace(line.substr(a, b - a + 1));
}

// "test_kernels.py:19: AssertionError": the line that ends a test's traceback in pytest's long form.
std::string_view LocationType(std::string_view line) {
  size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0 || line[0] == ' ') return {};
  std::string_view where = line.substr(0, colon), type = line.substr(colon + 2);
  size_t c2 = where.rfind(':');
  if (c2 == std::string_view::npos || c2 + 1 >= where.size()) return {};
  for (char ch : where.substr(c2 + 1))
    if (!std::isdigit(static_cast<unsigned char>(ch))) return {};
  if (type.empty()) return {};
  for (char ch : type)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.') return {};
  return type;
}

// "a/b.py::TestA::test_b[128]" -> "TestA.test_b[128]": how a FAILURES header names that node.
std::string HeaderName(std::string_view node) {
  size_t p = node.find("::");
  if (p == std::string_view::npos) return std::string(node);
  std::string out;
  std::string_view rest = node.substr(p + 2);
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest.compare(i, 2, "::") == 0) {
      out += '.';
      ++i;
    } else {
      out += rest[i];
    }
  }
  return out;
}

}  // namespace

bool ParsePytestCounts(std::string_view line, TestCounts* out) {
  line = TrimSpace(line);
  if (std::string_view t = BorderTitle(line, '='); !t.empty()) line = t;
  // "... in 0.03s" or "... in 75.20s (0:01:15)"
  size_t in = line.rfind(" in ");
  if (in == std::string_view::npos) return false;
  std::string_view time = line.substr(in + 4);
  if (size_t paren = time.find(" ("); paren != std::string_view::npos) time = time.substr(0, paren);
  if (time.size() < 2 || time.back() != 's') return false;
  for (char ch : time.substr(0, time.size() - 1))
    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '.') return false;
  std::string_view items = line.substr(0, in);
  TestCounts c;
  if (items == "no tests ran") {
    *out = c;
    return true;
  }
  bool any = false;
  while (!items.empty()) {
    size_t comma = items.find(", ");
    std::string_view item = items.substr(0, comma);
    items = comma == std::string_view::npos ? std::string_view() : items.substr(comma + 2);
    size_t sp = item.find(' ');
    if (sp == std::string_view::npos) return false;
    int n = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + sp, n);
    if (ec != std::errc() || p != item.data() + sp) return false;
    std::string_view word = item.substr(sp + 1);
    if (word == "passed") c.passed += n;
    else if (word == "xpassed") c.xpassed += n;
    else if (word == "failed") c.failed += n;
    else if (word == "error" || word == "errors") c.errors += n;
    else if (word == "skipped") c.skipped += n;
    else if (word == "xfailed") c.xfailed += n;
    else if (word != "deselected" && word != "warning" && word != "warnings" && word != "rerun" && word != "reruns")
      return false;
    any = true;
  }
  if (!any) return false;
  *out = c;
  return true;
}

TestCase* PytestReader::Case(const std::string& name) {
  if (auto it = index_.find(name); it != index_.end()) return &report_.cases[it->second];
  if (report_.cases.size() >= kMaxCases) {
    ++report_.dropped;
    return nullptr;
  }
  index_.emplace(name, report_.cases.size());
  report_.cases.push_back(NamedCase(CutUtf8(name, kMaxCaseName)));
  full_reason_.push_back(0);
  return &report_.cases.back();
}

void PytestReader::EndBlock() {
  if (block_ && blocks_.size() < kMaxCases) blocks_.push_back(std::move(*block_));
  block_.reset();
}

void PytestReader::Observe(std::string_view raw) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  if (raw.empty()) return;
  // Cheap exits first: the classifier calls this for every line of every log.
  const char c0 = raw.front();
  const bool in_block = section_ == Section::kFailures || section_ == Section::kErrors;
  const bool verbose = raw.size() > 8 && raw.back() == ']' && raw[raw.size() - 2] == '%';
  // The -q form of the final line ("2 failed, 1 passed in 0.03s", "no tests ran in 0.01s"): most log
  // lines that start with a digit (timestamps) end in something else, and are left at once.
  const char cz = raw.back();
  const bool count_start = (std::isdigit(static_cast<unsigned char>(c0)) || c0 == 'n') && (cz == 's' || cz == ')');
  if (!in_block && !verbose && section_ != Section::kSummary && c0 != '=' && c0 != '\x1b' && !count_start) return;
  std::string stripped;
  std::string_view line = raw;
  if (raw.find('\x1b') != std::string_view::npos) line = stripped = StripAnsi(raw);
  if (line.empty()) return;

  if (TestCounts counts; (line.front() == '=' || count_start) && ParsePytestCounts(line, &counts)) {
    EndBlock();
    report_.counts = counts;
    report_.summary = std::string(BorderTitle(line, '=').empty() ? TrimSpace(line) : BorderTitle(line, '='));
    complete_ = counted_ = true;
    section_ = Section::kOther;
    return;
  }
  if (std::string_view title = BorderTitle(line, '='); !title.empty()) {
    EndBlock();
    if (title == "FAILURES") section_ = Section::kFailures;
    else if (title == "ERRORS") section_ = Section::kErrors;
    else if (title == "short test summary info") section_ = Section::kSummary;
    else section_ = Section::kOther;
    return;
  }
  if (verbose && line.find("::") != std::string_view::npos) return VerboseLine(line);
  if (section_ == Section::kSummary) return SummaryLine(line);
  if (section_ != Section::kFailures && section_ != Section::kErrors) return;

  if (std::string_view name = BorderTitle(line, '_'); !name.empty()) {
    EndBlock();
    Block b;
    b.end = section_ == Section::kErrors ? TestEnd::kError : TestEnd::kFailed;
    for (std::string_view p : {"ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "})
      if (StartsWith(name, p)) name.remove_prefix(p.size());
    b.name = std::string(name);
    block_ = std::move(b);
    return;
  }
  if (!block_) return;
  Block& b = *block_;
  if (b.detail.size() < kMaxCaseDetail) b.detail.append(line.substr(0, kMaxCaseDetail - b.detail.size())).push_back('\n');
  if (line.size() > 1 && line[0] == 'E' && line[1] == ' ') {
    std::string_view text = TrimSpace(line.substr(1));
    if (b.exception.empty() && ParseExceptionLine(text)) b.exception = std::string(text);
    else if (b.first_e.empty()) b.first_e = std::string(text);
    return;
  }
  if (std::string_view t = LocationType(line); !t.empty()) {
    b.location_type = std::string(t);
    return;
  }
  // --tb=native / unittest-style tests print a plain traceback: its last exception line is the test's.
  if (b.first_e.empty() && line[0] != ' ' && ParseExceptionLine(line)) b.exception = std::string(line);
}

void PytestReader::SummaryLine(std::string_view line) {
  auto node_and_message = [](std::string_view rest, std::string* node, std::string* msg) {
    size_t dash = rest.find(" - ");
    *node = std::string(TrimSpace(rest.substr(0, dash)));
    *msg = dash == std::string_view::npos ? "" : std::string(TrimSpace(rest.substr(dash + 3)));
  };
  std::string node, msg;
  for (auto [word, end] : {std::pair{"FAILED ", TestEnd::kFailed}, {"ERROR ", TestEnd::kError},
                           {"XFAIL ", TestEnd::kXfailed}, {"XPASS ", TestEnd::kXpassed}, {"PASSED ", TestEnd::kPassed}}) {
    if (!StartsWith(line, word)) continue;
    node_and_message(line.substr(std::string_view(word).size()), &node, &msg);
    if (node.empty()) return;
    if (TestCase* c = Case(node)) {
      c->end = end;
      if (c->message.empty() || c->message.ends_with("...")) c->message = CutUtf8(msg, kMaxCaseMessage);
    }
    return;
  }
  // "SKIPPED [2] tests/test_gemm.py:41: NVFP4 GEMM requires compute capability 10.0"
  if (!StartsWith(line, "SKIPPED [")) return;
  size_t close = line.find("] ");
  if (close == std::string_view::npos) return;
  int n = 1;
  std::from_chars(line.data() + 9, line.data() + close, n);
  std::string_view rest = line.substr(close + 2);
  // The location is "path:line"; the reason follows its ": ".
  size_t sep = rest.find(": ");
  while (sep != std::string_view::npos && (sep == 0 || !std::isdigit(static_cast<unsigned char>(rest[sep - 1]))))
    sep = rest.find(": ", sep + 2);
  const std::string where(rest.substr(0, sep));
  const std::string reason(sep == std::string_view::npos ? "" : TrimSpace(rest.substr(sep + 2)));
  // -v already listed these tests by name, with the reason cut to the terminal's width: give them
  // the whole reason instead of adding them again.
  for (size_t i = 0; i < report_.cases.size() && n > 0; ++i) {
    TestCase& c = report_.cases[i];
    if (c.end != TestEnd::kSkipped || full_reason_[i]) continue;
    std::string_view shown = c.message;
    if (shown.ends_with("...")) shown.remove_suffix(3);
    if (!StartsWith(reason, shown)) continue;
    c.message = CutUtf8(reason, kMaxCaseMessage);
    full_reason_[i] = 1;
    --n;
  }
  if (n <= 0) return;
  std::string name = where + (n > 1 ? " (" + std::to_string(n) + " tests)" : "");
  // Parametrized tests skip at one location for different reasons: each line is a case of its own.
  for (int k = 2; index_.count(name) && k < 1000; ++k) name = where + " #" + std::to_string(k);
  if (TestCase* c = Case(name)) {
    c->end = TestEnd::kSkipped;
    c->message = CutUtf8(reason, kMaxCaseMessage);
    full_reason_[static_cast<size_t>(c - report_.cases.data())] = 1;
  }
}

void PytestReader::VerboseLine(std::string_view line) {
  // "test_kernels.py::test_nvfp4_gemm SKIPPED (NVFP4 GEMM requires comput...) [ 25%]"
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return;
  const std::string node(line.substr(0, sp));
  std::string_view rest = TrimSpace(line.substr(sp + 1, line.rfind('[') - sp - 1));
  std::string_view word = rest.substr(0, rest.find(' '));
  TestEnd end;
  if (word == "PASSED") end = TestEnd::kPassed;
  else if (word == "XPASS") end = TestEnd::kXpassed;
  else if (word == "FAILED") end = TestEnd::kFailed;
  else if (word == "ERROR") end = TestEnd::kError;
  else if (word == "SKIPPED") end = TestEnd::kSkipped;
  else if (word == "XFAIL") end = TestEnd::kXfailed;
  else return;
  TestCase* c = Case(node);
  if (!c) return;
  // A test that passed and then failed its teardown is listed twice: the failure stays.
  if (c->end == TestEnd::kFailed || c->end == TestEnd::kError) {
    if (end != TestEnd::kError) return;
  }
  c->end = end;
  std::string_view why = TrimSpace(rest.substr(word.size()));
  if (why.size() >= 2 && why.front() == '(' && why.back() == ')' && c->message.empty())
    c->message = CutUtf8(why.substr(1, why.size() - 2), kMaxCaseMessage);
}

TestReport PytestReader::Report() const {
  TestReport r = report_;
  r.runner = "pytest";
  r.complete = complete_;
  std::unordered_map<std::string, size_t> by_header;
  for (size_t i = 0; i < r.cases.size(); ++i) by_header.emplace(HeaderName(r.cases[i].name), i);
  std::vector<Block> blocks = blocks_;
  if (block_ && blocks.size() < kMaxCases) blocks.push_back(*block_);
  for (const Block& b : blocks) {
    std::string message = b.exception;
    if (message.empty() && !b.first_e.empty())
      message = b.location_type.empty() ? b.first_e : b.location_type + ": " + b.first_e;
    if (message.empty() && !b.location_type.empty()) message = b.location_type;
    auto it = by_header.find(b.name);
    if (it == by_header.end()) {
      TestCase c = NamedCase(b.name);
      c.end = b.end;
      c.message = message;
      c.detail = b.detail;
      AddCase(&r, std::move(c));
      continue;
    }
    TestCase& c = r.cases[it->second];
    // The block's own E lines are whole; the short summary cuts its message to the terminal's width.
    if (!message.empty()) c.message = CutUtf8(message, kMaxCaseMessage);
    c.detail = CutUtf8(b.detail, kMaxCaseDetail);
    if (c.end == TestEnd::kPassed) c.end = b.end;
  }
  if (!counted_) {
    TestCounts n;
    for (const TestCase& c : r.cases) {
      CountEnd(&n, c.end);
    }
    r.counts = n;
  }
  return r;
}

}  // namespace gauntlet::classifier

namespace gauntlet::classifier {

bool IsPassOrSkipOutcomeLine(std::string_view line) {
  // The short summary (-r) names a test and how it ended; its reason repeats the skip or xfail
  // marker's words ("XFAIL test_x - requires sm_100"), which are the suite's own expectation.
  for (std::string_view w : {"XFAIL ", "XPASS ", "PASSED ", "SKIPPED "})
    if (line.starts_with(w)) return true;
  // -v: "path::test XFAIL (reason) [ 50%]"; GoogleTest's "[  SKIPPED ] Suite.Test (0 ms)".
  if (line.starts_with("[  SKIPPED ]") || line.starts_with("[       OK ]")) return true;
  const size_t sep = line.find("::");
  if (sep == std::string_view::npos) return false;
  const size_t sp = line.find(' ', sep);
  if (sp == std::string_view::npos) return false;
  std::string_view rest = line.substr(sp + 1);
  for (std::string_view w : {"XFAIL", "XPASS", "PASSED", "SKIPPED"})
    if (rest.starts_with(w) && (rest.size() == w.size() || rest[w.size()] == ' ')) return true;
  return false;
}

}  // namespace gauntlet::classifier
