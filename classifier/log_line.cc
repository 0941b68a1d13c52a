#include "classifier/log_line.h"

#include <cctype>

namespace gauntlet::classifier {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsUpper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
  return out;
}

void DropOneSpace(std::string_view& s) {
  if (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

LogLevel LevelFromWord(std::string_view w) {
  if (w == "DEBUG") return LogLevel::kDebug;
  if (w == "INFO") return LogLevel::kInfo;
  if (w == "WARNING" || w == "WARN") return LogLevel::kWarning;
  if (w == "ERROR" || w == "CRITICAL" || w == "FATAL") return LogLevel::kError;
  return LogLevel::kNone;
}

// "[rank3]:" / "[default3]:" (torchrun --tee / local_ranks_filter).
bool PeelTorchrun(std::string_view& s, std::string& rank) {
  for (std::string_view tag : {"[rank", "[default"}) {
    if (!s.starts_with(tag)) continue;
    size_t i = tag.size();
    size_t start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == start || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return false;
    rank = "rank" + std::string(s.substr(start, i - start));
    s.remove_prefix(i + 2);
    DropOneSpace(s);
    return true;
  }
  return false;
}

// "(TP2 pid=123)", "(EngineCore_DP0 pid=9)", "(VllmWorker rank=2 pid=9)", "(RayWorkerWrapper pid=9, ip=..)".
bool PeelPidTag(std::string_view& s, std::string& rank) {
  if (s.empty() || s[0] != '(') return false;
  size_t close = s.find(')');
  if (close == std::string_view::npos || close > 120) return false;
  std::string_view inner = s.substr(1, close - 1);
  if (inner.find("pid=") == std::string_view::npos) return false;
  std::string key;
  if (size_t r = inner.find("rank="); r != std::string_view::npos) {
    size_t i = r + 5, start = i;
    while (i < inner.size() && IsDigit(inner[i])) ++i;
    key = "rank" + std::string(inner.substr(start, i - start));
  } else {
    size_t sp = inner.find_first_of(" ,");
    key = Lower(inner.substr(0, sp == std::string_view::npos ? 0 : sp));
  }
  if (rank.empty() || rank.starts_with("gpu")) rank = key;
  s.remove_prefix(close + 1);
  DropOneSpace(s);
  return true;
}

// Collects TP/DP/PP/EP/CP rank tokens ("TP0", "TP 0") from bracket content into "dp0-tp1".
std::string RankTokens(std::string_view inner) {
  std::string key;
  for (size_t i = 0; i + 2 < inner.size() + 1; ++i) {
    if (i > 0 && inner[i - 1] != ' ' && inner[i - 1] != '[') continue;
    std::string_view rest = inner.substr(i);
    if (rest.size() < 3) break;
    const bool tag = (rest.starts_with("TP") || rest.starts_with("DP") || rest.starts_with("PP") ||
                      rest.starts_with("EP") || rest.starts_with("CP"));
    if (!tag) continue;
    size_t j = 2;
    if (j < rest.size() && rest[j] == ' ') ++j;
    size_t start = j;
    while (j < rest.size() && IsDigit(rest[j])) ++j;
    if (j == start || (j < rest.size() && rest[j] != ' ' && rest[j] != ']')) continue;
    if (!key.empty()) key += '-';
    key += Lower(rest.substr(0, 2)) + std::string(rest.substr(start, j - start));
  }
  return key;
}

// "[2025-03-01 10:00:00 TP0]", "[2025-03-01 10:00:00]", "[TP 0]", glog "[W1015 10:00:00.1 f.cc:12]".
bool PeelBracket(std::string_view& s, std::string& rank, LogLevel& level) {
  if (s.size() < 3 || s[0] != '[') return false;
  size_t close = s.find(']');
  if (close == std::string_view::npos || close > 160) return false;
  std::string_view inner = s.substr(1, close - 1);
  std::string tokens = RankTokens(inner);
  const bool timestamp = inner.size() >= 4 && IsDigit(inner[0]) && IsDigit(inner[1]) && IsDigit(inner[2]);
  const bool glog = inner.size() >= 6 && (inner[0] == 'I' || inner[0] == 'W' || inner[0] == 'E' || inner[0] == 'F') &&
                    IsDigit(inner[1]) && IsDigit(inner[2]) && IsDigit(inner[3]);  // "E0601", "E601"

  if (tokens.empty() && !timestamp && !glog) return false;
  if (!tokens.empty()) rank = tokens;
  if (glog) {
    level = inner[0] == 'I' ? LogLevel::kInfo : inner[0] == 'W' ? LogLevel::kWarning : LogLevel::kError;
  }
  s.remove_prefix(close + 1);
  DropOneSpace(s);
  return true;
}

// vLLM: "INFO 06-01 10:00:00 [core.py:58] msg", "WARNING 06-01 10:00:00.123 [x.py:1] msg".
bool PeelVllmLevel(std::string_view& s, LogLevel& level) {
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp > 8) return false;
  LogLevel l = LevelFromWord(s.substr(0, sp));
  if (l == LogLevel::kNone) return false;
  std::string_view rest = s.substr(sp + 1);
  // "MM-DD HH:MM:SS"
  if (rest.size() < 14 || !IsDigit(rest[0]) || !IsDigit(rest[1]) || rest[2] != '-' || rest[5] != ' ' ||
      rest[8] != ':')
    return false;
  size_t i = 14;
  if (i < rest.size() && rest[i] == '.') {
    ++i;
    while (i < rest.size() && IsDigit(rest[i])) ++i;
  }
  if (i < rest.size() && rest[i] == ' ') ++i;
  if (i < rest.size() && rest[i] == '[') {
    size_t close = rest.find(']', i);
    if (close != std::string_view::npos && close - i < 80) i = close + 1;
  } else if (size_t close = rest.find("] ", i); close != std::string_view::npos && close - i < 80 &&
                                                   rest.substr(i, close - i).find(' ') == std::string_view::npos &&
                                                   rest.substr(i, close - i).find(".py:") != std::string_view::npos) {
    i = close + 1;  // vLLM before 0.7: "ERROR 01-11 13:09:40 engine.py:366] msg"
  }
  level = l;
  s = rest.substr(i);
  DropOneSpace(s);
  return true;
}

// Python logging's default format: "WARNING:root:msg", "ERROR:sglang.srt:msg".
bool PeelPythonLogging(std::string_view& s, LogLevel& level) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon > 8) return false;
  LogLevel l = LevelFromWord(s.substr(0, colon));
  if (l == LogLevel::kNone) return false;
  level = l;
  std::string_view rest = s.substr(colon + 1);
  size_t next = rest.find(':');
  if (next != std::string_view::npos && next < 60 && rest.substr(0, next).find(' ') == std::string_view::npos)
    rest.remove_prefix(next + 1);
  s = rest;
  DropOneSpace(s);
  return true;
}

