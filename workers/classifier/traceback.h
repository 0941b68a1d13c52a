// Python traceback recognition: which lines open a traceback, which are frames, and which one is
// the exception line ("RuntimeError: message") that ends it. One tracker per rank, because ranks
// interleave their tracebacks in one log. Not thread-safe (one per Classifier).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gauntlet {

struct ExceptionLine {
  std::string type;          // last dotted component: "torch.OutOfMemoryError" -> "OutOfMemoryError"
  std::string_view message;  // text after "Type: " (may be empty); views into the parsed line
};

// Recognises "Type: message" / "Type" where Type looks like a Python exception class
// (dotted identifier ending in Error, Exception, Exit, Interrupt, Failed, ...).
std::optional<ExceptionLine> ParseExceptionLine(std::string_view msg);

class TracebackTracker {
 public:
  enum class Role { kNone, kOpener, kFrame, kBody, kException, kOther };

  // Feeds one message (prefix already removed). kException means this line ends the traceback.
  Role Observe(std::string_view msg);
  bool open() const { return open_; }
  // Basename of the innermost (last printed) frame's file, e.g. "modelopt_quant.py", skipping
  // torch dispatch/decorator glue (torch/_ops.py, nn/modules/module.py...) unless that is all there is.
  const std::string& innermost_file() const { return innermost_.empty() ? innermost_glue_ : innermost_; }

 private:
  bool open_ = false;
  int frames_ = 0;
  int junk_ = 0;   // unrelated lines seen while open (interleaved output); gives up after a while
  int lines_ = 0;  // all lines seen while open
  std::string innermost_;
  std::string innermost_glue_;
};

}  // namespace gauntlet
