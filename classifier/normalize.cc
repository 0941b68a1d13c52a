#include "classifier/normalize.h"

#include <algorithm>
#include <cctype>

namespace gauntlet::classifier {
namespace {

bool IsAlnum(unsigned char c) { return std::isalnum(c) != 0; }
bool IsWordChar(unsigned char c) { return IsAlnum(c) || c == '_'; }
bool IsHex(unsigned char c) { return std::isxdigit(c) != 0; }
bool IsPathChar(unsigned char c) {
  return IsAlnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == '+' || c == '@' ||
         c == '~';
}

// Length of a valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2;
  else if ((c & 0xF0) == 0xE0) n = 3;
  else if ((c & 0xF8) == 0xF0) n = 4;
  else return 0;
  if (c == 0xC0 || c == 0xC1 || c > 0xF4) return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// Cut to at most max_len bytes without splitting a UTF-8 sequence.
void TruncateUtf8InPlace(std::string& s, size_t max_len) {
  if (s.size() <= max_len) return;
  size_t cut = max_len;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
}

// Skips an ANSI CSI sequence ("\x1b[...X") starting at i; returns the index after it.
size_t SkipAnsi(std::string_view s, size_t i) {
  size_t j = i + 1;
  if (j < s.size() && s[j] == '[') {
    ++j;
    while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
    if (j < s.size()) ++j;
  }
  return j;
}

bool MatchesUuidAt(std::string_view s, size_t i) {
  static constexpr int kGroups[] = {8, 4, 4, 4, 12};
  size_t j = i;
  for (int g = 0; g < 5; ++g) {
    for (int k = 0; k < kGroups[g]; ++k, ++j)
      if (j >= s.size() || !IsHex(static_cast<unsigned char>(s[j]))) return false;
    if (g < 4) {
      if (j >= s.size() || s[j] != '-') return false;
      ++j;
    }
  }
  return j >= s.size() || !IsWordChar(static_cast<unsigned char>(s[j]));
}

void AppendSpaceOnce(std::string& out) {
  if (!out.empty() && out.back() != ' ') out.push_back(' ');
}

}  // namespace

std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      i = SkipAnsi(s, i);
      continue;
    }
    out += s[i++];
  }
  return out;
}

std::string_view PathBasename(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string NormalizeMessage(std::string_view s, size_t max_len) {
  std::string out;
  out.reserve(std::min(s.size(), max_len + 16));
  size_t i = 0;
  while (i < s.size() && out.size() < max_len + 16) {
    const auto c = static_cast<unsigned char>(s[i]);
    const unsigned char prev = i > 0 ? static_cast<unsigned char>(s[i - 1]) : ' ';
    if (c == 0x1b) {
      i = SkipAnsi(s, i);
      continue;
    }
    if (std::isspace(c) || c < 0x20) {
      AppendSpaceOnce(out);
      ++i;
      continue;
    }
    // Paths: '/x', './x', '../x', '~/x' at a token boundary. Keep the basename only.
    const bool boundary = !IsPathChar(prev) || i == 0;
    if (boundary && (c == '/' || c == '.' || c == '~')) {
      size_t j = i;
      while (j < s.size() && IsPathChar(static_cast<unsigned char>(s[j]))) ++j;
      std::string_view tok = s.substr(i, j - i);
      const bool looks_like_path =
          (tok.size() > 1 && tok[0] == '/' && IsWordChar(static_cast<unsigned char>(tok[1]))) ||
          tok.starts_with("./") || tok.starts_with("../") || tok.starts_with("~/");
      if (looks_like_path) {
        // Trailing punctuation belongs to the sentence, not the path.
        while (!tok.empty() && tok.back() == '.') tok.remove_suffix(1);
        std::string_view base = PathBasename(tok);
        if (base.empty() || base == "." || base == "..") base = "<path>";
        out.append(base);
        i += tok.size();
        continue;
      }
    }
    if (IsWordChar(c) && !IsWordChar(prev)) {
      if (IsHex(c) && MatchesUuidAt(s, i)) {
        out.append("<uuid>");
        i += 36;
        continue;
      }
      if (c == '0' && i + 2 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
          IsHex(static_cast<unsigned char>(s[i + 2]))) {
        size_t j = i + 2;
        while (j < s.size() && IsHex(static_cast<unsigned char>(s[j]))) ++j;
        out.append("<hex>");
        i = j;
        continue;
      }
      size_t j = i;
      while (j < s.size() && IsWordChar(static_cast<unsigned char>(s[j]))) ++j;
      std::string_view word = s.substr(i, j - i);
      const bool all_hex = std::all_of(word.begin(), word.end(),
                                       [](char ch) { return IsHex(static_cast<unsigned char>(ch)); });
      const bool has_digit = std::any_of(word.begin(), word.end(),
                                         [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
      if (word.size() >= 8 && all_hex && has_digit &&
          !std::all_of(word.begin(), word.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
        out.append("<hex>");
        i = j;
        continue;
      }
      if (std::isdigit(c)) {
        // 12, 2.00, 10.0.0.1, 2.21.5: one number. A glued unit stays ("79.25GiB" -> "<n>GiB").
        size_t k = i;
        while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
        while (k + 1 < s.size() && s[k] == '.' && std::isdigit(static_cast<unsigned char>(s[k + 1]))) {
          ++k;
          while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
        }
        out.append("<n>");
        i = k;
        continue;
      }
      out.append(word);
      i = j;
      continue;
    }
    out.push_back(static_cast<char>(c));
    ++i;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  size_t lead = 0;
  while (lead < out.size() && out[lead] == ' ') ++lead;
  out.erase(0, lead);
  if (out.size() > max_len) {
    TruncateUtf8InPlace(out, max_len);
    // End on a word boundary when one is near, so keys read well ("... use float16", not "... use flo").
    size_t space = out.rfind(' ');
    if (space != std::string::npos && space + 24 > out.size()) out.resize(space);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return SanitizeUtf8(out);
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) {
      out.push_back('?');
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string TrimEvidence(std::string_view line, size_t max_len) {
  std::string out;
  out.reserve(std::min(line.size(), max_len + 8));
  for (size_t i = 0; i < line.size() && out.size() <= max_len + 4;) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {
      i = SkipAnsi(line, i);
    } else if (c < 0x20 || c == 0x7f) {
      out.push_back(' ');
      ++i;
    } else {
      out.push_back(static_cast<char>(c));
      ++i;
    }
  }
  std::string_view t = TrimSpace(out);
  std::string trimmed(t);
  if (trimmed.size() > max_len) {
    TruncateUtf8InPlace(trimmed, max_len - 3);
    trimmed += "...";
  }
  return SanitizeUtf8(trimmed);
}

// Locale-free ASCII folding: std::tolower is a libc call per byte and shows up in profiles.
inline char FoldAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c; }

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = FoldAscii(c);
  return out;
}

bool ContainsCI(std::string_view haystack, std::string_view needle_lower) {
  if (needle_lower.empty()) return true;
  if (haystack.size() < needle_lower.size()) return false;
  const char first = needle_lower[0];
  for (size_t i = 0; i + needle_lower.size() <= haystack.size(); ++i) {
    if (FoldAscii(haystack[i]) != first) continue;
    size_t k = 1;
    while (k < needle_lower.size() && FoldAscii(haystack[i + k]) == needle_lower[k]) ++k;
    if (k == needle_lower.size()) return true;
  }
  return false;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace gauntlet::classifier
