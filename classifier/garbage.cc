#include "classifier/garbage.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

namespace gauntlet::classifier {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes UTF-8; invalid bytes become U+FFFD (they are garbage for a reader too).
std::vector<char32_t> Decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = true;
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}

bool IsSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0xA0 ||
         c == 0x3000 || (c >= 0x2000 && c <= 0x200B);
}

// Letters, digits and non-ASCII scripts (CJK, Cyrillic...): repeating these is less obviously broken.
bool IsWordish(char32_t c) {
  if (c < 0x80) return std::isalnum(static_cast<int>(c)) != 0;
  return !(c >= 0x3000 && c <= 0x303F) && !(c >= 0xFF00 && c <= 0xFF0F) && c != kReplacement;
}

std::string Encode(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (c >> 6)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (c >> 12)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (c >> 18)));
    s.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return s;
}

std::string CharName(char32_t c) {
  if (c < 0x20 || c == 0x7F) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
    return buf;
  }
  return "'" + Encode(c) + "'";
}

// A short unit (1..16 code points, holding a letter) repeated back to back over >= 80% of the text:
// "ParisParisParis...", "你好你好你好你好".
bool PeriodicTail(const std::vector<char32_t>& cps) {
  const size_t n = cps.size();
  if (n < 12) return false;
  for (size_t p = 1; p <= 16 && p * 4 <= n; ++p) {
    size_t i = n - p;  // walk back while cps[i-1] == cps[i-1+p]
    while (i > 0 && cps[i - 1] == cps[i - 1 + p]) --i;
    const size_t tail = n - i;
    if (tail * 5 < n * 4 || tail < p * 4) continue;
    bool has_letter = false;
    for (size_t k = n - p; k < n; ++k)
      if (IsWordish(cps[k]) && !(cps[k] < 0x80 && std::isdigit(static_cast<int>(cps[k])))) has_letter = true;
    if (has_letter) return true;
  }
  return false;
}

// One word is >= 80% of >= 4 words: "Paris Paris Paris, Paris".
bool OneWordDominates(const std::vector<char32_t>& cps) {
  std::vector<std::u32string> words;
  std::u32string cur;
  auto flush = [&] {
    // Strip ASCII punctuation at both ends; fold ASCII case.
    size_t b = 0, e = cur.size();
    while (b < e && cur[b] < 0x80 && std::ispunct(static_cast<int>(cur[b]))) ++b;
    while (e > b && cur[e - 1] < 0x80 && std::ispunct(static_cast<int>(cur[e - 1]))) --e;
    std::u32string w = cur.substr(b, e - b);
    for (auto& c : w)
      if (c < 0x80) c = static_cast<char32_t>(std::tolower(static_cast<int>(c)));
    if (!w.empty()) words.push_back(std::move(w));
    cur.clear();
  };
  for (char32_t c : cps) {
    if (IsSpace(c)) flush();
    else cur.push_back(c);
  }
  flush();
  if (words.size() < 4) return false;
  std::unordered_map<std::u32string, size_t> freq;
  size_t best = 0;
  const std::u32string* best_word = nullptr;
  for (const auto& w : words) {
    size_t f = ++freq[w];
    if (f > best) {
      best = f;
      best_word = &w;
    }
  }
  if (best * 5 < words.size() * 4) return false;
  return std::any_of(best_word->begin(), best_word->end(), [](char32_t c) {
    return IsWordish(c) && !(c < 0x80 && std::isdigit(static_cast<int>(c)));
  });
}

bool IsNanValue(const nlohmann::json& v) {
  if (v.is_number_float()) return std::isnan(v.get<double>());
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s == "nan" || s == "-nan" || s == "+nan";
  }
  return false;
}

bool AnyNan(const nlohmann::json& v) {
  if (IsNanValue(v)) return true;
  if (v.is_array()) return std::any_of(v.begin(), v.end(), [](const auto& x) { return AnyNan(x); });
  if (v.is_object())
    for (const auto& [k, x] : v.items())
      if (AnyNan(x)) return true;
  return false;
}

}  // namespace

std::optional<GarbageFinding> FindGarbage(std::string_view text) {
  if (text.empty()) return GarbageFinding{"empty", "empty output"};
  const std::vector<char32_t> all = Decode(text);
  std::vector<char32_t> visible;
  for (char32_t c : all)
    if (!IsSpace(c)) visible.push_back(c);
  if (visible.empty()) return GarbageFinding{"whitespace", "whitespace only"};

  const size_t bad = static_cast<size_t>(std::count(visible.begin(), visible.end(), kReplacement));
  if (bad >= 3 || bad * 20 >= visible.size())
    return GarbageFinding{"replacement_char", "U+FFFD replacement characters"};

  // Every visible character the same: "!!!!!!!!" (>= 3), "aaaaaaaa" (>= 8 for letters/digits/CJK).
  const char32_t first = visible[0];
  if (std::all_of(visible.begin(), visible.end(), [&](char32_t c) { return c == first; }) &&
      visible.size() >= (IsWordish(first) ? 8u : 3u))
    return GarbageFinding{"repeated_char", "repeated character " + CharName(first)};
  // One character in a long run making most of the text: "Paris!!!!!!!!!!!!!!!!!!!!".
  size_t run = 1, best_run = 1;
  char32_t best_char = visible[0];
  for (size_t i = 1; i < visible.size(); ++i) {
    run = visible[i] == visible[i - 1] ? run + 1 : 1;
    if (run > best_run) {
      best_run = run;
      best_char = visible[i];
    }
  }
  if (best_run >= 16 && best_run * 2 >= visible.size() && !IsWordish(best_char))
    return GarbageFinding{"repeated_char", "repeated character " + CharName(best_char)};
  if (best_run >= 32 && best_run * 5 >= visible.size() * 4)
    return GarbageFinding{"repeated_char", "repeated character " + CharName(best_char)};

  if (OneWordDominates(all) || PeriodicTail(visible))
    return GarbageFinding{"repeated_token", "single token repeated"};
  return std::nullopt;
}

std::optional<std::string> DetectGarbage(std::string_view text) {
  if (auto g = FindGarbage(text)) return g->reason;
  return std::nullopt;
}

std::string GarbageSignature(const GarbageFinding& g) { return "wrong_output:garbage:" + g.key; }

bool HasNanLogprobs(const nlohmann::json& logprobs) {
  if (logprobs.is_null()) return false;
  // Chat: {"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}
  if (logprobs.is_object() && logprobs.contains("content") && logprobs["content"].is_array()) {
    for (const auto& tok : logprobs["content"]) {
      if (!tok.is_object()) continue;
      if (tok.contains("logprob") && (tok["logprob"].is_null() || IsNanValue(tok["logprob"]))) return true;
      if (tok.contains("top_logprobs") && tok["top_logprobs"].is_array())
        for (const auto& t : tok["top_logprobs"])
          if (t.is_object() && t.contains("logprob") && IsNanValue(t["logprob"])) return true;
    }
    return false;
  }
  // Completions: {"tokens", "token_logprobs": [..], "top_logprobs": [{tok: lp}]}. A null
  // token_logprob is normal for the first echoed prompt token, so only NaN counts.
  return AnyNan(logprobs);
}

bool JsonTextHasNan(std::string_view body) {
  bool in_string = false, esc = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c == 'N' && body.substr(i, 3) == "NaN") return true;
  }
  return false;
}

}  // namespace gauntlet::classifier
