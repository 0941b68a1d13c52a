#include "openai/smoke_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gauntlet::openai {
using nlohmann::json;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double Num(const json& v) { return v.is_number() ? v.get<double>() : kNegInf; }

std::vector<TokenStep> CompletionSteps(const json& lp) {
  std::vector<TokenStep> out;
  const json& toks = lp["tokens"];
  const json empty = json::array();
  const json& lps = lp.contains("token_logprobs") && lp["token_logprobs"].is_array() ? lp["token_logprobs"] : empty;
  const json& tops = lp.contains("top_logprobs") && lp["top_logprobs"].is_array() ? lp["top_logprobs"] : empty;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!toks[i].is_string()) break;
    TokenStep s;
    s.token = toks[i];
    s.logprob = i < lps.size() ? Num(lps[i]) : kNegInf;
    if (i < tops.size() && tops[i].is_object())
      for (auto& [t, v] : tops[i].items())
        if (v.is_number()) s.top.emplace_back(t, v.get<double>());
    // A dict's order is not the rank: sort best first.
    std::stable_sort(s.top.begin(), s.top.end(), [](auto& a, auto& b) { return a.second > b.second; });
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<TokenStep> ChatSteps(const json& content) {
  std::vector<TokenStep> out;
  for (auto& c : content) {
    if (!c.is_object() || !c.contains("token") || !c["token"].is_string()) break;
    TokenStep s;
    s.token = c["token"];
    s.logprob = Num(c.value("logprob", json()));
    if (c.contains("top_logprobs") && c["top_logprobs"].is_array())
      for (auto& t : c["top_logprobs"])
        if (t.is_object() && t.contains("token") && t["token"].is_string() && t.contains("logprob") &&
            t["logprob"].is_number())
          s.top.emplace_back(t["token"].get<std::string>(), t["logprob"].get<double>());
    std::stable_sort(s.top.begin(), s.top.end(), [](auto& a, auto& b) { return a.second > b.second; });
    out.push_back(std::move(s));
  }
  return out;
}

bool InTop(const TokenStep& s, const std::string& token) {
  for (auto& [t, lp] : s.top)
    if (t == token) return true;
  return false;
}

std::string Continuation(const std::vector<TokenStep>& steps, size_t from, const std::string& text) {
  if (steps.empty()) return text.substr(std::min(from, text.size()), 120);
  std::string out;
  for (size_t i = from; i < steps.size() && out.size() < 120; ++i) out += steps[i].token;
  return out.substr(0, 120);
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\'') out += "\\'";
    else if (static_cast<unsigned char>(c) < 0x20) out += '?';
    else out += c;
  }
  return out + "'";
}

std::string Fmt(double d) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", d);
  return b;
}

std::string TopList(const TokenStep& s) {
  std::string out;
  for (auto& [t, lp] : s.top) out += (out.empty() ? "" : ", ") + Quote(t) + " " + Fmt(lp);
  return "[" + out + "]";
}

DiffResult CompareTexts(const SmokeAnswer& ref, const SmokeAnswer& cand) {
  DiffResult d;
  size_t i = 0;
  while (i < ref.text.size() && i < cand.text.size() && ref.text[i] == cand.text[i]) ++i;
  d.compared = static_cast<int>(i);
  if (ref.text == cand.text) return d;
  d.agree = false;
  d.kind = "text";
  d.position = static_cast<int>(i);
  d.reason = "the answers differ at byte " + std::to_string(i) + " (no logprobs to excuse it)";
  d.reference_continuation = ref.text.substr(i, 120);
  d.candidate_continuation = cand.text.substr(i, 120);
  return d;
}

}  // namespace

std::vector<TokenStep> StepsFromLogprobs(const json& lp) {
  if (!lp.is_object()) return {};
  if (lp.contains("tokens") && lp["tokens"].is_array()) return CompletionSteps(lp);
  if (lp.contains("content") && lp["content"].is_array()) return ChatSteps(lp["content"]);
  return {};
}

