#include "workers/classifier/traceback.h"

#include <array>
#include <cctype>

#include "workers/classifier/normalize.h"

namespace gauntlet {
namespace {

constexpr int kMaxJunkLines = 64;
// A traceback longer than this was never going to end (e.g. an indented dump after a stray
// "Traceback" line); give up so the classifier stops parsing every line.
constexpr int kMaxTracebackLines = 4000;

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool LooksLikeExceptionName(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kSuffixes = {
      "Error", "Exception", "Exit", "Interrupt", "Failed", "Failure", "Warning", "Timeout", "Iteration"};
  for (auto suf : kSuffixes)
    if (name.size() > suf.size() - 1 && name.ends_with(suf)) return true;
  static constexpr std::array<std::string_view, 4> kKnown = {"OutOfResources", "Unsupported",
                                                             "InternalTorchDynamoError", "CompilationError"};
  for (auto k : kKnown)
    if (name == k) return true;
  return name.find("Error") != std::string_view::npos || name.find("Exception") != std::string_view::npos;
}

// Dispatch and decorator frames that sit between any two real frames: the signature names the
// innermost frame that is not one of these, so it says which layer or op failed.
bool IsGlueFrame(std::string_view path) {
  static constexpr std::array<std::string_view, 10> kGlue = {
      "torch/_ops.py", "torch/nn/modules/module.py", "torch/utils/_contextlib.py", "/contextlib.py",
      "/functools.py", "torch/_dynamo/eval_frame.py", "torch/_library/custom_ops.py", "torch/_compile.py",
      "torch/autograd/function.py", "torch/_library/autograd.py"};
  for (auto g : kGlue)
    if (path.ends_with(g)) return true;
  return false;
}

}  // namespace

std::optional<ExceptionLine> ParseExceptionLine(std::string_view msg) {
  if (msg.empty() || !IsIdentStart(msg[0])) return std::nullopt;
  size_t i = 0;
  size_t last_dot = std::string_view::npos;
  while (i < msg.size()) {
    if (!IsIdentStart(msg[i])) return std::nullopt;
    while (i < msg.size() && IsIdentChar(msg[i])) ++i;
    if (i < msg.size() && msg[i] == '.' && i + 1 < msg.size() && IsIdentStart(msg[i + 1])) {
      last_dot = i;
      ++i;
      continue;
    }
    break;
  }
  std::string_view dotted = msg.substr(0, i);
  std::string_view name = last_dot == std::string_view::npos ? dotted : dotted.substr(last_dot + 1);
  if (!LooksLikeExceptionName(name)) return std::nullopt;
  std::string_view rest = msg.substr(i);
  if (!TrimSpace(rest).empty()) {
    if (rest[0] != ':') return std::nullopt;
    rest.remove_prefix(1);
  }
  return ExceptionLine{std::string(name), TrimSpace(rest)};
}

TracebackTracker::Role TracebackTracker::Observe(std::string_view msg) {
  if (msg.find("Traceback (most recent call last)") != std::string_view::npos) {
    open_ = true;
    frames_ = 0;
    junk_ = 0;
    lines_ = 0;
    innermost_.clear();
    innermost_glue_.clear();
    return Role::kOpener;
  }
  if (!open_) return Role::kNone;
  if (++lines_ > kMaxTracebackLines) {
    open_ = false;
    return Role::kOther;
  }
  std::string_view t = TrimSpace(msg);
  if (t.starts_with("File \"")) {
    size_t end = t.find('"', 6);
    if (end != std::string_view::npos) {
      std::string_view path = t.substr(6, end - 6);
      (IsGlueFrame(path) ? innermost_glue_ : innermost_) = std::string(PathBasename(path));
    }
    ++frames_;
    return Role::kFrame;
  }
  if (t.empty() || std::isspace(static_cast<unsigned char>(msg[0]))) return Role::kBody;
  if (frames_ > 0) {
    if (ParseExceptionLine(msg)) {
      open_ = false;
      return Role::kException;
    }
  }
  if (++junk_ > kMaxJunkLines) open_ = false;
  return Role::kOther;
}

}  // namespace gauntlet
