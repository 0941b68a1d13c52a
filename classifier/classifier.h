// Failure classifier: turns a stage's log plus how the process ended into a verdict, a stable
// signature and one evidence line. Rules and signature keys: docs/CLASSIFIER.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "classifier/test_report.h"
#include "core/basis.h"
#include "core/signature_rule.h"
#include "core/verdict.h"

namespace gauntlet::classifier {

// How the stage's process ended. All empty means "unknown": the log alone decides.
struct ExitInfo {
  std::optional<int> exit_code;
  std::optional<int> signal;  // signal number (SIGSEGV = 11)
  bool timed_out = false;
  bool cancelled = false;
};

// verdict is kPassed (signature and evidence empty) when nothing failed. `rank` names the writer
// whose failure decided ("rank1" for torchrun's "[rank1]:" and torch.multiprocessing's process 1,
// "tp3", "enginecore_dp0", ...; docs/CLASSIFIER.md "Ranks"), empty when none is known.
// `basis` says what the verdict was judged from (core/basis.h); a failure whose basis is the exit
// status alone is unclassified, and its evidence is the line the classifier would have used (the
// last non-blank line).
struct Classification {
  Verdict verdict = Verdict::kPassed;
  std::string signature;
  std::string evidence;
  std::string rank = {};
  Basis basis = Basis::kExitStatus;
};

// Streaming classifier. Feed the log in chunks of any size; memory stays bounded (lines are capped
// at 64 KiB, per-rank state is a few strings). The result does not depend on how the log was
// chunked. Not thread-safe; Finish may be called several times (e.g. with different ExitInfo).
class Classifier {
 public:
  explicit Classifier(std::vector<SignatureRule> suite_rules = {});
  ~Classifier();
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  void Feed(std::string_view chunk);
  Classification Finish(const ExitInfo& exit) const;
  // What a test runner in the log reported about its cases (pytest's or GoogleTest's console
  // report; docs/CLASSIFIER.md "Test runners"): a finished report, else the cases of one cut short,
  // else nullopt. Judge it with JudgeTests (test_judge.h). Const; callable with Finish.
  std::optional<TestReport> Tests() const;

  struct State;  // defined in classifier.cc

 private:
  std::unique_ptr<State> state_;
};

// One-shot helpers over Classifier.
Classification ClassifyText(std::string_view log, const ExitInfo& exit,
                            const std::vector<SignatureRule>& rules = {});
// Reads the file in 1 MiB chunks; throws std::runtime_error if it cannot be opened or read.
Classification ClassifyFile(const std::string& path, const ExitInfo& exit,
                            const std::vector<SignatureRule>& rules = {});

// Serialises as {"verdict", "signature", "evidence", "basis"} plus "rank" when one is known and
// "unclassified": true for a failure judged from the exit status alone (what `gauntlet classify` prints).
nlohmann::json ToJson(const Classification& c);

}  // namespace gauntlet::classifier
