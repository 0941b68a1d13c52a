// Python traceback recognition: which lines open a traceback, which are frames, and which line
// completes the exception that ends it. One tracker per rank, because ranks interleave their
// tracebacks in one log. Not thread-safe (one per Classifier).
//
// The final exception takes several shapes in real logs, and all of them end in one
// ExceptionLine (type + message) for the rules to read:
//   * "RuntimeError: msg", module-qualified "torch._dynamo.exc.InvalidBackend: msg" (no Error suffix);
//   * a wrapper whose cause follows on the next line ("BackendCompilerFailed: backend='tvm' raised:"
//     then "ModuleNotFoundError: No module named 'tvm'") or whose message does
//     ("ImportError:" then "LlamaTokenizer requires the SentencePiece library ...");
//   * a wrapper that carries the cause in its message
//     ("JaxStackTraceBeforeTransformation: NotImplementedError: ...");
//   * Python 3.11 exception groups, printed inside a "  | " / "  +-+---- 1 ----" gutter.
// Trailing notes ("--------------------", "For simplicity, JAX has removed ...") come after the
// exception line and are plain lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "classifier/log_line.h"

namespace gauntlet::classifier {

struct ExceptionLine {
  std::string type;     // last dotted component: "torch.OutOfMemoryError" -> "OutOfMemoryError"
  std::string message;  // text after "Type: " (may be empty)
};

// Recognises "Type: message" / "Type" where Type looks like a Python exception class: a dotted
// identifier ending in Error, Exception, Exit, Interrupt, Failed, ..., or a module-qualified
// CamelCase class followed by ": " ("torch._dynamo.exc.Unsupported: ...").
std::optional<ExceptionLine> ParseExceptionLine(std::string_view msg);

// An exception line that stands without a traceback ("NotImplementedError: x" as the last line of
// a cut log, after pytest's "E"): a specific exception type (not a bare "Error", not a *Warning)
// followed by ':'; nullopt otherwise.
std::optional<ExceptionLine> BareException(std::string_view msg);

// The exception a wrapper carries in its own message, if any: "JaxStackTraceBeforeTransformation:
// NotImplementedError: x" and "BackendCompilerFailed: backend='inductor' raised: RuntimeError: x"
// both give the inner exception; anything else comes back unchanged.
ExceptionLine UnwrapCause(ExceptionLine e);

// Exceptions that only wrap the real one, which the log prints after (exception groups, dynamo's
// "raised:" wrapper, JAX's stack-trace notes): a consequence, never the root cause.
bool IsWrapperException(const ExceptionLine& e);

class TracebackTracker {
 public:
  enum class Role { kNone, kOpener, kFrame, kBody, kException, kOther };

  // Feeds one message (prefix already removed) and its log level. kException means this line
  // completes an exception: read it with exception(). Lines at INFO/DEBUG/WARNING level never
  // continue an exception's message.
  Role Observe(std::string_view msg, LogLevel level = LogLevel::kNone);
  // True while later lines may still belong to a traceback (frames, an exception's continuation,
  // an exception group): the classifier must feed them.
  bool open() const { return state_ != State::kClosed || group_; }
  // The exception the last kException line completed (cause or continuation already applied).
  const ExceptionLine& exception() const { return exc_; }
  // True when that exception's text is not the line itself: the message came from the previous
  // line plus this one, so rules must read "Type: message" rather than the raw line.
  bool exception_continued() const { return continued_; }
  // Basename of the innermost (last printed) frame's file, e.g. "modelopt_quant.py", skipping
  // torch dispatch/decorator glue (torch/_ops.py, nn/modules/module.py...) unless that is all there is.
  const std::string& innermost_file() const { return innermost_.empty() ? innermost_glue_ : innermost_; }
  // True when that frame's file is installed library code (site-packages, dist-packages, the
  // standard library, a framework's own package tree): an assertion there is the library's own
  // invariant, not a check of the program's result.
  bool innermost_in_library() const { return innermost_.empty() ? innermost_glue_library_ : innermost_library_; }

 private:
  // kOpen: inside frames. kAwaitContinuation: an exception line ended with "Type:" or "...:";
  // its cause or the rest of its message is on the next non-blank line.
  // kAfterException: the line right after a completed exception, which continues a multi-line
  // message even when it looks like an exception itself (NCCL's "ncclRemoteError: ..." after
  // DistBackendError's line); one line, then closed.
  enum class State { kClosed, kOpen, kAwaitContinuation, kAfterException };

  Role Complete(ExceptionLine e, bool open_ended);
  Role Continue(std::string_view msg, LogLevel level);
  Role InsideFrames(std::string_view msg);

  State state_ = State::kClosed;
  bool group_ = false;  // inside an exception group's gutter
  int frames_ = 0;
  int junk_ = 0;   // unrelated lines seen while open (interleaved output); gives up after a while
  int lines_ = 0;  // all lines seen while open
  int blank_ = 0;  // blank lines seen while awaiting a continuation
  ExceptionLine exc_;
  bool continued_ = false;
  std::string innermost_;
  std::string innermost_glue_;
  bool innermost_library_ = false, innermost_glue_library_ = false;
};

}  // namespace gauntlet::classifier
