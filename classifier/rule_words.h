// What the built-in rules (builtin_rules.cc, check_rules.cc) share to read a candidate line: substring
// tests, the advisory check, the hit builder and the small extractors. Pure; thread-safe.
#pragma once

#include <array>
#include <cctype>
#include <string>
#include <string_view>

#include "classifier/builtin_rules.h"
#include "classifier/normalize.h"

namespace gauntlet::classifier::rule_words {

inline bool Has(std::string_view lower, std::string_view needle) { return lower.find(needle) != std::string_view::npos; }

template <size_t N>
inline bool HasAny(std::string_view lower, const std::array<std::string_view, N>& needles) {
  for (auto n : needles)
    if (Has(lower, n)) return true;
  return false;
}

// Words that turn a refusal into a notice: the program carries on another way.
inline constexpr std::array<std::string_view, 9> kFallbackWords = {
    "fall back", "falling back", "fallback", "skip", "instead", "will use", "defaulting to",
    "will be disabled", "is disabled"};

inline bool MentionsFallback(std::string_view lower) { return HasAny(lower, kFallbackWords); }

// A notice rather than a refusal: logged below ERROR, or says how it carries on.
// Several rules may ask about one line: computed once per line.
inline bool IsAdvisory(const LineContext& c) {
  if (c.advisory >= 0) return c.advisory != 0;
  const LogLevel l = c.parsed->level;
  static constexpr std::array<std::string_view, 5> kMore = {"warn", "disabl", ", using", "ignor", "not recommended"};
  const bool advisory = l == LogLevel::kInfo || l == LogLevel::kDebug || l == LogLevel::kWarning ||
                        MentionsFallback(c.lower) || HasAny(c.lower, kMore);
  c.advisory = advisory ? 1 : 0;
  return advisory;
}

inline RuleHit Hit(std::string_view rule, Verdict verdict, std::string key, Tier tier = Tier::kSpecific,
            bool keyed = true, bool strong = false) {
  RuleHit h;
  h.rule = rule;
  h.verdict = verdict;
  h.key = std::move(key);
  h.tier = tier;
  h.keyed = keyed;
  h.strong = strong;
  return h;
}

// The text in single quotes after `marker`, e.g. Value 'sm_120a' -> "sm_120a".
inline std::string QuotedAfter(std::string_view raw, std::string_view lower, std::string_view marker) {
  size_t at = lower.find(marker);
  if (at == std::string_view::npos) return "";
  size_t open = raw.find('\'', at + marker.size());
  if (open == std::string_view::npos || open > at + marker.size() + 4) return "";
  size_t close = raw.find('\'', open + 1);
  if (close == std::string_view::npos || close - open > 40) return "";
  return SanitizeUtf8(raw.substr(open + 1, close - open - 1));
}

// "out of resource: tensor memory, Required: ..." -> "tensor_memory" (lowercase, '_' for spaces).
inline std::string ResourceName(std::string_view raw, std::string_view lower) {
  size_t at = lower.find("out of resource:");
  if (at == std::string_view::npos) return "";
  std::string_view rest = TrimSpace(raw.substr(at + 16));
  std::string out;
  for (char ch : rest.substr(0, 40)) {
    if (ch == ',' || ch == '.' || ch == ';') break;
    out.push_back(ch == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  }
  return SanitizeUtf8(out);
}

// Normalised message for plain-line signatures; the prefix-free message reads best.
inline std::string Norm(const LineContext& c, size_t max_len = 120) { return NormalizeMessage(TrimSpace(c.parsed->message), max_len); }

inline bool IsException(const LineContext& c, std::string_view type) { return c.exc && c.exc->type == type; }


}  // namespace gauntlet::classifier::rule_words
