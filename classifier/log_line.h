// Splits one log line into who wrote it (rank / process), its log level and the message, for the
// prefixes SGLang, vLLM, torchrun, glog (PyTorch C++), NCCL and Python logging put in front.
// Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace gauntlet::classifier {

enum class LogLevel { kNone, kDebug, kInfo, kWarning, kError };

struct LogLine {
  // Stable key of the writer: "rank3" ([rank3]:, rank=3), "tp2" ([... TP2], (TP2 pid=..)),
  // "dp0-tp1", "enginecore_dp0" ((EngineCore_DP0 pid=..)), "gpu3" (NCCL "[3]"); "" if none.
  std::string rank;
  LogLevel level = LogLevel::kNone;
  // The line after the recognised prefixes; the single separator space after a prefix is removed
  // so Python traceback indentation survives ("  File ...").
  std::string_view message;
  // The line is one of pytest's "E   " lines: the failure report of one test (the "E" and its
  // indentation are not part of the message).
  bool test_report = false;
};

LogLine ParseLogLine(std::string_view raw);

}  // namespace gauntlet::classifier
