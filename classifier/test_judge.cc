// Each case is judged by what its runner said about it, and its exception by the same classifier
// as any log: so a refusal in a test (NotImplementedError, cuDNN's no-engine, ...) is unsupported for
// the same reasons a refusal in a script is, and improving those rules improves both.
#include "classifier/test_judge.h"

#include "classifier/normalize.h"
#include "classifier/traceback.h"

namespace gauntlet::classifier {
namespace {

// The file a case's name or output points at: "tests/test_gemm.py::test_x" -> "tests/test_gemm.py";
// else the "test_gemm.py:19: AssertionError" line that ends pytest's traceback; else "" (unknown).
std::string CaseFile(const TestCase& c) {
  size_t p = c.name.find("::");
  if (p != std::string::npos) return c.name.substr(0, p);
  for (size_t at = 0; at < c.detail.size();) {
    size_t end = c.detail.find('\n', at);
    std::string_view line = std::string_view(c.detail).substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? c.detail.size() : end + 1;
    size_t py = line.find(".py:");
    if (py != std::string_view::npos && line.find(' ') > py && line[0] != ' ') return std::string(line.substr(0, py + 3));
  }
  return "";
}

// The test's function name: the last "::" or "." component of its id.
std::string CaseFunction(const std::string& name) {
  size_t p = name.rfind("::");
  if (p != std::string::npos) return name.substr(p + 2);
  p = name.rfind('.');
  return p == std::string::npos ? name : name.substr(p + 1);
}

JudgedCase Named(const TestCase& c) {
  JudgedCase j;
  j.name = c.name;
  j.end = c.end;
  j.seconds = c.seconds;
  return j;
}

JudgedCase JudgeFailure(const TestCase& c, const std::vector<SignatureRule>& rules) {
  JudgedCase j = Named(c);
  // The runner stopped the test at its time limit (CTest's ***Timeout, go test's "test timed out
  // after"): readers write that as an error whose message starts "Timeout" (test_report.h).
  if (c.end == TestEnd::kError && c.message.starts_with("Timeout")) {
    j.verdict = Verdict::kTimeout;
    j.signature = "timeout:test:" + NormalizeMessage(c.message);
    j.evidence = TrimEvidence(c.name + ": " + c.message);
    return j;
  }
  std::string log;
  if (ParseExceptionLine(c.message)) {
    // The case's exception as the final line of a traceback: how every exception reaches the rules.
    // A frame names the test's file, so the signature's "@file" is the test's, as for a script.
    std::string file = CaseFile(c);
    if (file.empty()) file = "test";
    log = "Traceback (most recent call last):\n  File \"" + file + "\", line 1, in " + CaseFunction(c.name) + "\n" +
          c.message + "\n";
  } else if (!c.message.empty()) {
    log = c.message + "\n";
  }
  log += c.detail;
  ExitInfo failed;
  failed.exit_code = 1;  // a failed test is a failed run of that test: the rules read it so
  const Classification k = ClassifyText(log, failed, rules);
  const std::string what = c.message.empty() ? c.name : c.message;
  if (k.verdict == Verdict::kCrashed && k.signature.starts_with("crashed:exit_code:")) {
    // Nothing in the text named a cause: the runner's own word decides.
    j.verdict = c.assertion ? Verdict::kWrongOutput : Verdict::kCrashed;
    j.signature = std::string(c.assertion ? "wrong_output:assertion:" : "crashed:test_failed:") + NormalizeMessage(what);
    j.evidence = TrimEvidence(c.name + ": " + what);
    j.said_nothing = true;
  } else {
    j.verdict = k.verdict;
    j.signature = k.signature;
    j.said_nothing = k.signature == "wrong_output:result_line";  // the case is its result line
    j.evidence = TrimEvidence(c.name + ": " + (k.evidence.empty() ? what : k.evidence));
  }
  return j;
}

JudgedCase JudgeCase(const TestCase& c, const std::vector<SignatureRule>& rules) {
  JudgedCase j = Named(c);
  switch (c.end) {
    case TestEnd::kPassed:
    case TestEnd::kXfailed:  // the suite itself declares this failure expected
    case TestEnd::kXpassed:  // a non-strict expected failure that passed: the test passed (pytest's own outcome)
      return j;
    case TestEnd::kSkipped: {
      j.verdict = Verdict::kUnsupported;
      const std::string reason = NormalizeMessage(c.message);
      j.signature = reason.empty() ? "unsupported:skipped" : "unsupported:skipped:" + reason;
      j.evidence = TrimEvidence(c.name + ": skipped" + (c.message.empty() ? "" : ": " + c.message));
      return j;
    }
    case TestEnd::kFailed:
    case TestEnd::kError:
      return JudgeFailure(c, rules);
  }
  return j;
}

// True if `a` is worse than `b`: the vocabulary's severity, then its cause rank (core/verdict.h).
bool Worse(Verdict a, Verdict b) {
  const VerdictInfo &x = Info(a), &y = Info(b);
  if (x.severity != y.severity) return x.severity > y.severity;
  return x.cause_rank > y.cause_rank;
}

// Cases the counts hold but the output never named: one unnamed case per kind.
void AddUnnamed(const TestReport& r, TestJudgement* j) {
  TestCounts named;
  for (const TestCase& c : r.cases) {
    if (c.end == TestEnd::kSkipped) ++named.skipped;
    if (c.end == TestEnd::kFailed) ++named.failed;
    if (c.end == TestEnd::kError) ++named.errors;
  }
  auto add = [&](int missing, const char* what, Verdict v, const char* sig) {
    if (missing <= 0 || r.dropped > 0) return;  // over the cap the counts cannot be told apart
    JudgedCase u;
    u.name = "(" + std::to_string(missing) + " " + what + " not named in the output)";
    u.end = v == Verdict::kUnsupported ? TestEnd::kSkipped : TestEnd::kFailed;
    u.verdict = v;
    u.signature = sig;
    u.evidence = TrimEvidence(r.runner + ": " + r.summary);
    u.said_nothing = true;
    j->cases.push_back(std::move(u));
  };
  add(r.counts.skipped - named.skipped, "skipped", Verdict::kUnsupported, "unsupported:skipped");
  add(r.counts.failed - named.failed, "failed", Verdict::kCrashed, "crashed:tests_failed");
  add(r.counts.errors - named.errors, "errors", Verdict::kCrashed, "crashed:tests_failed");
}

}  // namespace

namespace {
thread_local int judge_depth = 0;  // JudgeTests calls on this thread's stack
}  // namespace

int TestJudgementDepth() { return judge_depth; }

std::optional<Classification> JudgeFailedCases(const TestReport& r, const std::vector<SignatureRule>& rules) {
  TestReport failing = r;
  std::erase_if(failing.cases, [](const TestCase& c) { return c.end != TestEnd::kFailed && c.end != TestEnd::kError; });
  if (failing.cases.empty()) return std::nullopt;
  failing.counts = {};
  Classification j = JudgeTests(failing, rules).overall;
  if (j.verdict == Verdict::kPassed || j.signature.starts_with("crashed:exit_code:")) return std::nullopt;
  j.basis = Basis::kRunner;
  return j;
}

TestJudgement JudgeTests(const TestReport& r, const std::vector<SignatureRule>& rules) {
  // A case's text is classified like any log, and may hold a report of its own (CTest printing a
  // GoogleTest program's output): judged one level down, never deeper, so a case whose text is its
  // own report (a result line) cannot recurse.
  struct Depth {
    Depth() { ++judge_depth; }
    ~Depth() { --judge_depth; }
  } depth;
  TestJudgement j;
  j.runner = r.runner;
  j.counts = r.counts;
  j.dropped = r.dropped;
  j.complete = r.complete;
  j.summary = r.summary;
  j.cases.reserve(r.cases.size());
  for (const TestCase& c : r.cases) j.cases.push_back(JudgeCase(c, rules));
  AddUnnamed(r, &j);
  if (j.cases.empty() && r.counts.total() == 0) {
    j.overall = {Verdict::kCrashed, "crashed:no_tests",
                 TrimEvidence("the test runner ran no tests" + (r.summary.empty() ? "" : " (" + r.runner + ": " + r.summary + ")"))};
    return j;
  }
  const JudgedCase* worst = nullptr;
  for (const JudgedCase& c : j.cases)
    if (c.verdict != Verdict::kPassed && (!worst || Worse(c.verdict, worst->verdict))) worst = &c;
  if (worst) {
    j.overall = {worst->verdict, worst->signature, worst->evidence};
    j.overall_said_nothing = worst->said_nothing;
  }
  return j;
}

nlohmann::json ToJson(const TestJudgement& j) {
  nlohmann::json counts = nlohmann::json::object(), cases = nlohmann::json::array();
  for (const JudgedCase& c : j.cases) {
    const std::string v(Name(c.verdict));
    counts[v] = counts.value(v, 0) + 1;
    nlohmann::json e = {{"name", c.name}, {"outcome", EndName(c.end)}, {"verdict", v}};
    if (!c.signature.empty()) e["signature"] = c.signature;
    if (!c.evidence.empty()) e["evidence"] = c.evidence;
    if (c.seconds >= 0) e["seconds"] = c.seconds;
    cases.push_back(std::move(e));
  }
  return {{"runner", j.runner}, {"complete", j.complete}, {"summary", j.summary}, {"counts", counts},
          {"runner_counts", {{"passed", j.counts.passed}, {"failed", j.counts.failed}, {"errors", j.counts.errors},
                             {"skipped", j.counts.skipped}, {"xfailed", j.counts.xfailed}, {"xpassed", j.counts.xpassed}}},
          {"total", j.counts.total()}, {"dropped", j.dropped}, {"cases", cases}};
}

}  // namespace gauntlet::classifier
