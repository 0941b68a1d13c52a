#include "store/config_values.h"

namespace gauntlet::store {
namespace {

void SkipSpace(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
}

// A plain string at s[i] (the opening quote): its contents, i past the closing quote. False on an
// escape, a control or non-ASCII byte or an unterminated string: text the full parser must judge.
bool PlainString(std::string_view s, size_t& i, std::string_view* out) {
  if (i >= s.size() || s[i] != '"') return false;
  const size_t start = ++i;
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      *out = s.substr(start, i - start);
      ++i;
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) return false;
  }
  return false;
}

}  // namespace

bool FlatConfigValues(std::string_view s, const std::vector<std::string>& params, std::vector<std::string>* values) {
  values->assign(params.size(), std::string());
  size_t i = 0;
  SkipSpace(s, i);
  if (i >= s.size() || s[i++] != '{') return false;
  SkipSpace(s, i);
  if (i < s.size() && s[i] == '}') {
    ++i;
  } else {
    while (true) {
      std::string_view key, value;
      SkipSpace(s, i);
      if (!PlainString(s, i, &key)) return false;
      SkipSpace(s, i);
      if (i >= s.size() || s[i++] != ':') return false;
      SkipSpace(s, i);
      if (!PlainString(s, i, &value)) return false;
      for (size_t p = 0; p < params.size(); ++p)  // a later duplicate wins, as in the full parser
        if (params[p] == key) (*values)[p].assign(value);
      SkipSpace(s, i);
      if (i >= s.size()) return false;
      if (s[i] == '}') {
        ++i;
        break;
      }
      if (s[i++] != ',') return false;
    }
  }
  SkipSpace(s, i);
  return i == s.size();
}

}  // namespace gauntlet::store
