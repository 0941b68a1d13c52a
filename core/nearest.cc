#include "core/nearest.h"

#include <algorithm>

namespace gauntlet {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::optional<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty() || std::find(candidates.begin(), candidates.end(), word) != candidates.end()) return std::nullopt;
  std::vector<std::string> prefixed;
  for (auto& c : candidates)
    if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) prefixed.push_back(c);
  if (prefixed.size() == 1 && word.find_first_not_of('-') != std::string::npos) return prefixed[0];
  const size_t limit = word.size() <= 3 ? 1 : 2;
  std::optional<std::string> best;
  size_t best_d = limit + 1;
  for (auto& c : candidates)
    if (size_t d = EditDistance(word, c); d < best_d) best_d = d, best = c;
  return best;
}

}  // namespace gauntlet
