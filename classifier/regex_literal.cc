#include "classifier/regex_literal.h"

#include <cctype>
#include <string_view>

namespace gauntlet::classifier {

std::string RequiredLiteral(std::string_view p) {
  // Any top-level or nested '|' makes every piece optional as far as this simple scan knows.
  {
    bool esc = false, in_class = false;
    for (char c : p) {
      if (esc) { esc = false; continue; }
      if (c == '\\') { esc = true; continue; }
      if (in_class) { if (c == ']') in_class = false; continue; }
      if (c == '[') { in_class = true; continue; }
      if (c == '|') return "";
    }
  }
  std::string best, run;
  int depth = 0;
  auto flush = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
  };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    // A quantifier after the last literal char makes that char optional (or repeated): drop it
    // from the run ('+' keeps one copy, but the run must end there).
    auto quantifier_follows = [&](size_t next) {
      return next < p.size() && (p[next] == '*' || p[next] == '?' || p[next] == '{' || p[next] == '+');
    };
    if (c == '\\') {
      if (i + 1 >= p.size()) break;
      char e = p[i + 1];
      ++i;
      const bool literal_escape = !std::isalnum(static_cast<unsigned char>(e));
      if (!literal_escape || depth > 0) {
        flush();
        continue;
      }
      if (quantifier_follows(i + 1)) {
        if (p[i + 1] == '+') run.push_back(e);
        flush();
        continue;
      }
      run.push_back(e);
      continue;
    }
    if (c == '(') { flush(); ++depth; continue; }
    if (c == ')') { flush(); if (depth > 0) --depth; continue; }
    if (c == '[') {
      flush();
      // Skip the class, including a leading ']' and escapes.
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') j += (p[j] == '\\') ? 2 : 1;
      i = j;
      continue;
    }
    if (c == '.' || c == '^' || c == '$' || c == '*' || c == '+' || c == '?' || c == '{' || c == '}') {
      flush();
      if (c == '{') {
        while (i < p.size() && p[i] != '}') ++i;
      }
      continue;
    }
    if (depth > 0) continue;  // a group may be optional or repeated; ignore its contents
    if (quantifier_follows(i + 1)) {
      if (p[i + 1] == '+') run.push_back(c);
      flush();
      continue;
    }
    run.push_back(c);
  }
  flush();
  return best;
}

}  // namespace gauntlet::classifier
