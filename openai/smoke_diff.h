// Differential validation of smoke answers (SUITE_FORMAT.md "Differential validation"): one
// config's greedy answer compared with the reference config's, position by position, the way
// serious correctness tests compare two backends: where the tokens agree their logprobs must be
// within a tolerance; where they first differ, each side's token must be among the other's top-k
// (two near-tied candidates, either a right answer), and the comparison stops there, since what
// follows depends on the token chosen. Contract: pure functions, thread-safe.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gauntlet::openai {

// One generated position: the token chosen, its logprob, and the top alternatives (best first).
struct TokenStep {
  std::string token;
  double logprob = 0;
  std::vector<std::pair<std::string, double>> top;
};

// A smoke answer as recorded: its text and, when the server returned logprobs, its positions.
struct SmokeAnswer {
  std::string text;
  std::vector<TokenStep> steps;
};

// The positions of an OpenAI answer's `logprobs`, in either form: completions
// ({"tokens", "token_logprobs", "top_logprobs": [{tok: lp}]}) or chat ({"content": [{"token",
// "logprob", "top_logprobs": [{"token", "logprob"}]}]}). Empty when `lp` has neither shape; a
// position whose logprob is not a number is dropped from `top` and read as -inf.
std::vector<TokenStep> StepsFromLogprobs(const nlohmann::json& lp);

// The stored form ({"text", "tokens", "logprobs", "top": [[[tok, lp], ...], ...]}) and back; at most
// `max_steps` positions are kept. AnswerFromJson returns nullopt for anything but that shape.
nlohmann::json AnswerJson(const SmokeAnswer& a, size_t max_steps = 256);
std::optional<SmokeAnswer> AnswerFromJson(const nlohmann::json& j);

// How a candidate compared with the reference. A plain value.
struct DiffResult {
  bool agree = true;
  int compared = 0;       // positions checked
  int position = -1;      // the first position that differed (an excused divergence or the fault)
  bool excused = false;   // agree, but diverged at `position` between top-k alternatives
  std::string kind;       // on disagreement: "token" or "logprob" (or "text" without logprobs)
  std::string reason;     // on disagreement: what differed, for people
  std::string reference_continuation, candidate_continuation;  // from `position` on
};

// Compares `cand` with `ref`; `tolerance` bounds |Δ logprob| where tokens agree. Without positions
// on either side the texts are compared exactly.
DiffResult CompareAnswers(const SmokeAnswer& ref, const SmokeAnswer& cand, double tolerance);

}  // namespace gauntlet::openai
