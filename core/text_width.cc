#include "core/text_width.h"

#include <cstdint>

namespace gauntlet {

namespace {

// The code point at s[*i] (advancing *i past it), or, for a colour code (ESC [ ... m), -1 with *i
// past the code.
int64_t NextCodePoint(const std::string& s, size_t* i) {
  unsigned char c = static_cast<unsigned char>(s[*i]);
  if (c == '\033') {
    while (*i < s.size() && s[*i] != 'm') ++*i;
    ++*i;
    return -1;
  }
  uint32_t cp = c;
  int len = 1;
  if (c >= 0xF0) len = 4, cp = c & 0x07;
  else if (c >= 0xE0) len = 3, cp = c & 0x0F;
  else if (c >= 0xC0) len = 2, cp = c & 0x1F;
  for (int k = 1; k < len && *i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[*i + k]) & 0x3F);
  *i += len;
  return cp;
}

// Columns one code point takes.
size_t CodePointWidth(uint32_t cp) {
  if (cp == 0xFE0F || cp == 0x200D || (cp >= 0x300 && cp < 0x370)) return 0;  // selectors, joiners, accents
  // East Asian wide and emoji-presentation code points take two columns (the ones a verdict uses
  // and the common CJK blocks; exact tables are overkill for a results table).
  bool wide = (cp >= 0x1100 && cp <= 0x115F) || cp == 0x231A || cp == 0x231B || (cp >= 0x23E9 && cp <= 0x23EC) ||
              cp == 0x23F0 || cp == 0x23F3 || cp == 0x2705 || cp == 0x274C || cp == 0x274E || cp == 0x2753 ||
              cp == 0x2B50 || cp == 0x2B55 || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
              (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) ||
              (cp >= 0x1F300 && cp <= 0x1FAFF) || (cp >= 0x20000 && cp <= 0x3FFFD);
  return wide ? 2 : 1;
}

}  // namespace

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();)
    if (int64_t cp = NextCodePoint(s, &i); cp >= 0) n += CodePointWidth(static_cast<uint32_t>(cp));
  return n;
}

std::string CutToWidth(const std::string& s, size_t cols) {
  if (DisplayWidth(s) <= cols) return s;
  if (cols == 0) return "";
  std::string out;
  bool coloured = false;
  size_t used = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t from = i;
    const int64_t cp = NextCodePoint(s, &i);
    if (cp < 0) {
      coloured = true;
      out.append(s, from, i - from);
      continue;
    }
    const size_t w = CodePointWidth(static_cast<uint32_t>(cp));
    if (used + w > cols - 1) break;  // one column stays for the ellipsis
    out.append(s, from, i - from);
    used += w;
  }
  return out + "…" + (coloured ? "\033[0m" : "");
}


}  // namespace gauntlet
