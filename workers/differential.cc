#include "workers/differential.h"

namespace gauntlet::worker {
using openai::AnswerFromJson;
using openai::AnswerJson;
using openai::CompareAnswers;
using openai::DiffResult;
using openai::SmokeAnswer;
using openai::StepsFromLogprobs;
using nlohmann::json;

namespace {

std::string ConfigText(const json& c) {
  std::string out;
  if (!c.is_object()) return out;
  for (auto& [k, v] : c.items()) out += (out.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

std::string Printable(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

}  // namespace

DifferentialCheck::DifferentialCheck(const TrialContext& ctx, const std::string& stage_name) : ctx_(ctx) {
  auto r = SuiteSmokeReference(ctx.suite);
  if (!r || r->stage != stage_name) return;
  ref_ = std::move(*r);
  const ToleranceChoice tol = ChooseTolerance(*ref_, ctx.config);
  tolerance_ = tol.value;
  tolerance_basis_ = tol.basis;
  if (IsReferenceConfig(*ref_, ctx.config)) {
    role_ = "reference";
    return;
  }
  role_ = "unchecked";
  const json& g = ctx.reference;
  if (!g.is_object()) {
    reason_ = "the daemon sent no reference";
    return;
  }
  ref_trial_ = g.value("trial", int64_t{0});
  if (g.contains("missing") && g["missing"].is_string()) {
    reason_ = g["missing"];
  } else if (g.value("verdict", "") != "passed") {
    reason_ = "the reference trial " + std::to_string(ref_trial_) + " ended " + g.value("verdict", "without a verdict") +
              ", so there is nothing to compare with";
  } else if (!g.contains("smoke_answers") || !g["smoke_answers"].is_array()) {
    reason_ = "the reference trial " + std::to_string(ref_trial_) + " recorded no smoke answers";
  } else {
    role_ = "checked";
    ref_answers_ = &g["smoke_answers"];
  }
}

std::string DifferentialCheck::Plan() const {
  if (!ref_) return "";
  char tol[32];
  std::snprintf(tol, sizeof tol, "%g", tolerance_);
  if (role_ == "reference") return "gauntlet: differential check: this config is the reference; its answers are recorded";
  if (role_ == "checked")
    return "gauntlet: differential check: against reference trial " + std::to_string(ref_trial_) + " (" +
           ConfigText(ctx_.reference.value("config", json::object())) + "), top-" + std::to_string(ref_->top_k) +
           ", logprob tolerance " + tol + " (" + tolerance_basis_ + ")";
  return "gauntlet: differential check skipped: " + reason_;
}

std::optional<DiffFailure> DifferentialCheck::Check(int index, const std::string& prompt, const std::string& text,
                                                    const json& logprobs) {
  if (!ref_) return std::nullopt;
  SmokeAnswer mine{text, StepsFromLogprobs(logprobs)};
  json rec = AnswerJson(mine);
  rec["prompt"] = prompt.substr(0, 200);
  answers_.push_back(std::move(rec));
  if (role_ != "checked") return std::nullopt;
  const std::string what = "smoke[" + std::to_string(index) + "]";
  std::optional<SmokeAnswer> theirs;
  if (index < static_cast<int>(ref_answers_->size())) theirs = AnswerFromJson((*ref_answers_)[index]);
  if (!theirs || (*ref_answers_)[index].value("prompt", prompt.substr(0, 200)) != prompt.substr(0, 200)) {
    excused_at_.push_back(-1);  // the reference has no answer to this prompt: nothing to hold it to
    return std::nullopt;
  }
  DiffResult d = CompareAnswers(*theirs, mine, tolerance_);
  ++checked_;
  excused_at_.push_back(d.excused ? d.position : -1);
  if (d.agree) return std::nullopt;
  DiffFailure f;
  f.signature = "wrong_output:differential:" + d.kind;
  f.evidence = what + " disagrees with the reference (trial " + std::to_string(ref_trial_) + ", " +
               ConfigText(ctx_.reference.value("config", json::object())) + ") from token " +
               std::to_string(d.position) + ": reference continues \"" + Printable(d.reference_continuation) +
               "\", this config \"" + Printable(d.candidate_continuation) + "\"; " + d.reason;
  f.evidence = f.evidence.substr(0, 1000);
  return f;
}

json DifferentialCheck::Summary() const {
  if (!ref_) return json::object();
  json d = {{"role", role_}, {"tolerance", tolerance_}, {"tolerance_basis", tolerance_basis_}, {"top_k", ref_->top_k}};
  if (ref_trial_) d["reference_trial"] = ref_trial_;
  if (!reason_.empty()) d["reason"] = reason_;
  if (role_ == "checked") {
    d["checked"] = checked_;
    d["excused_at"] = excused_at_;
  }
  return {{"differential", d}, {"smoke_answers", answers_}};
}

}  // namespace gauntlet::worker
