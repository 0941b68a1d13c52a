// A command stage's test cases (docs/SUITE_FORMAT.md "Test-runner results"): the JUnit file the
// stage names, else the test runner's console report the classifier read, judged case by case
// (classifier/test_judge.h) into the stage's verdict, its summary and the report's per-test list.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "classifier/classifier.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// Cases a worker sends per trial (the daemon stores at most as many; docs/API.md "Trial").
inline constexpr size_t kMaxReportedTestCases = 500;

// How the stage's process ended, as far as its tests care.
struct TestStageEnd {
  bool timed_out = false, stopped = false;
};

// A test case's name without the suite folder it ran from, so a test keeps its name across suite
// versions (a pushed suite runs from bundles/<its hash>/): the longest tail of `suite_dir`'s path,
// dotted ("bundles.53eac84c.test_kernels.test_tol", pytest's JUnit classname) or as a path
// ("bundles/53eac84c/test_kernels.py::test_tol", pytest's node id), is cut from its front. Pure.
std::string StableCaseName(const std::string& name, const std::string& suite_dir);

// Reads the stage's tests and settles *out with them: a named `junit` file that is missing or
// broken fails the stage (never a pass), naming the file; a report whose worst case did not pass
// gives the stage that case's verdict, signature and evidence; when every case passed the
// classifier's verdict (already in *out) stands. Fills out->tests (one entry per case, at most
// kMaxReportedTestCases) and out->summary["tests"] (the counts), and writes a summary to the log.
// A stopped or timed-out stage keeps its verdict; its cases so far are still listed. Blocks on the
// file read only; safe from several trials' threads.
void SettleTests(const TrialContext& ctx, const nlohmann::json& stage, const std::map<std::string, std::string>& vars,
                 const classifier::Classifier& classifier, const std::vector<SignatureRule>& rules,
                 const TestStageEnd& end, StageOutcome* out);

}  // namespace gauntlet::worker
