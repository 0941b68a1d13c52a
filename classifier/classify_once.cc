// The one-shot helpers of classifier.h over a Classifier: a whole text, a file read in 1 MiB
// chunks, and the JSON `gauntlet classify` prints.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "classifier/classifier.h"

namespace gauntlet::classifier {

Classification ClassifyText(std::string_view log, const ExitInfo& exit, const std::vector<SignatureRule>& rules) {
  Classifier c(rules);
  c.Feed(log);
  return c.Finish(exit);
}

Classification ClassifyFile(const std::string& path, const ExitInfo& exit, const std::vector<SignatureRule>& rules) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  Classifier c(rules);
  std::vector<char> buf(1 << 20);
  for (;;) {
    size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n > 0) c.Feed(std::string_view(buf.data(), n));
    if (n < buf.size()) break;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw std::runtime_error("cannot read " + path);
  return c.Finish(exit);
}

nlohmann::json ToJson(const Classification& c) {
  nlohmann::json j = {
      {"verdict", Name(c.verdict)}, {"signature", c.signature}, {"evidence", c.evidence}, {"basis", Name(c.basis)}};
  if (!c.rank.empty()) j["rank"] = c.rank;
  if (Unclassified(c.verdict, c.basis)) j["unclassified"] = true;
  return j;
}

}  // namespace gauntlet::classifier
