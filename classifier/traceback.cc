#include "classifier/traceback.h"

#include <array>
#include <cctype>

#include "classifier/normalize.h"

namespace gauntlet::classifier {
namespace {

constexpr int kMaxJunkLines = 64;
// A traceback longer than this was never going to end (e.g. an indented dump after a stray
// "Traceback" line); give up so the classifier stops parsing every line.
constexpr int kMaxTracebackLines = 4000;
// "ImportError:" then the message: Python prints nothing in between, dynamo at most one blank line.
constexpr int kMaxBlankBeforeContinuation = 2;
constexpr std::string_view kOpener = "Traceback (most recent call last)";

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

constexpr std::array<std::string_view, 9> kSuffixes = {"Error",   "Exception", "Exit",    "Interrupt", "Failed",
                                                       "Failure", "Warning",   "Timeout", "Iteration"};

bool LooksLikeExceptionName(std::string_view name) {
  for (auto suf : kSuffixes)
    if (name.size() > suf.size() - 1 && name.ends_with(suf)) return true;
  static constexpr std::array<std::string_view, 5> kKnown = {"OutOfResources", "Unsupported", "InvalidBackend",
                                                             "InternalTorchDynamoError", "CompilationError"};
  for (auto k : kKnown)
    if (name == k) return true;
  return name.find("Error") != std::string_view::npos || name.find("Exception") != std::string_view::npos;
}

// "torch._dynamo.exc.InvalidBackend", "jax._src.source_info_util.JaxStackTraceBeforeTransformation":
// Python prints a non-builtin class with its module, so a lowercase module path in front of a
// CamelCase name is an exception class even without an Error suffix.
bool IsQualifiedClass(std::string_view dotted, std::string_view name) {
  if (dotted.size() == name.size()) return false;
  const char first = dotted[0];
  if (!(std::islower(static_cast<unsigned char>(first)) || first == '_')) return false;
  if (!std::isupper(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (std::islower(static_cast<unsigned char>(c))) return true;
  return false;
}

// A name that says which exception it is: not a bare "Error" / "Exception" / "Failed", which as
// the start of a message is just a word ("RuntimeError: Error: ...").
bool IsSpecificExceptionName(std::string_view name) {
  for (auto suf : kSuffixes)
    if (name == suf) return false;
  return true;
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

// Installed code: Python's install scheme puts third-party packages under site-packages (pip) or
// dist-packages (Debian) and the standard library under lib/python3.X (sysconfig "purelib",
// "platlib", "stdlib"); a framework run from its source tree keeps its package folder
// (torch/_inductor, jax/_src, triton/). A test file or a user's script is none of these.
bool IsLibraryPath(std::string_view path) {
  static constexpr std::array<std::string_view, 9> kLibraryDirs = {
      "site-packages/", "dist-packages/", "/lib/python3", "/torch/", "/jax/_src/", "/jaxlib/", "/triton/",
      "/tensorflow/python/", "/transformers/"};
  for (auto d : kLibraryDirs)
    if (path.find(d) != std::string_view::npos) return true;
  return false;
}

// Python 3.11 prints an exception group inside a gutter:
//   "  + Exception Group Traceback ...", "  |   File ...", "  | ExceptionGroup: ...",
//   "  +-+---------------- 1 ----------------", "    | ValueError: x", "    +------------".
// Returns the line without its gutter ("" for a separator), or nullopt when it has none.
std::optional<std::string_view> StripGroupGutter(std::string_view msg) {
  size_t i = 0;
  while (i < msg.size() && msg[i] == ' ') ++i;
  if (i == msg.size() || (msg[i] != '|' && msg[i] != '+')) return std::nullopt;
  const bool bar = msg[i] == '|';
  ++i;
  if (i < msg.size() && msg[i] == ' ') return msg.substr(i + 1);
  if (bar && i == msg.size()) return std::string_view{};
  return bar ? std::optional<std::string_view>(msg.substr(i)) : std::optional<std::string_view>(std::string_view{});
}

bool HasAlnum(std::string_view s) {
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return false;
}

}  // namespace

std::optional<ExceptionLine> BareException(std::string_view msg) {
  if (msg.empty() || IsSpace(msg[0])) return std::nullopt;
  std::optional<ExceptionLine> e = ParseExceptionLine(msg);
  // Not a bare "Error:" (a word), not a warning category, and a "Type: ..." form: a lone word
  // ("KeyboardInterrupt", "Failed") on a line of its own is no report.
  if (!e || !IsSpecificExceptionName(e->type) || e->type.ends_with("Warning")) return std::nullopt;
  if (TrimSpace(msg).find(':') == std::string_view::npos) return std::nullopt;
  return e;
}

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
  std::string_view rest = msg.substr(i);
  const bool colon = !rest.empty() && rest[0] == ':';
  if (!LooksLikeExceptionName(name) && !(colon && IsQualifiedClass(dotted, name))) return std::nullopt;
  if (!TrimSpace(rest).empty()) {
    if (!colon) return std::nullopt;
    rest.remove_prefix(1);
  }
  return ExceptionLine{std::string(name), std::string(TrimSpace(rest))};
}

ExceptionLine UnwrapCause(ExceptionLine e) {
  // Bounded: each step strips at least a type name off the message.
  for (int depth = 0; depth < 4; ++depth) {
    std::string_view m = e.message;
    if (size_t r = m.find("raised:"); r != std::string_view::npos) m = TrimSpace(m.substr(r + 7));
    std::optional<ExceptionLine> inner = ParseExceptionLine(m);
    if (!inner || !IsSpecificExceptionName(inner->type)) break;
    e = std::move(*inner);
  }
  return e;
}

bool IsWrapperException(const ExceptionLine& e) {
  // ProcessRaisedException: torch.multiprocessing's parent reporting a child's traceback, which
  // follows it ("-- Process 1 terminated with the following error:"; plain "Exception:" before 1.9).
  static constexpr std::array<std::string_view, 6> kWrappers = {
      "ExceptionGroup", "BaseExceptionGroup", "JaxStackTraceBeforeTransformation", "UnfilteredStackTrace",
      "SimplifiedTraceback", "ProcessRaisedException"};
  for (auto w : kWrappers)
    if (e.type == w) return true;
  if (std::string_view(e.message).starts_with("-- Process ")) return true;
  return std::string_view(e.message).ends_with("raised:");
}

TracebackTracker::Role TracebackTracker::Observe(std::string_view msg, LogLevel level) {
  if (msg.find("Exception Group Traceback") != std::string_view::npos) group_ = true;
  if (group_) {
    if (std::optional<std::string_view> inner = StripGroupGutter(msg)) {
      msg = *inner;
    } else if (!TrimSpace(msg).empty()) {
      group_ = false;  // the group's frame has ended
    }
  }
  if (msg.find(kOpener) != std::string_view::npos) {
    state_ = State::kOpen;
    frames_ = 0;
    junk_ = 0;
    lines_ = 0;
    innermost_.clear();
    innermost_glue_.clear();
    innermost_library_ = innermost_glue_library_ = false;
    return Role::kOpener;
  }
  switch (state_) {
    case State::kOpen:
      return InsideFrames(msg);
    case State::kAwaitContinuation:
      return Continue(msg, level);
    case State::kAfterException:
      state_ = State::kClosed;
      if (!group_ && !TrimSpace(msg).empty() && ParseExceptionLine(TrimSpace(msg))) return Role::kBody;
      break;
    case State::kClosed:
      break;
  }
  // A group's sub-exceptions raised without a traceback print only their exception line.
  if (group_) {
    if (!msg.empty() && !IsSpace(msg[0]))
      if (std::optional<ExceptionLine> e = ParseExceptionLine(msg)) return Complete(std::move(*e), false);
    return Role::kBody;
  }
  // An exception line with no traceback before it: a tail whose head was cut, a pasted excerpt,
  // pytest's "E" lines, a framework that logs only "Type: message". It is judged like any other.
  const bool notice = level == LogLevel::kInfo || level == LogLevel::kDebug || level == LogLevel::kWarning;
  if (std::optional<ExceptionLine> e = notice ? std::nullopt : BareException(msg)) {
    innermost_.clear();
    innermost_glue_.clear();
    innermost_library_ = innermost_glue_library_ = false;
    return Complete(std::move(*e), TrimSpace(msg).ends_with(':'));
  }
  return Role::kNone;
}

TracebackTracker::Role TracebackTracker::InsideFrames(std::string_view msg) {
  if (++lines_ > kMaxTracebackLines) {
    state_ = State::kClosed;
    return Role::kOther;
  }
  std::string_view t = TrimSpace(msg);
  if (t.starts_with("File \"")) {
    size_t end = t.find('"', 6);
    if (end != std::string_view::npos) {
      std::string_view path = t.substr(6, end - 6);
      const bool glue = IsGlueFrame(path);
      (glue ? innermost_glue_ : innermost_) = std::string(PathBasename(path));
      (glue ? innermost_glue_library_ : innermost_library_) = IsLibraryPath(path);
    }
    ++frames_;
    return Role::kFrame;
  }
  if (t.empty() || IsSpace(msg[0])) return Role::kBody;
  if (frames_ > 0) {
    if (std::optional<ExceptionLine> e = ParseExceptionLine(msg)) return Complete(std::move(*e), t.ends_with(':'));
  }
  if (++junk_ > kMaxJunkLines) state_ = State::kClosed;
  return Role::kOther;
}

// `open_ended`: the line ended with ':' ("ImportError:", "... backend='tvm' raised:"), so the next
// line may carry the cause.
TracebackTracker::Role TracebackTracker::Complete(ExceptionLine e, bool open_ended) {
  exc_ = UnwrapCause(std::move(e));
  continued_ = false;
  blank_ = 0;
  state_ = open_ended ? State::kAwaitContinuation : State::kAfterException;
  return Role::kException;
}

// The line after an open-ended exception line. An exception line there is the cause and replaces
// the wrapper; when the wrapper had no message at all ("ImportError:"), any other text line is
// its message. Indented, separator-only and INFO/WARNING lines are none of these: the exception
// stands as it was.
TracebackTracker::Role TracebackTracker::Continue(std::string_view msg, LogLevel level) {
  std::string_view t = TrimSpace(msg);
  if (t.empty()) {
    if (++blank_ > kMaxBlankBeforeContinuation) state_ = State::kClosed;
    return Role::kBody;
  }
  state_ = State::kClosed;
  const bool notice = level == LogLevel::kInfo || level == LogLevel::kDebug || level == LogLevel::kWarning;
  if (notice || IsSpace(msg[0]) || !HasAlnum(t)) return Role::kOther;
  if (std::optional<ExceptionLine> cause = ParseExceptionLine(t)) return Complete(std::move(*cause), t.ends_with(':'));
  if (!exc_.message.empty()) return Role::kOther;
  exc_.message = std::string(t);
  continued_ = true;
  return Role::kException;
}

}  // namespace gauntlet::classifier
