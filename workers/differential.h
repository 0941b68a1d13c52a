// The differential check of one server stage (SUITE_FORMAT.md "Differential validation"): records
// the stage's smoke answers (the reference trial's become what every other config is judged
// against) and compares each answer with the reference trial's answer to the same prompt.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/smoke_reference.h"
#include "openai/smoke_diff.h"
#include "workers/stage.h"

namespace gauntlet::worker {

// A disagreement, ready for the stage's outcome.
struct DiffFailure {
  std::string signature, evidence;
};

// One stage's check; `ctx` is borrowed for its lifetime. Not thread-safe (the stage's thread).
class DifferentialCheck {
 public:
  DifferentialCheck(const TrialContext& ctx, const std::string& stage_name);
  // True when the suite declares a reference on this stage: answers are then asked with top-k
  // logprobs and recorded.
  bool active() const { return ref_.has_value(); }
  int top_k() const { return ref_ ? ref_->top_k : 0; }
  // Records smoke answer `index` and, when this trial is judged against a reference, compares it;
  // returns the disagreement, if any.
  std::optional<DiffFailure> Check(int index, const std::string& prompt, const std::string& text,
                                   const nlohmann::json& logprobs);
  // The fields the stage adds to its report entry: "smoke_answers" and "differential".
  nlohmann::json Summary() const;
  // One line for the trial log saying what the check will do.
  std::string Plan() const;

 private:
  const TrialContext& ctx_;
  std::optional<SmokeReference> ref_;
  std::string role_;    // "reference", "checked" or "unchecked"
  std::string reason_;  // why unchecked
  int64_t ref_trial_ = 0;
  double tolerance_ = 0;
  std::string tolerance_basis_;  // ToleranceChoice::basis: the suite's, or which default
  const nlohmann::json* ref_answers_ = nullptr;  // into ctx_.reference
  nlohmann::json answers_ = nlohmann::json::array();
  int checked_ = 0;
  std::vector<int> excused_at_;  // per checked prompt: where it diverged between top-k, -1 never
};

}  // namespace gauntlet::worker
