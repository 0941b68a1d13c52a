#include "classifier/rank_triage.h"

#include <cctype>

#include "classifier/normalize.h"
#include "core/signal_names.h"

namespace gauntlet::classifier {
namespace {

bool IsAsciiDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads an unsigned decimal at s[i...]; -1 when there is none or it is absurdly long.
int ReadInt(std::string_view s, size_t& i) {
  const size_t start = i;
  int v = 0;
  while (i < s.size() && IsAsciiDigit(s[i]) && i - start < 7) v = v * 10 + (s[i++] - '0');
  return i == start ? -1 : v;
}

std::string_view AfterColon(std::string_view s) {
  size_t c = s.find(':');
  return c == std::string_view::npos ? std::string_view() : TrimSpace(s.substr(c + 1));
}

}  // namespace

int TorchrunRankPrefix(std::string_view line) {
  if (line.size() < 8 || line.compare(0, 5, "[rank") != 0) return -1;
  size_t i = 5;
  int r = ReadInt(line, i);
  if (r < 0 || i + 1 >= line.size() || line[i] != ']' || line[i + 1] != ':') return -1;
  return r;
}

int SpawnFailedProcess(std::string_view msg) {
  msg = TrimSpace(msg);
  constexpr std::string_view kHead = "-- Process ";
  constexpr std::string_view kTail = " terminated with the following error:";
  if (!msg.starts_with(kHead)) return -1;
  size_t i = kHead.size();
  int p = ReadInt(msg, i);
  if (p < 0 || msg.substr(i) != kTail) return -1;
  return p;
}

std::optional<SpawnExit> ParseSpawnExit(std::string_view msg) {
  msg = TrimSpace(msg);
  constexpr std::string_view kHead = "process ";
  if (!msg.starts_with(kHead)) return std::nullopt;
  size_t i = kHead.size();
  SpawnExit e;
  e.process = ReadInt(msg, i);
  if (e.process < 0) return std::nullopt;
  std::string_view rest = msg.substr(i);
  constexpr std::string_view kSignal = " terminated with signal ";
  constexpr std::string_view kCode = " terminated with exit code ";
  if (rest.starts_with(kSignal)) {
    std::string_view name = TrimSpace(rest.substr(kSignal.size()));
    e.signal = SignalNumber(name);
    if (!e.signal) return std::nullopt;
    return e;
  }
  if (rest.starts_with(kCode)) {
    size_t j = kCode.size();
    int code = ReadInt(rest, j);
    if (code < 0) return std::nullopt;
    e.exit_code = code;
    return e;
  }
  return std::nullopt;
}

void RootCauseReader::Start() {
  *this = RootCauseReader();
  active_ = true;
}

void RootCauseReader::Observe(std::string_view line) {
  if (!active_) return;
  std::string_view t = TrimSpace(line);
  if (++lines_ > 200 || t.starts_with("=====")) {
    active_ = false;
    done_ = true;
    return;
  }
  // The fields are "  name      : value", padded to one column: "rank      : 1 (local_rank: 1)",
  // "exitcode  : -11 (pid: 4242)", "traceback : Signal 11 (SIGSEGV) received by PID 4242".
  if (t.starts_with("rank ") || t.starts_with("rank:")) {
    std::string_view v = AfterColon(t);
    size_t i = 0;
    rank_ = ReadInt(v, i);
  } else if (t.starts_with("exitcode")) {
    std::string_view v = AfterColon(t);
    size_t i = 0;
    const bool neg = !v.empty() && v[0] == '-';
    if (neg) i = 1;
    int code = ReadInt(v, i);
    if (code >= 0) exitcode_ = neg ? -code : code;
    evidence_ = TrimEvidence(t);
  } else if (t.starts_with("traceback") && t.find("Signal ") != std::string_view::npos) {
    evidence_ = TrimEvidence(t);
  } else if (t.starts_with("traceback") && (AfterColon(t).empty() || AfterColon(t).starts_with("Traceback"))) {
    // "  traceback :" then the error file's traceback, indented two spaces, up to the block's end.
    reprint_ = true;
  }
}

}  // namespace gauntlet::classifier