json AnswerJson(const SmokeAnswer& a, size_t max_steps) {
  json toks = json::array(), lps = json::array(), tops = json::array();
  for (size_t i = 0; i < a.steps.size() && i < max_steps; ++i) {
    const TokenStep& s = a.steps[i];
    toks.push_back(s.token);
    lps.push_back(std::isfinite(s.logprob) ? json(s.logprob) : json(nullptr));
    json t = json::array();
    for (auto& [tok, lp] : s.top) t.push_back(json::array({tok, lp}));
    tops.push_back(std::move(t));
  }
  return {{"text", a.text}, {"tokens", toks}, {"logprobs", lps}, {"top", tops}};
}

std::optional<SmokeAnswer> AnswerFromJson(const json& j) {
  if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) return std::nullopt;
  SmokeAnswer a;
  a.text = j["text"];
  const json empty = json::array();
  const json& toks = j.contains("tokens") && j["tokens"].is_array() ? j["tokens"] : empty;
  const json& lps = j.contains("logprobs") && j["logprobs"].is_array() ? j["logprobs"] : empty;
  const json& tops = j.contains("top") && j["top"].is_array() ? j["top"] : empty;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!toks[i].is_string()) return std::nullopt;
    TokenStep s;
    s.token = toks[i];
    s.logprob = i < lps.size() ? Num(lps[i]) : kNegInf;
    if (i < tops.size() && tops[i].is_array())
      for (auto& p : tops[i])
        if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_number())
          s.top.emplace_back(p[0].get<std::string>(), p[1].get<double>());
    a.steps.push_back(std::move(s));
  }
  return a;
}

DiffResult CompareAnswers(const SmokeAnswer& ref, const SmokeAnswer& cand, double tolerance) {
  if (ref.steps.empty() || cand.steps.empty()) return CompareTexts(ref, cand);
  DiffResult d;
  const size_t n = std::min(ref.steps.size(), cand.steps.size());
  for (size_t i = 0; i < n; ++i) {
    const TokenStep& r = ref.steps[i];
    const TokenStep& c = cand.steps[i];
    const std::string at = "token " + std::to_string(i);
    if (r.token == c.token) {
      ++d.compared;
      const double delta = std::fabs(r.logprob - c.logprob);
      // -inf on both sides (an unknown logprob) is no evidence either way; one side only is.
      if (!(delta <= tolerance) && !(std::isinf(r.logprob) && std::isinf(c.logprob))) {
        d.agree = false;
        d.kind = "logprob";
        d.position = static_cast<int>(i);
        d.reason = at + " " + Quote(r.token) + ": logprob " + Fmt(c.logprob) + " against the reference's " +
                   Fmt(r.logprob) + " (|Δ| " + Fmt(delta) + " > tolerance " + Fmt(tolerance) + ")";
        d.reference_continuation = Continuation(ref.steps, i, ref.text);
        d.candidate_continuation = Continuation(cand.steps, i, cand.text);
        return d;
      }
      continue;
    }
    d.position = static_cast<int>(i);
    d.reference_continuation = Continuation(ref.steps, i, ref.text);
    d.candidate_continuation = Continuation(cand.steps, i, cand.text);
    const bool cand_in_ref = InTop(r, c.token), ref_in_cand = InTop(c, r.token);
    if (cand_in_ref && ref_in_cand) {
      d.excused = true;  // near-tied alternatives: both continuations are right answers from here on
      return d;
    }
    d.agree = false;
    d.kind = "token";
    d.reason = at + ": " + Quote(c.token) + " where the reference chose " + Quote(r.token) + "; " +
               (cand_in_ref ? "" : Quote(c.token) + " is not in the reference's top " + TopList(r)) +
               (!cand_in_ref && !ref_in_cand ? " and " : "") +
               (ref_in_cand ? "" : Quote(r.token) + " is not in this config's top " + TopList(c));
    return d;
  }
  return d;
}

}  // namespace gauntlet::openai