// NCCL debug lines: "node1:2211:2390 [3] NCCL WARN ..." -> rank "gpu3" unless a rank is known.
bool PeelNccl(std::string_view& s, std::string& rank) {
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp > 80) return false;
  std::string_view host = s.substr(0, sp);
  if (host.find(':') == std::string_view::npos || host.find(':') == host.rfind(':')) return false;
  std::string_view rest = s.substr(sp + 1);
  if (rest.size() < 4 || rest[0] != '[') return false;
  size_t i = 1;
  while (i < rest.size() && IsDigit(rest[i])) ++i;
  if (i == 1 || i >= rest.size() || rest[i] != ']') return false;
  // "[3] NCCL WARN ..." or "[3] transport/net_ib.cc:2118 NCCL WARN ...".
  const size_t nccl = rest.find(" NCCL", i);
  if (nccl == std::string_view::npos || nccl > i + 64) return false;
  if (rank.empty()) rank = "gpu" + std::string(rest.substr(1, i - 1));
  s = rest.substr(i + 2);
  return true;
}

// ISO timestamp: "2025-03-01 10:00:00,123 " / "2025-03-01T10:00:00.123Z ".
bool PeelIsoTime(std::string_view& s) {
  if (s.size() < 20 || !IsDigit(s[0]) || !IsDigit(s[3]) || s[4] != '-' || s[7] != '-' ||
      (s[10] != ' ' && s[10] != 'T') || s[13] != ':')
    return false;
  size_t i = 19;
  while (i < s.size() && s[i] != ' ') ++i;
  s.remove_prefix(i);
  DropOneSpace(s);
  // "- LEVEL -" of the common "%(asctime)s - %(name)s - %(levelname)s - " format is left in the
  // message; the level check below still sees it.
  return true;
}

