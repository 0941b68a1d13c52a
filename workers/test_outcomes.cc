#include "workers/test_outcomes.h"

#include <optional>

#include "classifier/test_judge.h"
#include "workers/junit_file.h"

namespace gauntlet::worker {
using classifier::JudgedCase;
using classifier::TestJudgement;
using nlohmann::json;

namespace {

constexpr size_t kLoggedCases = 50;  // non-passing cases written to the trial log, one line each

// "1 passed, 1 unsupported, 2 wrong_output" in the vocabulary's order.
std::string VerdictCounts(const TestJudgement& j) {
  std::string out;
  for (const VerdictInfo& v : Verdicts()) {
    int n = 0;
    for (const JudgedCase& c : j.cases) n += c.verdict == v.verdict;
    if (n) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(v.name);
  }
  return out.empty() ? "no test cases" : out;
}

void LogTests(LogSink& log, const std::string& stage, const TestJudgement& j) {
  std::string text = "=== stage " + stage + " tests (" + j.runner + (j.complete ? "" : ", cut short") + "): " +
                     VerdictCounts(j) + (j.summary.empty() ? "" : " [" + j.summary + "]") + "\n";
  size_t shown = 0, hidden = 0;
  for (const JudgedCase& c : j.cases) {
    if (c.verdict == Verdict::kPassed) continue;
    if (shown++ >= kLoggedCases) {
      ++hidden;
      continue;
    }
    text += "  " + std::string(Name(c.verdict)) + "  " + c.name + "  " + c.signature + "\n";
  }
  if (hidden) text += "  ... and " + std::to_string(hidden) + " more (GET /api/v1/trials/ID lists them)\n";
  log.Append(text);
}

}  // namespace

std::string StableCaseName(const std::string& name, const std::string& suite_dir) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at < suite_dir.size()) {
    const size_t slash = suite_dir.find('/', at);
    const std::string part = suite_dir.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  for (size_t k = parts.size(); k > 0; --k)
    for (const char sep : {'.', '/'}) {
      std::string prefix;
      for (size_t i = parts.size() - k; i < parts.size(); ++i) prefix += parts[i] + sep;
      if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) return name.substr(prefix.size());
    }
  return name;
}

void SettleTests(const TrialContext& ctx, const json& stage, const std::map<std::string, std::string>& vars,
                 const classifier::Classifier& classifier, const std::vector<SignatureRule>& rules,
                 const TestStageEnd& end, StageOutcome* out) {
  const bool settled = end.stopped || end.timed_out;  // the limit or a stop decided; cases only listed
  std::optional<TestJudgement> j;
  const bool from_file = stage.contains("junit") && stage["junit"].is_string() && !settled;
  if (from_file) {
    std::string path = Substitute(stage["junit"].get<std::string>(), vars);
    if (!path.starts_with("/")) path = ctx.workdir + "/" + path;  // relative: in the trial's workdir
    auto report = ReadJUnitFile(path, ctx.user ? std::optional<uid_t>(ctx.user->uid) : std::nullopt);
    if (!report.ok()) {
      // The stage promised a report and there is none to trust: whatever the exit status, no pass.
      const bool failed = out->verdict != Verdict::kPassed;
      out->evidence = report.status().message() + (failed && !out->evidence.empty() ? "; " + out->evidence : "");
      if (!failed) {
        out->verdict = Verdict::kCrashed;
        out->signature = "crashed:junit_unreadable";
        out->basis = Basis::kWorker;
      }
      ctx.log->Append("gauntlet: " + report.status().message() + "\n");
      return;
    }
    j = classifier::JudgeTests(*report, rules);
  } else if (std::optional<classifier::TestReport> t = classifier.Tests()) {
    j = classifier::JudgeTests(*t, rules);
  }
  if (!j) return;
  // The classifier already judged a console report (after the suite's rules, which win); a JUnit
  // file decides here.
  if (from_file && !settled && j->overall.verdict != Verdict::kPassed) {
    out->verdict = j->overall.verdict;
    out->signature = j->overall.signature;
    out->evidence = j->overall.evidence;
    out->basis = Basis::kRunner;
  }
  json summary = ToJson(*j);
  const json cases = std::move(summary["cases"]);
  summary.erase("cases");
  out->summary["tests"] = std::move(summary);
  for (const json& c : cases) {
    if (out->tests.size() >= kMaxReportedTestCases) break;
    out->tests.push_back(c);
    if (c.contains("name") && c["name"].is_string() && !ctx.suite_dir.empty())
      out->tests.back()["name"] = StableCaseName(c["name"].get<std::string>(), ctx.suite_dir);
  }
  out->tests_not_sent = j->dropped + (cases.size() - std::min(cases.size(), out->tests.size()));
  LogTests(*ctx.log, out->stage, *j);
}

}  // namespace gauntlet::worker
