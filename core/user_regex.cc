#include "core/user_regex.h"

#include <re2/re2.h>

#include <cstdio>
#include <cstdlib>

namespace gauntlet {

Result<UserRegex> UserRegex::Compile(std::string_view pattern) {
  if (pattern.size() > kMaxRegexPattern)
    return Status::Invalid("the pattern is longer than " + std::to_string(kMaxRegexPattern) + " characters");
  RE2::Options opts;
  opts.set_log_errors(false);  // the error goes back to whoever wrote the pattern, not to stderr
  opts.set_max_mem(8 << 20);   // a pattern whose program would be larger is refused, not built
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), opts);
  if (!re->ok()) return Status::Invalid("invalid regex: " + re->error());
  UserRegex out;
  out.re_ = std::move(re);
  return out;
}

UserRegex UserRegex::Fixed(std::string_view pattern) {
  auto r = Compile(pattern);
  if (!r.ok()) {
    std::fprintf(stderr, "gauntlet: built-in pattern /%.*s/: %s\n", static_cast<int>(pattern.size()), pattern.data(),
                 r.status().message().c_str());
    std::abort();
  }
  return std::move(*r);
}

bool UserRegex::FullMatch(std::string_view text) const {
  return text.size() <= kMaxPatternValue && RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

bool UserRegex::Search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

const std::string& UserRegex::pattern() const { return re_->pattern(); }

}  // namespace gauntlet
