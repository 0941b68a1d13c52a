// Regular expressions over text that comes from outside: suite parameter patterns, signature rules,
// smoke reply patterns, and the fixed patterns that check names and values users send. One engine,
// RE2 (Debian's libre2-dev), because it matches in time linear in the text and never recurses on
// it: libstdc++'s std::regex recursed once per character a match consumed (a 40 KB sweep value or
// a 64 KiB log line overflowed the daemon's or the worker's stack) and backtracked exponentially on
// patterns like ^(a*)*#$ (docs/DECISIONS.md "Regexes"). RE2 refuses what it cannot run in linear
// time (back-references, look-around) at compile time, so a suite that uses them is a field error.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace re2 {
class RE2;
}

namespace gauntlet {

inline constexpr size_t kMaxRegexPattern = 1000;  // characters of a pattern a suite may write
inline constexpr size_t kMaxPatternValue = 4096;  // the longest value a pattern is checked against

// A compiled pattern. A cheap value (copies share the compiled program); const methods are
// thread-safe, so one instance serves every thread.
class UserRegex {
 public:
  // Compiles `pattern` (RE2 syntax, which ECMAScript's common subset is); Invalid with RE2's reason
  // (or "longer than 1000 characters") otherwise. The program's memory is bounded (RE2's max_mem).
  static Result<UserRegex> Compile(std::string_view pattern);
  // For patterns written in this source: aborts the process on an invalid one (a programming error).
  static UserRegex Fixed(std::string_view pattern);

  // True if all of `text` matches. False for text over kMaxPatternValue: no value that long is
  // accepted by a pattern, whatever the pattern says.
  bool FullMatch(std::string_view text) const;
  // True if the pattern matches somewhere in `text`, looked at whole (linear in its length).
  bool Search(std::string_view text) const;
  const std::string& pattern() const;

 private:
  UserRegex() = default;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace gauntlet
