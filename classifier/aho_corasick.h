// ASCII-case-insensitive multi-needle matcher (Aho-Corasick compiled to a DFA over byte classes:
// bytes that occur in no needle share one class, which keeps the table ~50 columns wide instead of
// 256). One pass over a line finds every needle it contains: the classifier's prefilter, so most
// lines cost two small table lookups per byte and nothing else. Immutable after construction;
// Scan is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::classifier {

class AhoCorasick {
 public:
  // Needle i gets id i. Empty needles are ignored (never reported).
  explicit AhoCorasick(const std::vector<std::string>& needles);

  // Calls on_hit(id) for each needle occurrence in text (a needle may be reported more than once).
  // Returns whether anything matched.
  template <typename F>
  bool Scan(std::string_view text, F&& on_hit) const {
    uint32_t s = 0;  // row offset of the current state (state * classes_), | kHasOutput
    bool any = false;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = p + text.size();
    for (; p != end; ++p) {
      s = delta_[(s & kStateMask) + byte_class_[*p]];
      if (s & kHasOutput) [[unlikely]] {
        any = true;
        const size_t state = (s & kStateMask) / classes_;
        for (uint32_t i = out_begin_[state]; i < out_begin_[state + 1]; ++i) on_hit(outputs_[i]);
      }
    }
    return any;
  }

  size_t needle_count() const { return needle_count_; }

 private:
  static constexpr uint32_t kHasOutput = 0x80000000u;
  static constexpr uint32_t kStateMask = 0x7fffffffu;
  uint8_t byte_class_[256] = {};     // byte -> column; 0 = occurs in no needle
  size_t classes_ = 1;
  // delta_[state * classes_ + class] = next state's row offset (next * classes_) | kHasOutput:
  // pre-multiplied so the scan loop has no multiply on its critical path.
  std::vector<uint32_t> delta_;
  std::vector<uint32_t> out_begin_;  // outputs of state s: outputs_[out_begin_[s] .. out_begin_[s+1])
  std::vector<uint32_t> outputs_;
  size_t needle_count_ = 0;
};

}  // namespace gauntlet::classifier
