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

// A plain integer at s[i]: at most 18 digits (no overflow), no fraction or exponent (those the full
// parser reads as a float, which the callers skip).
bool PlainInt(std::string_view s, size_t& i, int64_t* out) {
  bool negative = false;
  if (i < s.size() && s[i] == '-') negative = true, ++i;
  const size_t start = i;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  const size_t digits = i - start;
  if (digits == 0 || digits > 18 || (digits > 1 && s[start] == '0')) return false;
  if (i < s.size() && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')) return false;
  *out = negative ? -v : v;
  return true;
}

// Walks a flat object of plain-string keys, calling `value(key)` at each member's value (which
// reads it, moving i past it, or returns false); false for anything but such an object.
template <typename ValueFn>
bool FlatObject(std::string_view s, ValueFn&& value) {
  size_t i = 0;
  SkipSpace(s, i);
  if (i >= s.size() || s[i++] != '{') return false;
  SkipSpace(s, i);
  if (i < s.size() && s[i] == '}') {
    ++i;
  } else {
    while (true) {
      std::string_view key;
      SkipSpace(s, i);
      if (!PlainString(s, i, &key)) return false;
      SkipSpace(s, i);
      if (i >= s.size() || s[i++] != ':') return false;
      SkipSpace(s, i);
      if (!value(key, i)) return false;
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

}  // namespace

bool FlatConfigViews(std::string_view s, const std::vector<std::string>& params, std::vector<std::string_view>* values) {
  values->assign(params.size(), std::string_view());
  size_t next = 0;  // ConfigJson writes the keys sorted, as `params` come: try the next one first
  return FlatObject(s, [&](std::string_view key, size_t& i) {
    std::string_view value;
    if (!PlainString(s, i, &value)) return false;
    size_t p = next;
    if (p >= params.size() || params[p] != key)
      for (p = 0; p < params.size() && params[p] != key;) ++p;
    if (p < params.size()) (*values)[p] = value, next = p + 1;  // a later duplicate wins, as in the full parser
    return true;
  });
}

bool FlatConfigValues(std::string_view s, const std::vector<std::string>& params, std::vector<std::string>* values) {
  std::vector<std::string_view> views;
  if (!FlatConfigViews(s, params, &views)) return false;
  values->assign(views.begin(), views.end());
  return true;
}

bool FlatIntObject(std::string_view s, std::vector<std::pair<std::string_view, int64_t>>* entries) {
  entries->clear();
  return FlatObject(s, [&](std::string_view key, size_t& i) {
    int64_t v = 0;
    if (!PlainInt(s, i, &v)) return false;
    for (auto& [k, n] : *entries)
      if (k == key) return false;  // a duplicate: the full parser's rule (the later wins) decides
    entries->emplace_back(key, v);
    return true;
  });
}

}  // namespace gauntlet::store
