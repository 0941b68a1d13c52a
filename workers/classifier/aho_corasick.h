// ASCII-case-insensitive multi-needle matcher (Aho-Corasick, full 256-wide DFA). One pass over a
// line finds every needle it contains: the classifier's prefilter, so most lines cost one table
// lookup per byte and nothing else. Immutable after construction; Scan is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

class AhoCorasick {
 public:
  // Needle i gets id i. Empty needles are ignored (never reported).
  explicit AhoCorasick(const std::vector<std::string>& needles);

  // Calls on_hit(id) for each needle occurrence in text (a needle may be reported more than once).
  // Returns whether anything matched.
  template <typename F>
  bool Scan(std::string_view text, F&& on_hit) const {
    uint32_t s = 0;
    bool any = false;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = p + text.size();
    for (; p != end; ++p) {
      s = delta_[(static_cast<size_t>(s & kStateMask) << 8) | *p];
      if (s & kHasOutput) [[unlikely]] {
        any = true;
        for (uint32_t i = out_begin_[s & kStateMask]; i < out_begin_[(s & kStateMask) + 1]; ++i)
          on_hit(outputs_[i]);
      }
    }
    return any;
  }

  size_t needle_count() const { return needle_count_; }

 private:
  static constexpr uint32_t kHasOutput = 0x80000000u;
  static constexpr uint32_t kStateMask = 0x7fffffffu;
  std::vector<uint32_t> delta_;      // state * 256 + byte -> next state (| kHasOutput)
  std::vector<uint32_t> out_begin_;  // outputs of state s: outputs_[out_begin_[s] .. out_begin_[s+1])
  std::vector<uint32_t> outputs_;
  size_t needle_count_ = 0;
};

}  // namespace gauntlet
