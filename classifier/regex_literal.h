// Finds a literal substring that every match of a regex (RE2 syntax) must contain, so a suite's
// regex rule only runs on lines that contain it (the regex on every line would be far too slow).
// Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gauntlet::classifier {

// The longest such literal, or "" when none can be proven (alternation, all-optional pieces...).
// Conservative: the literal may be shorter than the best one, never wrong.
std::string RequiredLiteral(std::string_view pattern);

}  // namespace gauntlet::classifier