// Bare glog / c10 prefix: "W1201 04:15:45.718000 90001 torch/distributed/elastic/api.py:900] msg".
bool PeelGlogBare(std::string_view& s, LogLevel& level) {
  if (s.size() < 16 || !(s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') || !IsDigit(s[1]) ||
      !IsDigit(s[2]) || !IsDigit(s[3]) || !IsDigit(s[4]) || s[5] != ' ' || !IsDigit(s[6]) || s[8] != ':')
    return false;
  size_t close = s.find("] ");
  if (close == std::string_view::npos || close > 200) return false;
  level = s[0] == 'I' ? LogLevel::kInfo : s[0] == 'W' ? LogLevel::kWarning : LogLevel::kError;
  s.remove_prefix(close + 2);
  return true;
}

// pytest's failure report: "E       RuntimeError: msg" / "E   NotImplementedError: msg". The
// message keeps no indentation (pytest indents the whole exception text uniformly).
bool PeelPytestE(std::string_view& s, bool& test_report) {
  if (s.size() < 4 || s[0] != 'E' || s[1] != ' ' || s[2] != ' ' || s[3] != ' ') return false;
  s.remove_prefix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  test_report = true;
  return true;
}

bool PeelAnsi(std::string_view& s) {
  if (s.empty() || s[0] != '\x1b') return false;
  size_t i = 1;
  if (i < s.size() && s[i] == '[') {
    ++i;
    while (i < s.size() && !(s[i] >= '@' && s[i] <= '~')) ++i;
    if (i < s.size()) ++i;
  }
  s.remove_prefix(i);
  return true;
}

}  // namespace

LogLine ParseLogLine(std::string_view raw) {
  LogLine out;
  std::string_view s = raw;
  for (int round = 0; round < 8; ++round) {
    if (PeelAnsi(s) || PeelTorchrun(s, out.rank) || PeelPidTag(s, out.rank) ||
        PeelBracket(s, out.rank, out.level) || PeelVllmLevel(s, out.level) || PeelNccl(s, out.rank) ||
        PeelIsoTime(s) || PeelGlogBare(s, out.level) || (!out.test_report && PeelPytestE(s, out.test_report)))
      continue;
    if (IsUpper(s.empty() ? ' ' : s[0]) && PeelPythonLogging(s, out.level)) continue;
    break;
  }
  out.message = s;
  if (out.level == LogLevel::kNone) {
    // "Warning: ...", "[WARNING] ...", "UserWarning: ..." style messages.
    std::string head = Lower(s.substr(0, 24));
    if (head.starts_with("warning") || head.starts_with("[warning") || head.starts_with("warn:") ||
        head.find("warning:") != std::string::npos)
      out.level = LogLevel::kWarning;
    else if (head.starts_with("info") || head.starts_with("[info") || head.starts_with("nccl info"))
      out.level = LogLevel::kInfo;
  }
  return out;
}

}  // namespace gauntlet::classifier
