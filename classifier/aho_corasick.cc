#include "classifier/aho_corasick.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <queue>
#include <stdexcept>

namespace gauntlet::classifier {
namespace {

unsigned char Fold(unsigned char c) { return static_cast<unsigned char>(std::tolower(c)); }

}  // namespace

AhoCorasick::AhoCorasick(const std::vector<std::string>& needles) : needle_count_(needles.size()) {
  // Build the trie over folded bytes; goto_ uses -1 for "no edge" until the BFS fills it in.
  std::vector<std::vector<int32_t>> go(1, std::vector<int32_t>(256, -1));
  std::vector<std::vector<uint32_t>> out(1);
  for (uint32_t id = 0; id < needles.size(); ++id) {
    if (needles[id].empty()) continue;
    int32_t s = 0;
    for (unsigned char c : needles[id]) {
      c = Fold(c);
      if (go[s][c] < 0) {
        go[s][c] = static_cast<int32_t>(go.size());
        go.emplace_back(256, -1);
        out.emplace_back();
      }
      s = go[s][c];
    }
    out[s].push_back(id);
  }
  // BFS: failure links, and complete the DFA so scanning never follows links.
  std::vector<int32_t> fail(go.size(), 0);
  std::queue<int32_t> q;
  for (int c = 0; c < 256; ++c) {
    if (go[0][c] < 0) {
      go[0][c] = 0;
    } else {
      fail[go[0][c]] = 0;
      q.push(go[0][c]);
    }
  }
  while (!q.empty()) {
    int32_t s = q.front();
    q.pop();
    const auto& inherited = out[fail[s]];
    out[s].insert(out[s].end(), inherited.begin(), inherited.end());
    for (int c = 0; c < 256; ++c) {
      int32_t t = go[s][c];
      if (t < 0) {
        go[s][c] = go[fail[s]][c];
      } else {
        fail[t] = go[fail[s]][c];
        q.push(t);
      }
    }
  }
  // Byte classes: one column per folded byte that occurs in a needle, column 0 for the rest (they
  // all behave alike: no trie edge starts with them). Uppercase ASCII shares its lowercase column.
  int column_of_folded[256];
  std::fill(std::begin(column_of_folded), std::end(column_of_folded), 0);
  for (const auto& n : needles)
    for (unsigned char c : n)
      if (column_of_folded[Fold(c)] == 0) column_of_folded[Fold(c)] = static_cast<int>(classes_++);
  int representative[256] = {};
  for (int c = 0; c < 256; ++c) {
    byte_class_[c] = static_cast<uint8_t>(column_of_folded[Fold(static_cast<unsigned char>(c))]);
    representative[byte_class_[c]] = Fold(static_cast<unsigned char>(c));
  }
  // Column 0 needs a byte outside every needle; the loop above may have overwritten it.
  for (int c = 0; c < 256; ++c)
    if (byte_class_[c] == 0) {
      representative[0] = c;
      break;
    }
  const size_t n = go.size();
  if (n * classes_ >= kStateMask) throw std::length_error("AhoCorasick: needles too large");
  delta_.assign(n * classes_, 0);
  out_begin_.assign(n + 1, 0);
  for (size_t s = 0; s < n; ++s) {
    out_begin_[s] = static_cast<uint32_t>(outputs_.size());
    outputs_.insert(outputs_.end(), out[s].begin(), out[s].end());
  }
  out_begin_[n] = static_cast<uint32_t>(outputs_.size());
  for (size_t s = 0; s < n; ++s) {
    for (size_t k = 0; k < classes_; ++k) {
      const auto t = static_cast<uint32_t>(go[s][representative[k]]);
      uint32_t row = t * static_cast<uint32_t>(classes_);
      if (!out[t].empty()) row |= kHasOutput;
      delta_[s * classes_ + k] = row;
    }
  }
}

}  // namespace gauntlet::classifier
